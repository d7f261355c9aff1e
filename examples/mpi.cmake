# mpi.cmake — the MPI data-parallel example, built when libmlprof_mpi is
# (an MPI implementation for C was found). Linked with libmlprof_mpi before
# MPI so the PMPI wrappers see every call.
if(TARGET mlprof_mpi)
  add_executable(mpi_train ${CMAKE_CURRENT_LIST_DIR}/mpi_train.c)
  target_link_libraries(mpi_train PRIVATE mlprof_mpi mlprof_shared MPI::MPI_C m)
endif()
