/* wrap.h — shared state of the PMPI wrappers in libmlprof_mpi: operation
 * names and their trace ids, the begin/end helpers every wrapper uses, and
 * the table of nonblocking requests in flight. */
#ifndef PROF_MPI_WRAP_H
#define PROF_MPI_WRAP_H

#include <mpi.h>
#include <stdint.h>

#include "mlprof.h"

/* Only the MPI_* wrappers are exported; the helpers stay inside the library. */
#pragma GCC visibility push(hidden)

#define MPIW_OPS(X)                                                            \
  X(ALLREDUCE, "MPI_Allreduce") X(REDUCE, "MPI_Reduce") X(BCAST, "MPI_Bcast")  \
  X(ALLGATHER, "MPI_Allgather") X(REDUCE_SCATTER, "MPI_Reduce_scatter")        \
  X(ALLTOALL, "MPI_Alltoall") X(BARRIER, "MPI_Barrier") X(SEND, "MPI_Send")    \
  X(RECV, "MPI_Recv") X(ISEND, "MPI_Isend") X(IRECV, "MPI_Irecv")              \
  X(WAIT, "MPI_Wait") X(WAITALL, "MPI_Waitall") X(WAITANY, "MPI_Waitany")      \
  X(WAITSOME, "MPI_Waitsome") X(TEST, "MPI_Test") X(TESTALL, "MPI_Testall")    \
  X(TESTANY, "MPI_Testany") X(TESTSOME, "MPI_Testsome")

enum {
#define MPIW_ENUM(e, s) MPIW_##e,
  MPIW_OPS(MPIW_ENUM)
#undef MPIW_ENUM
  MPIW_NOPS
};

/* Trace ids of the operation names; all 0 while profiling is off. */
extern uint32_t prof__mpiw_ids[MPIW_NOPS];

/* CLOCK_MONOTONIC in ns. */
uint64_t prof__mpiw_now(void);

/* Open the COMM range of `op`; returns 1 when it is being recorded. */
static inline int prof__mpiw_begin(int op) {
  uint32_t id = prof__mpiw_ids[op];
  if (!id) return 0;
  prof_range_push_id(id, PROF_CAT_COMM);
  return 1;
}

/* Attach what the call moved and close its range. */
void prof__mpiw_end(int op, uint64_t bytes, MPI_Comm comm, int peer);

/* count elements of type dt, in bytes (0 for a bad type). */
uint64_t prof__mpiw_bytes(int count, MPI_Datatype dt);

/* ---- Nonblocking requests (requests.c) ---- */

/* Remember a request started now by op with its size. */
void prof__mpiw_req_start(MPI_Request req, int op, uint64_t bytes, uint64_t t0);
/* A remembered request completed in a call begun at `call_t0`: record it
 * (prof_comm_done_id) and forget it. Unknown requests are ignored. */
void prof__mpiw_req_done(MPI_Request req, uint64_t call_t0);

/* Completion calls: copies of the handles taken before PMPI changes them. */
typedef struct prof__mpiw_reqs {
  MPI_Request small[16];
  MPI_Request *v;
  int n;
} prof__mpiw_reqs;
void prof__mpiw_reqs_copy(prof__mpiw_reqs *c, const MPI_Request *reqs, int n);
void prof__mpiw_reqs_free(prof__mpiw_reqs *c);

#pragma GCC visibility pop
#endif
