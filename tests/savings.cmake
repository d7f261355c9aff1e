# Predicted savings (docs/report-schema.md): planted causes of slow steps
# (progs/savings_prog.c), each run with and without its cause; the saving
# predicted from the slow run must hold within ±25 % (savings_check.c).
if(NOT TARGET savings_prog) # bench/savings.cmake defines it when the benchmarks are built
  add_executable(savings_prog ${CMAKE_CURRENT_LIST_DIR}/progs/savings_prog.c)
  target_compile_definitions(savings_prog PRIVATE _GNU_SOURCE)
  target_link_libraries(savings_prog PRIVATE mlprof_shared Threads::Threads)
endif()
add_executable(savings_check ${CMAKE_CURRENT_LIST_DIR}/savings_check.c)
target_compile_definitions(savings_check PRIVATE _GNU_SOURCE)
target_include_directories(savings_check PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(savings_check PRIVATE mlprof_static)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tmp/savings)
add_test(NAME savings_validation
  COMMAND savings_check $<TARGET_FILE:savings_prog> ${CMAKE_CURRENT_BINARY_DIR}/tmp/savings)
# Alone: the other tests ctest runs beside it would disturb the timing it judges.
set_tests_properties(savings_validation PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
