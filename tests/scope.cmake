# Programs of test_scope.c (PROF_SCOPE, mlprof.hpp, the compile-out switch):
# api_calls, linked with libmlprof, is compared with the same source
# compiled by the test with -DMLPROF_DISABLED and no library; scope_cxx (when
# a C++ compiler exists) uses mlprof::Range and mlprof::Step from C++11.
if(TARGET test_scope)
  add_executable(api_calls ${CMAKE_CURRENT_LIST_DIR}/progs/api_calls.c)
  target_link_libraries(api_calls PRIVATE mlprof_shared)
  set_target_properties(api_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  add_dependencies(test_scope api_calls)
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    add_executable(scope_cxx ${CMAKE_CURRENT_LIST_DIR}/progs/scope_cxx.cpp)
    target_link_libraries(scope_cxx PRIVATE mlprof_shared)
    set_target_properties(scope_cxx PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
    add_dependencies(test_scope scope_cxx)
    target_compile_definitions(test_scope PRIVATE MLPROF_SCOPE_CXX=1)
  endif()
endif()
