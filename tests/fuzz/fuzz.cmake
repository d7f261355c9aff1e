# Fuzzing the analyzer. fuzz_replay (every build) runs the fuzz entry over
# the seed corpus and every crashing input kept under regressions/; with
# -DMLPROF_FUZZ=ON and clang, fuzz_trace is the libFuzzer target (scripts/test
# builds it with -fsanitize=fuzzer-no-link,address,undefined and runs it).
option(MLPROF_FUZZ "Build the libFuzzer target tests/fuzz (clang only)" OFF)

set(MLPROF_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(MLPROF_FUZZ_COMMON ${MLPROF_FUZZ_DIR}/fuzz_entry.c
    ${PROJECT_SOURCE_DIR}/tools/cmd_info.c ${PROJECT_SOURCE_DIR}/tools/cli_common.c
    ${PROJECT_SOURCE_DIR}/tools/cli_base.c)

function(mlprof_fuzz_exe name main)
  add_executable(${name} ${main} ${MLPROF_FUZZ_COMMON})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tools ${MLPROF_FUZZ_DIR})
  target_link_libraries(${name} PRIVATE mlprof_static)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
endfunction()

mlprof_fuzz_exe(fuzz_replay ${MLPROF_FUZZ_DIR}/replay.c)
add_test(NAME fuzz_replay
  COMMAND fuzz_replay ${MLPROF_FUZZ_DIR}/corpus ${MLPROF_FUZZ_DIR}/regressions)
set_tests_properties(fuzz_replay PROPERTIES TIMEOUT 300
  ENVIRONMENT "TMPDIR=${CMAKE_CURRENT_BINARY_DIR}/tmp")

if(MLPROF_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MLPROF_FUZZ=ON needs clang (CC=clang)")
  endif()
  mlprof_fuzz_exe(fuzz_trace ${MLPROF_FUZZ_DIR}/fuzz_main.c)
  target_link_options(fuzz_trace PRIVATE -fsanitize=fuzzer)
endif()
