# gpu.cmake — GPU analyzer throughput on a large synthetic trace.
if(TARGET mlprof_analyze AND TARGET mlprof_gpu)
  add_executable(bench_gpu_analyze ${CMAKE_CURRENT_LIST_DIR}/bench_gpu_analyze.c)
  target_compile_definitions(bench_gpu_analyze PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_gpu_analyze PRIVATE mlprof_static)
  list(APPEND MLPROF_BENCHES bench_gpu_analyze)
endif()
