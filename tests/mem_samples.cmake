# Samples inside glibc's malloc and free keep only the interrupted
# instruction (alloc_samples.sh): the allocator's mark, end to end, under
# `mlprof run` with the library preloaded. Not under the sanitizers (the
# preload is the point).
if(TARGET mlprof_cli AND TARGET mem_prog AND NOT MLPROF_SANITIZE)
  add_test(NAME alloc_samples
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/alloc_samples.sh $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared>
            $<TARGET_FILE:mem_prog> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(alloc_samples PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
