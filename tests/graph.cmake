# The model graph end to end from Python: a two-branch PyTorch model's
# module graph in the JSON report, the DOT export and the HTML page (in
# headless Chromium when it is installed), and a generated 200-module model
# that must render folded. Run by the system interpreter (Debian's
# python3-torch); not in sanitized builds (see python.cmake).
find_program(MLPROF_GRAPH_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(MLPROF_GRAPH_PYTHON3 AND NOT MLPROF_SANITIZE)
  add_test(NAME python_graph
    COMMAND ${MLPROF_GRAPH_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_graph.py)
  set_tests_properties(python_graph PROPERTIES TIMEOUT 900
    ENVIRONMENT "MLPROF_LIBRARY=$<TARGET_FILE:mlprof_shared>;MLPROF_PYTHON_DIR=${PROJECT_SOURCE_DIR}/python;MLPROF_CLI=$<TARGET_FILE:mlprof_cli>;MLPROF_SRC_DIR=${PROJECT_SOURCE_DIR}")
endif()
