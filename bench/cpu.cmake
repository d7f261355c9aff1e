# cpu.cmake — CPU sampling overhead (off / 1 kHz / 10 kHz on a training-like
# compute loop) and the cost of one sample (unwind + intern) at depth 16.
add_executable(bench_sampling ${CMAKE_CURRENT_LIST_DIR}/bench_sampling.c)
target_compile_definitions(bench_sampling PRIVATE _GNU_SOURCE)
target_link_libraries(bench_sampling PRIVATE mlprof_static)
list(APPEND MLPROF_BENCHES bench_sampling)
