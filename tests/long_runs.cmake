# Long runs with a bounded trace (docs/long-runs.md, MLPROF_MAX_MB): a
# 60 000-step run stays within 1 MiB and its report counts every step; a
# SIGKILL in the middle of a bounded run leaves a readable trace.
add_executable(long_steps ${CMAKE_CURRENT_LIST_DIR}/progs/long_steps.c)
target_link_libraries(long_steps PRIVATE mlprof_shared)
set_target_properties(long_steps PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)

if(TARGET mlprof_cli)
  add_test(NAME long_runs
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/long_runs.sh $<TARGET_FILE:mlprof_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/progs ${CMAKE_CURRENT_BINARY_DIR}/tmp/long_runs)
  set_tests_properties(long_runs PROPERTIES TIMEOUT 300)
endif()
