/* wrap_p2p.c — point-to-point and completion calls through PMPI. Send and
 * Recv are COMM ranges with bytes and peer (Recv: the bytes and source
 * actually received). Isend/Irecv are short ranges that also remember the
 * request; the Wait or Test call that completes it reports the request's
 * bytes and how long it ran hidden behind other work (requests.c). */
#include "wrap.h"

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  int on = prof__mpiw_begin(MPIW_SEND);
  int rc = PMPI_Send(buf, count, dt, dest, tag, comm);
  if (on) prof__mpiw_end(MPIW_SEND, prof__mpiw_bytes(count, dt), comm, dest);
  return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  MPI_Status mine;
  if (st == MPI_STATUS_IGNORE) st = &mine;
  int on = prof__mpiw_begin(MPIW_RECV);
  int rc = PMPI_Recv(buf, count, dt, src, tag, comm, st);
  if (on) {
    int got = 0;
    if (rc != MPI_SUCCESS || PMPI_Get_count(st, dt, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = 0;
    prof__mpiw_end(MPIW_RECV, prof__mpiw_bytes(got, dt), comm, rc == MPI_SUCCESS ? st->MPI_SOURCE : src);
  }
  return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  uint64_t t0 = prof__mpiw_now();
  int on = prof__mpiw_begin(MPIW_ISEND);
  int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, req);
  if (on) {
    uint64_t b = prof__mpiw_bytes(count, dt);
    if (rc == MPI_SUCCESS) prof__mpiw_req_start(*req, MPIW_ISEND, b, t0);
    prof__mpiw_end(MPIW_ISEND, b, comm, dest);
  }
  return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req) {
  uint64_t t0 = prof__mpiw_now();
  int on = prof__mpiw_begin(MPIW_IRECV);
  int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
  if (on) {
    uint64_t b = prof__mpiw_bytes(count, dt);
    if (rc == MPI_SUCCESS) prof__mpiw_req_start(*req, MPIW_IRECV, b, t0);
    prof__mpiw_end(MPIW_IRECV, b, comm, src);
  }
  return rc;
}

/* After a completion call: report every copied request whose handle PMPI
 * turned into MPI_REQUEST_NULL (or that `all_done` says completed). */
static void completed(prof__mpiw_reqs *c, const MPI_Request *now, int all_done, uint64_t t0) {
  for (int i = 0; i < c->n; i++)
    if (all_done || now[i] == MPI_REQUEST_NULL) prof__mpiw_req_done(c->v[i], t0);
  prof__mpiw_reqs_free(c);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, req, 1);
  int on = prof__mpiw_begin(MPIW_WAIT);
  int rc = PMPI_Wait(req, st);
  if (on) {
    completed(&c, req, rc == MPI_SUCCESS, t0);
    prof__mpiw_end(MPIW_WAIT, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_WAITALL);
  int rc = PMPI_Waitall(n, reqs, sts);
  if (on) {
    completed(&c, reqs, rc == MPI_SUCCESS, t0);
    prof__mpiw_end(MPIW_WAITALL, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_WAITANY);
  int rc = PMPI_Waitany(n, reqs, idx, st);
  if (on) {
    if (rc == MPI_SUCCESS && *idx != MPI_UNDEFINED && *idx >= 0 && *idx < c.n) prof__mpiw_req_done(c.v[*idx], t0);
    prof__mpiw_end(MPIW_WAITANY, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

/* Waitsome/Testsome: the completed entries are listed in idx[0..*out). */
static void some_done(prof__mpiw_reqs *c, int rc, int out, const int idx[], uint64_t t0) {
  if (rc != MPI_SUCCESS || out == MPI_UNDEFINED) return;
  for (int i = 0; i < out; i++)
    if (idx[i] >= 0 && idx[i] < c->n) prof__mpiw_req_done(c->v[idx[i]], t0);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[]) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_WAITSOME);
  int rc = PMPI_Waitsome(n, reqs, out, idx, sts);
  if (on) {
    some_done(&c, rc, *out, idx, t0);
    prof__mpiw_end(MPIW_WAITSOME, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, req, 1);
  int on = prof__mpiw_begin(MPIW_TEST);
  int rc = PMPI_Test(req, flag, st);
  if (on) {
    if (rc == MPI_SUCCESS && *flag) completed(&c, req, 1, t0);
    prof__mpiw_end(MPIW_TEST, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_TESTALL);
  int rc = PMPI_Testall(n, reqs, flag, sts);
  if (on) {
    if (rc == MPI_SUCCESS && *flag) completed(&c, reqs, 1, t0);
    prof__mpiw_end(MPIW_TESTALL, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_TESTANY);
  int rc = PMPI_Testany(n, reqs, idx, flag, st);
  if (on) {
    if (rc == MPI_SUCCESS && *flag && *idx != MPI_UNDEFINED && *idx >= 0 && *idx < c.n)
      prof__mpiw_req_done(c.v[*idx], t0);
    prof__mpiw_end(MPIW_TESTANY, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status sts[]) {
  prof__mpiw_reqs c;
  uint64_t t0 = prof__mpiw_now();
  prof__mpiw_reqs_copy(&c, reqs, n);
  int on = prof__mpiw_begin(MPIW_TESTSOME);
  int rc = PMPI_Testsome(n, reqs, out, idx, sts);
  if (on) {
    some_done(&c, rc, *out, idx, t0);
    prof__mpiw_end(MPIW_TESTSOME, 0, MPI_COMM_NULL, -1);
  }
  prof__mpiw_reqs_free(&c);
  return rc;
}
