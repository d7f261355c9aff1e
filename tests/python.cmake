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

# Python frames in CPU samples of an unmodified torch script under `mlprof
# run` (needs CPython's internal headers at build time and torch).
if(MLPROF_PYTHON3 AND NOT MLPROF_SANITIZE AND MLPROF_HAVE_PYFRAMES AND TARGET mlprof_cli)
  execute_process(COMMAND ${MLPROF_PYTHON3} -c "import torch" RESULT_VARIABLE _torch_rc OUTPUT_QUIET ERROR_QUIET)
  if(_torch_rc EQUAL 0)
    add_test(NAME python_frames
      COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_pyframes.py
              $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
    set_tests_properties(python_frames PROPERTIES TIMEOUT 900)
    # the operator view of an unmodified MLP training script
    add_test(NAME python_operators
      COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_operators.py
              $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
    set_tests_properties(python_operators PROPERTIES TIMEOUT 900)
    # allocation sites with their operator and Python line; retained vs leaked
    add_test(NAME python_torch_memory
      COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_torch_memory.py
              $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
    set_tests_properties(python_torch_memory PROPERTIES TIMEOUT 900)
    # forked DataLoader workers sampled from the parent
    add_test(NAME python_dl_workers
      COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_dl_workers.py
              $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
    set_tests_properties(python_dl_workers PROPERTIES TIMEOUT 900)
  endif()
endif()

# torch.profiler's way of working (mlprof.torch.profile), record_function
# blocks as ranges (binding and `mlprof run`), the package's version and
# its offline pip install: needs torch, not the Python frames.
if(MLPROF_PYTHON3 AND NOT MLPROF_SANITIZE AND TARGET mlprof_cli)
  execute_process(COMMAND ${MLPROF_PYTHON3} -c "import torch" RESULT_VARIABLE _torch_rc2 OUTPUT_QUIET ERROR_QUIET)
  if(_torch_rc2 EQUAL 0)
    add_test(NAME python_torch_profile
      COMMAND ${MLPROF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_torch_profile.py)
    set_tests_properties(python_torch_profile PROPERTIES TIMEOUT 900
      ENVIRONMENT "MLPROF_LIBRARY=$<TARGET_FILE:mlprof_shared>;MLPROF_PYTHON_DIR=${PROJECT_SOURCE_DIR}/python;MLPROF_CLI=$<TARGET_FILE:mlprof_cli>;MLPROF_PROJECT_VERSION=${PROJECT_VERSION}")
  endif()
endif()
