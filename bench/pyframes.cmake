# pyframes.cmake — cost per CPU sample with and without Python frames
# (bench_pyframes embeds CPython; built when the Python frames are).
if(MLPROF_HAVE_PYFRAMES)
  find_package(Python3 QUIET COMPONENTS Development.Embed)
  if(Python3_Development.Embed_FOUND)
    add_executable(bench_pyframes ${CMAKE_CURRENT_LIST_DIR}/bench_pyframes.c)
    target_compile_definitions(bench_pyframes PRIVATE _GNU_SOURCE)
    target_link_libraries(bench_pyframes PRIVATE mlprof_static Python3::Python)
    list(APPEND MLPROF_BENCHES bench_pyframes)
  endif()
endif()
