# cuda.cmake — the CUDA training example, built whenever nvcc is found. The
# CUDA language is enabled here only, so the rest of the build never needs a
# CUDA toolkit; libmlprof itself never links CUDA.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(cuda_train ${CMAKE_CURRENT_LIST_DIR}/cuda_train.cu)
  # The project's C options (-Wall -Wextra, sanitizers) are not nvcc options.
  set_property(TARGET cuda_train PROPERTY COMPILE_OPTIONS "")
  set_property(TARGET cuda_train PROPERTY LINK_OPTIONS "")
  target_compile_options(cuda_train PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
  set_target_properties(cuda_train PROPERTIES CUDA_ARCHITECTURES "75;80;90" CUDA_STANDARD 17)
  target_link_libraries(cuda_train PRIVATE mlprof_shared)
endif()
