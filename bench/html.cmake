# html.cmake — HTML report generation and Chrome export throughput on a
# 10 M-event synthetic trace.
if(TARGET mlprof_analyze)
  add_executable(bench_html ${CMAKE_CURRENT_LIST_DIR}/bench_html.c)
  target_compile_definitions(bench_html PRIVATE _GNU_SOURCE)
  target_link_libraries(bench_html PRIVATE mlprof_static)
  list(APPEND MLPROF_BENCHES bench_html)
endif()
