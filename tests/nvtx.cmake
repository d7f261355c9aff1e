# NVTX capture: a program annotated only with NVTX, run under `mlprof run`
# (nvtx_prog) and linked with the shared libmlprof (nvtx_linked), checked
# by test_gpu_nvtx together with an in-process run (static injection). Needs
# the NVTX 3 headers (nvtx3/nvToolsExt.h) of a CUDA toolkit.
find_path(MLPROF_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h
  HINTS ${MLPROF_CUPTI_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
mark_as_advanced(MLPROF_NVTX_INCLUDE_DIR)
if(MLPROF_NVTX_INCLUDE_DIR AND TARGET test_gpu_nvtx)
  add_executable(nvtx_prog ${CMAKE_CURRENT_LIST_DIR}/progs/nvtx_prog.c)
  add_executable(nvtx_linked ${CMAKE_CURRENT_LIST_DIR}/progs/nvtx_prog.c)
  target_compile_definitions(nvtx_linked PRIVATE NVTX_PROG_LINKED=1)
  target_link_libraries(nvtx_linked PRIVATE mlprof_shared)
  foreach(t nvtx_prog nvtx_linked test_gpu_nvtx)
    target_include_directories(${t} SYSTEM PRIVATE ${MLPROF_NVTX_INCLUDE_DIR})
    target_link_libraries(${t} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  endforeach()
  set_target_properties(nvtx_prog nvtx_linked PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  target_compile_definitions(test_gpu_nvtx PRIVATE MLPROF_TEST_NVTX=1
    NVTX_PROG_DIR="${CMAKE_CURRENT_BINARY_DIR}/progs")
  add_dependencies(test_gpu_nvtx nvtx_prog nvtx_linked mlprof_cli mlprof_shared)
endif()
