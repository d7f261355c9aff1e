# Python binding tests (python/mlprof) run by the system interpreter, which
# has Debian's python3-numpy and python3-torch. Not in sanitized builds: a
# sanitized libmlprof cannot be loaded into an uninstrumented interpreter.
find_program(MLPROF_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(MLPROF_PYTHON3 AND NOT MLPROF_SANITIZE)
  add_test(NAME python_binding
    COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_binding.py)
  set_tests_properties(python_binding PROPERTIES TIMEOUT 900
    ENVIRONMENT "MLPROF_LIBRARY=$<TARGET_FILE:mlprof_shared>;MLPROF_PYTHON_DIR=${PROJECT_SOURCE_DIR}/python;MLPROF_CLI=$<TARGET_FILE:mlprof_cli>")
endif()
