/* wrap_init.c — MPI_Init/MPI_Init_thread/MPI_Finalize through PMPI: start
 * the profiler once MPI knows the rank, measure this rank's clock offset to
 * rank 0 with a ping-pong, and shut the profiler down at MPI_Finalize.
 *
 * Clock offset: rank r sends ROUNDS pings to rank 0, which answers each with
 * its CLOCK_MONOTONIC; r keeps the round with the shortest round trip and
 * estimates offset = t0 - (t_send + t_recv) / 2, good to within half that
 * round trip. The sync runs on a private duplicate of MPI_COMM_WORLD on
 * every rank, also where profiling is off, so ranks never disagree about
 * taking part. MLPROF_MPI_CLOCK_SYNC=0 (on all ranks) skips it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrap.h"

#define ROUNDS 10
#define TAG_PING 7301
#define TAG_PONG 7302

uint32_t prof__mpiw_ids[MPIW_NOPS];

static const char *const op_names[MPIW_NOPS] = {
#define MPIW_NAME(e, s) s,
    MPIW_OPS(MPIW_NAME)
#undef MPIW_NAME
};

uint64_t prof__mpiw_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t prof__mpiw_bytes(int count, MPI_Datatype dt) {
  int sz = 0;
  if (count <= 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &sz) != MPI_SUCCESS || sz < 0) return 0;
  return (uint64_t)count * (uint64_t)sz;
}

void prof__mpiw_end(int op, uint64_t bytes, MPI_Comm comm, int peer) {
  int n = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS) n = 0;
  prof_comm_id(prof__mpiw_ids[op], bytes, n, peer);
  prof_range_pop();
}

static int sync_enabled(void) {
  const char *v = getenv("MLPROF_MPI_CLOCK_SYNC");
  return !v || strcmp(v, "0") != 0;
}

static void serve_pings(MPI_Comm c, int size) {
  for (int r = 1; r < size; r++)
    for (int k = 0; k < ROUNDS; k++) {
      long long ping, now;
      PMPI_Recv(&ping, 1, MPI_LONG_LONG, r, TAG_PING, c, MPI_STATUS_IGNORE);
      now = (long long)prof__mpiw_now();
      PMPI_Send(&now, 1, MPI_LONG_LONG, r, TAG_PONG, c);
    }
}

/* Returns the offset to rank 0 and sets *err to half the best round trip. */
static long long ping_rank0(MPI_Comm c, long long *err) {
  long long best = -1, off = 0;
  for (int k = 0; k < ROUNDS; k++) {
    long long ping = k, t0 = 0;
    uint64_t a = prof__mpiw_now();
    PMPI_Send(&ping, 1, MPI_LONG_LONG, 0, TAG_PING, c);
    PMPI_Recv(&t0, 1, MPI_LONG_LONG, 0, TAG_PONG, c, MPI_STATUS_IGNORE);
    uint64_t b = prof__mpiw_now();
    long long rtt = (long long)(b - a);
    if (best < 0 || rtt < best) {
      best = rtt;
      off = t0 - (long long)(a + (b - a) / 2);
    }
  }
  *err = best / 2 + 1;
  return off;
}

static void meta_ll(const char *key, long long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  prof_meta(key, buf);
}

static void clock_sync(int rank, int size, int recording) {
  if (size < 2 || !sync_enabled()) return;
  MPI_Comm c;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS) return;
  long long off = 0, err = 0;
  if (rank == 0) serve_pings(c, size);
  else off = ping_rank0(c, &err);
  PMPI_Comm_free(&c);
  if (!recording) return;
  meta_ll("clock.offset_ns", off);
  meta_ll("clock.offset_err_ns", err);
  prof_meta("clock.offset_ref", "rank0.monotonic");
}

static void record_library(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (PMPI_Get_library_version(v, &len) != MPI_SUCCESS) return;
  v[len > 0 && len < (int)sizeof v ? len : 0] = 0;
  char *nl = strchr(v, '\n');
  if (nl) *nl = 0;
  char *comma = strchr(v, ',');
  if (comma) *comma = 0;
  prof_meta("mpi.library", v);
}

static void start_profiling(void) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int recording = prof_init(NULL) == 0;
  if (recording) {
    for (int i = 0; i < MPIW_NOPS; i++) prof__mpiw_ids[i] = prof_name_id(op_names[i]);
    meta_ll("mpi.rank", rank);
    meta_ll("mpi.size", size);
    record_library();
  }
  clock_sync(rank, size, recording);
}

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start_profiling();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start_profiling();
  return rc;
}

int MPI_Finalize(void) {
  memset(prof__mpiw_ids, 0, sizeof prof__mpiw_ids);
  int rc = PMPI_Finalize();
  prof_shutdown();
  return rc;
}
