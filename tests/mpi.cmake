# An unmodified MPI program for the `mlprof run --mpi` test (test_mpi.c).
if(TARGET mlprof_mpi AND MPI_C_FOUND)
  add_executable(mpi_plain ${CMAKE_CURRENT_LIST_DIR}/progs/mpi_plain.c)
  target_link_libraries(mpi_plain PRIVATE MPI::MPI_C)
  set_target_properties(mpi_plain PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  if(TARGET test_mpi)
    add_dependencies(test_mpi mpi_plain mlprof_cli mlprof_mpi)
  endif()
endif()
