# Real programs under `mlprof run`: each must print the same and end the
# same way as when run bare (real_programs.sh), and libmlprof must leave no
# signal handler behind when a program unloads it (dlclose_host).
foreach(prog sig_host fork_exec aborter dlclose_host)
  add_executable(${prog} ${CMAKE_CURRENT_LIST_DIR}/progs/${prog}.c)
  target_compile_definitions(${prog} PRIVATE _GNU_SOURCE)
  target_link_libraries(${prog} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
endforeach()

if(TARGET mlprof_cli)
  add_test(NAME real_programs
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/real_programs.sh $<TARGET_FILE:mlprof_cli>
            $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/progs ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(real_programs PROPERTIES TIMEOUT 900)
endif()

add_test(NAME signals_dlclose
  COMMAND dlclose_host $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/tmp/dlclose_host.mlpt)
set_tests_properties(signals_dlclose PROPERTIES TIMEOUT 60)
