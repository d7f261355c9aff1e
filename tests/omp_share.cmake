# CPU sampling under contention against the program's own thread clocks
# (omp_share.sh): an OpenMP program that measures its kernels' CPU shares
# itself, run under `mlprof run` beside a busy loop. Needs OpenMP for C;
# not under the sanitizers (TSan does not know libgomp's synchronisation).
find_package(OpenMP COMPONENTS C QUIET)
if(OpenMP_C_FOUND AND TARGET mlprof_cli AND NOT MLPROF_SANITIZE)
  add_executable(omp_share ${CMAKE_CURRENT_LIST_DIR}/progs/omp_share.c)
  target_compile_options(omp_share PRIVATE -O2 -g -fno-omit-frame-pointer)
  target_link_libraries(omp_share PRIVATE OpenMP::OpenMP_C)
  set_target_properties(omp_share PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  add_test(NAME omp_share
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/omp_share.sh $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared>
            $<TARGET_FILE:omp_share> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(omp_share PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
