# Resource monitoring: cost of one sample of the resource sampler.
if(TARGET mlprof_res)
  add_executable(bench_resources ${CMAKE_CURRENT_LIST_DIR}/bench_resources.c)
  target_compile_definitions(bench_resources PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_resources PRIVATE mlprof_static)
  list(APPEND MLPROF_BENCHES bench_resources)
endif()
