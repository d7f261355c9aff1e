# The analyzer's fuzz target and the replay of its corpus and regression
# inputs (tests/fuzz/fuzz.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz.cmake)
