# Who writes the reports (README "Reports"): the launcher under `mlprof run`,
# the detached mlprof command for a linked program, the library itself as the
# fallback; the program's exit never waits for the analysis, and a step
# schedule's captures stay bounded.
add_executable(report_host ${CMAKE_CURRENT_LIST_DIR}/progs/report_host.c)
target_link_libraries(report_host PRIVATE mlprof_shared)
set_target_properties(report_host PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)

if(TARGET mlprof_cli)
  add_test(NAME report_paths
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/report_paths.sh $<TARGET_FILE:mlprof_cli>
            $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/progs ${CMAKE_CURRENT_BINARY_DIR}/tmp/report_paths)
  set_tests_properties(report_paths PROPERTIES TIMEOUT 300)
endif()
