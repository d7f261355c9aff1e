# Whole-profiler overhead on a compute-bound loop pinned to one CPU: the
# program runs itself bare and with libmlprof.so preloaded in several
# configurations (and gperftools' CPU profiler when installed), so it links
# nothing of mlprof.
add_executable(bench_overhead ${CMAKE_CURRENT_LIST_DIR}/bench_overhead.c)
target_compile_definitions(bench_overhead PRIVATE _GNU_SOURCE MLPROF_LIB_PATH="$<TARGET_FILE:mlprof_shared>")
target_link_libraries(bench_overhead PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(bench_overhead mlprof_shared)
list(APPEND MLPROF_BENCHES bench_overhead)
