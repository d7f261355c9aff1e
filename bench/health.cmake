# health.cmake — prof_histogram summary cost per element vs a plain sum, and
# the live-page update cost per step.
if(TARGET mlprof_health)
  add_executable(bench_histogram ${CMAKE_CURRENT_LIST_DIR}/bench_histogram.c)
  target_compile_definitions(bench_histogram PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_histogram PRIVATE mlprof_static m)
  list(APPEND MLPROF_BENCHES bench_histogram)
endif()
