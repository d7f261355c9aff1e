# nvtx.cmake — cost per NVTX call captured by libmlprof (needs the NVTX 3
# headers of a CUDA toolkit).
find_path(MLPROF_NVTX_BENCH_INCLUDE nvtx3/nvToolsExt.h
  HINTS ${MLPROF_CUPTI_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
mark_as_advanced(MLPROF_NVTX_BENCH_INCLUDE)
if(MLPROF_NVTX_BENCH_INCLUDE)
  add_executable(bench_nvtx ${CMAKE_CURRENT_LIST_DIR}/bench_nvtx.c)
  target_compile_definitions(bench_nvtx PRIVATE _GNU_SOURCE)
  target_include_directories(bench_nvtx SYSTEM PRIVATE ${MLPROF_NVTX_BENCH_INCLUDE})
  target_link_libraries(bench_nvtx PRIVATE mlprof_shared Threads::Threads ${CMAKE_DL_LIBS})
  list(APPEND MLPROF_BENCHES bench_nvtx)
endif()
