# Memory profiling benchmark: the program runs itself again with
# libmlprof.so preloaded in each mode (and under heaptrack when installed),
# so it links nothing of mlprof.
add_executable(bench_mem ${CMAKE_CURRENT_LIST_DIR}/bench_mem.c)
target_compile_definitions(bench_mem PRIVATE _GNU_SOURCE MLPROF_LIB_PATH="$<TARGET_FILE:mlprof_shared>")
target_compile_options(bench_mem PRIVATE -fno-builtin)
add_dependencies(bench_mem mlprof_shared)
list(APPEND MLPROF_BENCHES bench_mem)
