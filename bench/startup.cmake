# startup.cmake — start-up and exit cost of mlprof run and of a linked
# program (bench_startup.c), against bare runs measured in the same run.
if(TARGET mlprof_cli)
  add_executable(startup_prog ${CMAKE_CURRENT_LIST_DIR}/startup_prog.c)
  target_link_libraries(startup_prog PRIVATE mlprof_shared)
  add_executable(startup_bare ${CMAKE_CURRENT_LIST_DIR}/startup_prog.c)
  target_compile_definitions(startup_bare PRIVATE MLPROF_DISABLED=1)
  target_include_directories(startup_bare PRIVATE ${PROJECT_SOURCE_DIR}/include)
  add_executable(bench_startup ${CMAKE_CURRENT_LIST_DIR}/bench_startup.c)
  target_compile_definitions(bench_startup PRIVATE _GNU_SOURCE
    MLPROF_CLI="$<TARGET_FILE:mlprof_cli>" MLPROF_CLI_FULL="$<TARGET_FILE:mlprof_cli_full>"
    MLPROF_LIB="$<TARGET_FILE:mlprof_shared>"
    STARTUP_PROG="$<TARGET_FILE:startup_prog>" STARTUP_BARE="$<TARGET_FILE:startup_bare>")
  add_dependencies(bench_startup startup_prog startup_bare mlprof_cli mlprof_cli_full mlprof_shared)
  list(APPEND MLPROF_BENCHES bench_startup)
endif()
