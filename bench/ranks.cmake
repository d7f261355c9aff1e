# ranks.cmake — the merged multi-rank analysis benchmark (256 generated ranks).
if(TARGET mlprof_analyze)
  add_executable(bench_ranks ${CMAKE_CURRENT_LIST_DIR}/bench_ranks.c)
  target_compile_definitions(bench_ranks PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_ranks PRIVATE mlprof_static)
  list(APPEND MLPROF_BENCHES bench_ranks)
endif()
