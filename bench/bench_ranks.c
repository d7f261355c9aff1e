/* bench_ranks.c — the merged multi-rank analysis on a generated 256-rank
 * run (200 steps per rank, one straggler): wall time of the merge against
 * analysing the same traces one by one (the baseline), and the process's
 * peak RSS after the merge against the peak before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/ranks/ranks.h"
#include "mlprof.h"
#include "trace/trace.h"

enum { RANKS = 256, STEPS = 200 };
#define MS 1000000ull

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long peak_kb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

static void put(prof__tw *w, uint64_t ts, int type, uint32_t name, int cat, uint64_t a, uint64_t b) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .name = name, .cat = (uint8_t)cat, .a = a, .b = b};
  prof__tw_events(w, 1, &e, 1);
}

static int write_rank(const char *path, int r) {
  char rank[16], err[256];
  snprintf(rank, sizeof rank, "%d", r);
  prof__kv hdr[] = {{"program", "bench"}, {"hostname", "bench"}, {"rank", rank}};
  prof__tw *w = prof__tw_open(path, hdr, 3, err);
  if (!w) return -1;
  prof__tw_string(w, 1, "load_batch", 10);
  prof__tw_string(w, 2, "forward_backward", 16);
  prof__tw_string(w, 3, "MPI_Allreduce", 13);
  uint64_t c = (r == 77 ? 50 : 30) * MS;
  for (uint64_t k = 0; k < STEPS; k++) {
    uint64_t t = k * 100 * MS;
    put(w, t, PROF_EV_STEP_BEGIN, 0, 0, k, 0);
    put(w, t, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_DATA, 0, 0);
    put(w, t + 10 * MS, PROF_EV_RANGE_END, 1, 0, 0, 0);
    put(w, t + 10 * MS, PROF_EV_RANGE_BEGIN, 2, PROF_CAT_COMPUTE, 0, 0);
    put(w, t + 10 * MS + c, PROF_EV_RANGE_END, 2, 0, 0, 0);
    put(w, t + 10 * MS + c, PROF_EV_RANGE_BEGIN, 3, PROF_CAT_COMM, 0, 0);
    put(w, t + 99 * MS, PROF_EV_COMM, 3, PROF_CAT_COMM, 4096, RANKS);
    put(w, t + 100 * MS, PROF_EV_RANGE_END, 3, 0, 0, 0);
    put(w, t + 100 * MS, PROF_EV_STEP_END, 0, 0, k, 0);
  }
  return prof__tw_close(w, NULL, 0);
}

int main(void) {
  char dir[] = "mlprof-bench-ranks-XXXXXX", err[256];
  if (!mkdtemp(dir)) return 0;
  char **paths = calloc(RANKS, sizeof *paths);
  for (int r = 0; r < RANKS; r++) {
    paths[r] = malloc(strlen(dir) + 32);
    sprintf(paths[r], "%s/b.r%03d.mlpt", dir, r);
    if (write_rank(paths[r], r)) return 0;
  }
  double t0 = now_s();
  for (int r = 0; r < RANKS; r++) {
    prof__an *an;
    if (prof__an_run_opts(&an, paths[r], 1, err) == 0) prof__an_free(an);
  }
  double one_by_one = now_s() - t0;
  long rss_before = peak_kb();
  t0 = now_s();
  prof__ranks *rs;
  int rc = prof__ranks_run(&rs, paths, RANKS, err);
  double merge = now_s() - t0;
  long rss_after = peak_kb();
  printf("ranks_merge_256_s  %.4f  %.4f  %.2f\n", merge, one_by_one, one_by_one > 0 ? merge / one_by_one : 0);
  printf("ranks_merge_256_peak_rss_kb  %ld  %ld  %.2f\n", rss_after, rss_before,
         rss_before ? (double)rss_after / (double)rss_before : 0);
  if (rc == 0) {
    printf("ranks_merge_256_straggler_rank  %ld  77  %.2f\n", rs->straggler >= 0 ? rs->r[rs->straggler].rank : -1,
           rs->straggler >= 0 ? rs->r[rs->straggler].rank / 77.0 : 0);
    prof__ranks_free(rs);
  }
  for (int r = 0; r < RANKS; r++) {
    unlink(paths[r]);
    free(paths[r]);
  }
  free(paths);
  rmdir(dir);
  return 0;
}
