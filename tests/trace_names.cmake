# Trace names and output folders (trace_names.sh): every image of a program
# that execs itself and every session of one process keeps its own trace,
# chained by previous_trace; another user's folder is never written into;
# reports are created 0600.
foreach(prog exec_self dlopen_cycles)
  add_executable(${prog} ${CMAKE_CURRENT_LIST_DIR}/progs/${prog}.c)
  target_compile_definitions(${prog} PRIVATE _GNU_SOURCE)
  target_link_libraries(${prog} PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
endforeach()

if(TARGET mlprof_cli)
  add_test(NAME trace_names
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/trace_names.sh $<TARGET_FILE:mlprof_cli>
            $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/progs ${CMAKE_CURRENT_BINARY_DIR}/tmp/trace_names)
  set_tests_properties(trace_names PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
