/* wrap_coll.c — collectives through PMPI, each recorded as a COMM range
 * named after the call with the bytes this rank contributes (the size of
 * its send buffer: count × type size; Alltoall: per-peer size × ranks;
 * Reduce_scatter: the sum of recvcounts × type size; Barrier: 0). */
#include "wrap.h"

static int comm_size(MPI_Comm comm) {
  int n = 0;
  return PMPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_ALLREDUCE);
  int rc = PMPI_Allreduce(sb, rb, count, dt, op, comm);
  if (on) prof__mpiw_end(MPIW_ALLREDUCE, prof__mpiw_bytes(count, dt), comm, -1);
  return rc;
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_REDUCE);
  int rc = PMPI_Reduce(sb, rb, count, dt, op, root, comm);
  if (on) prof__mpiw_end(MPIW_REDUCE, prof__mpiw_bytes(count, dt), comm, root);
  return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_BCAST);
  int rc = PMPI_Bcast(buf, count, dt, root, comm);
  if (on) prof__mpiw_end(MPIW_BCAST, prof__mpiw_bytes(count, dt), comm, root);
  return rc;
}

int MPI_Allgather(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_ALLGATHER);
  int rc = PMPI_Allgather(sb, scount, stype, rb, rcount, rtype, comm);
  if (on) {
    uint64_t b = sb == MPI_IN_PLACE ? prof__mpiw_bytes(rcount, rtype) : prof__mpiw_bytes(scount, stype);
    prof__mpiw_end(MPIW_ALLGATHER, b, comm, -1);
  }
  return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_REDUCE_SCATTER);
  int rc = PMPI_Reduce_scatter(sb, rb, rcounts, dt, op, comm);
  if (on) {
    uint64_t b = 0;
    int n = comm_size(comm);
    for (int i = 0; rcounts && i < n; i++) b += prof__mpiw_bytes(rcounts[i], dt);
    prof__mpiw_end(MPIW_REDUCE_SCATTER, b, comm, -1);
  }
  return rc;
}

int MPI_Alltoall(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_ALLTOALL);
  int rc = PMPI_Alltoall(sb, scount, stype, rb, rcount, rtype, comm);
  if (on) {
    uint64_t per = sb == MPI_IN_PLACE ? prof__mpiw_bytes(rcount, rtype) : prof__mpiw_bytes(scount, stype);
    prof__mpiw_end(MPIW_ALLTOALL, per * (uint64_t)comm_size(comm), comm, -1);
  }
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_BARRIER);
  int rc = PMPI_Barrier(comm);
  if (on) prof__mpiw_end(MPIW_BARRIER, 0, comm, -1);
  return rc;
}
