# A host that dlopens many shared libraries from its main thread while
# profiling starts must run as bare under `mlprof run`, 30 times in a row
# (dlopen_stress.sh): no unsafe dependency set-up on the profiler's threads.
add_executable(dlopen_stress ${CMAKE_CURRENT_LIST_DIR}/progs/dlopen_stress.c)
target_compile_definitions(dlopen_stress PRIVATE _GNU_SOURCE)
target_link_libraries(dlopen_stress PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(dlopen_stress PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
if(TARGET mlprof_cli AND NOT MLPROF_SANITIZE)
  add_test(NAME dlopen_stress
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dlopen_stress.sh $<TARGET_FILE:mlprof_cli>
            $<TARGET_FILE:mlprof_shared> $<TARGET_FILE:dlopen_stress> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(dlopen_stress PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
