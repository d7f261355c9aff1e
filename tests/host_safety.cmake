# Host safety (docs/host-safety.md): fork and exec, crashes, a file size
# limit at exit, planted files and symlinks, live pages of dead processes.
add_executable(crash_steps ${CMAKE_CURRENT_LIST_DIR}/progs/crash_steps.c)
target_link_libraries(crash_steps PRIVATE mlprof_shared)
add_executable(fork_noexec ${CMAKE_CURRENT_LIST_DIR}/progs/fork_noexec.c)
target_compile_definitions(fork_noexec PRIVATE _GNU_SOURCE)
target_link_libraries(fork_noexec PRIVATE mlprof_shared Threads::Threads)
set_target_properties(crash_steps fork_noexec PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)

if(TARGET mlprof_cli)
  add_test(NAME host_safety
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/host_safety.sh $<TARGET_FILE:mlprof_cli>
            $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/progs ${CMAKE_CURRENT_BINARY_DIR}/tmp/host_safety)
  set_tests_properties(host_safety PROPERTIES TIMEOUT 300)
endif()
