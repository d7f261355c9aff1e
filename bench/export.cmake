# export.cmake — the Perfetto export against the Chrome JSON export: size,
# time and peak memory on a synthetic GPU training trace.
if(TARGET mlprof_analyze)
  add_executable(bench_export ${CMAKE_CURRENT_LIST_DIR}/bench_export.c)
  target_compile_definitions(bench_export PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_export PRIVATE mlprof_static)
  list(APPEND MLPROF_BENCHES bench_export)
endif()
