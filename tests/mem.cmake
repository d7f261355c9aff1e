# Helper programs for the memory tests: ordinary programs that know nothing
# of mlprof, run through `mlprof run` (the library is preloaded).
add_executable(mem_prog ${CMAKE_CURRENT_LIST_DIR}/progs/mem_prog.c)
target_compile_options(mem_prog PRIVATE -O1 -fno-omit-frame-pointer -fno-builtin)
target_compile_definitions(mem_prog PRIVATE _GNU_SOURCE)
target_link_libraries(mem_prog PRIVATE Threads::Threads)
set_target_properties(mem_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)

# A program linked against the shared library that uses the API (pools,
# steps) and relies on the interposer without preloading.
add_executable(mem_linked ${CMAKE_CURRENT_LIST_DIR}/progs/mem_linked.c)
target_compile_options(mem_linked PRIVATE -O1 -fno-omit-frame-pointer -fno-builtin)
target_compile_definitions(mem_linked PRIVATE _GNU_SOURCE)
target_link_libraries(mem_linked PRIVATE mlprof_shared)
set_target_properties(mem_linked PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
# Heap made before prof_init and a peak held for a moment inside step 0.
add_executable(mem_early ${CMAKE_CURRENT_LIST_DIR}/progs/mem_early.c)
target_compile_options(mem_early PRIVATE -O1 -fno-omit-frame-pointer -fno-builtin)
target_compile_definitions(mem_early PRIVATE _GNU_SOURCE)
target_link_libraries(mem_early PRIVATE mlprof_shared)
set_target_properties(mem_early PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
if(TARGET test_mem_run)
  add_dependencies(test_mem_run mem_prog mem_linked mem_early mlprof_cli mlprof_shared)
endif()

# Allocations that look like a PyTorch program's (operator, allocator and
# template names, a static constructor), for the attribution of sites.
add_executable(mem_attr_prog ${CMAKE_CURRENT_LIST_DIR}/progs/mem_attr_prog.c)
target_compile_options(mem_attr_prog PRIVATE -O1 -fno-omit-frame-pointer -fno-builtin)
target_compile_definitions(mem_attr_prog PRIVATE _GNU_SOURCE)
target_link_libraries(mem_attr_prog PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(mem_attr_prog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
if(TARGET test_mem_attr)
  add_dependencies(test_mem_attr mem_attr_prog mlprof_cli mlprof_shared)
endif()
