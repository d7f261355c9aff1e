/* test_mpi.c — libmlprof_mpi end to end: examples/mpi_train under
 * `mpirun -np 4 --oversubscribe` with rank 2 slowed, then the merged report
 * of the four traces. Checks that rank 2 is named `straggler`, that every
 * rank's recorded MPI_Allreduce/MPI_Bcast calls and bytes equal what the
 * program says it did, and that every rank's Allreduce of one step overlaps
 * the others' on the common time axis. Skips (with the reason) when MPI or
 * the example was not built, or mpirun is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analyze/util/jsonparse.h"
#include "analyze/ranks/ranks.h"
#include "helpers.h"

#define STEPS 12

typedef struct did {
  unsigned long long ar_calls, ar_bytes, bc_calls, bc_bytes;
} did;

static const char *why_skip(void) {
  static char exe[1024];
  snprintf(exe, sizeof exe, "%s/examples/mpi_train", MLPROF_BIN_DIR);
  if (!th_exists(exe)) return "examples/mpi_train was not built (no MPI found at configure time)";
  if (th_run("command -v mpirun >/dev/null 2>&1", NULL) != 0) return "mpirun is not installed";
#ifdef MLPROF_SANITIZED
  return "Open MPI's own leaks and handlers trip the sanitizers; run without MLPROF_SANITIZE";
#endif
  return NULL;
}

/* "mpi_train: rank R allreduce_calls N allreduce_bytes B bcast_calls N bcast_bytes B" lines. */
static int parse_did(const char *out, did d[4]) {
  int seen = 0;
  for (const char *p = out; (p = strstr(p, "mpi_train: rank ")); p++) {
    int r;
    did x;
    if (sscanf(p, "mpi_train: rank %d allreduce_calls %llu allreduce_bytes %llu bcast_calls %llu bcast_bytes %llu", &r,
               &x.ar_calls, &x.ar_bytes, &x.bc_calls, &x.bc_bytes) == 5 && r >= 0 && r < 4) {
      d[r] = x;
      seen++;
    }
  }
  return seen;
}

static const prof__rank_op *op_of(const prof__rank_sum *r, const char *name) {
  for (size_t i = 0; i < r->nops; i++)
    if (!strcmp(r->ops[i].name, name)) return &r->ops[i];
  return NULL;
}

/* Step `step`'s Allreduce (the step-th one after the Bcast) of every rank overlaps. */
static void allreduce_overlaps(prof__ranks *rs, int step) {
  const char *p = th_tmp_path("mpi", ".chrome.json");
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  assert_int_equal(prof__ranks_export_chrome(rs, f), 0);
  fclose(f);
  size_t len;
  char *text = th_read_file(p, &len), err[256];
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  const prof__jv *evs = prof__jv_get(v, "traceEvents");
  double lo = 0, hi = 1e300;
  int seen[4] = {0}, hits = 0;
  for (size_t i = 0; i < evs->len; i++) {
    const prof__jv *e = prof__jv_at(evs, i);
    int pid = (int)prof__jv_get(e, "pid")->num;
    if (pid < 0 || pid > 3 || strcmp(prof__jv_get(e, "name")->str, "MPI_Allreduce") || seen[pid]++ != step) continue;
    double b = prof__jv_get(e, "ts")->num, d = prof__jv_get(e, "dur")->num;
    lo = b > lo ? b : lo;
    hi = b + d < hi ? b + d : hi;
    hits++;
  }
  assert_int_equal(hits, 4);
  assert_true(lo <= hi);
  prof__jv_free(v);
  free(text);
}

static void slowed_rank_is_the_straggler(void **state) {
  (void)state;
  const char *why = why_skip();
  if (why) {
    fprintf(stderr, "skipped: %s\n", why);
    skip();
  }
  const char *dir = th_tmp_path("mpirun", "");
  assert_int_equal(mkdir(dir, 0755), 0);
  char cmd[2048], out[600];
  snprintf(out, sizeof out, "%s/stdout.txt", dir);
  snprintf(cmd, sizeof cmd,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 "
           "OMPI_MCA_rmaps_base_oversubscribe=1 MLPROF_OUTPUT=%s/ MLPROF_REPORT=0 "
           "timeout 120 mpirun -np 4 --oversubscribe %s/examples/mpi_train --steps %d --slow-rank 2 --slow-factor 5 2>&1",
           dir, MLPROF_BIN_DIR, STEPS);
  int rc = th_run(cmd, out);
  char *text = th_read_file(out, NULL);
  if (rc != 0) fprintf(stderr, "mpirun failed (%d):\n%s\n", rc, text ? text : "");
  assert_int_equal(rc, 0);
  did d[4];
  memset(d, 0, sizeof d);
  assert_int_equal(parse_did(text, d), 4);
  free(text);

  char **paths, err[256], *dirs[] = {(char *)dir};
  assert_int_equal(prof__ranks_paths(dirs, 1, &paths, err), 4);
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  assert_true(rs->straggler >= 0);
  assert_int_equal(rs->r[rs->straggler].rank, 2);
  assert_string_equal(rs->straggler_phase, "compute");
  int named = 0;
  for (size_t i = 0; i < rs->nfindings; i++) named += !strcmp(rs->findings[i].id, "straggler");
  assert_int_equal(named, 1);
  for (int r = 0; r < 4; r++) {
    const prof__rank_sum *s = &rs->r[r];
    assert_int_equal(s->rank, r);
    assert_int_equal(s->steps, STEPS);
    const prof__rank_op *ar = op_of(s, "MPI_Allreduce"), *bc = op_of(s, "MPI_Bcast");
    assert_non_null(ar);
    assert_non_null(bc);
    assert_int_equal(ar->calls, d[r].ar_calls);
    assert_int_equal(ar->bytes, d[r].ar_bytes);
    assert_int_equal(bc->calls, d[r].bc_calls);
    assert_int_equal(bc->bytes, d[r].bc_bytes);
  }
  allreduce_overlaps(rs, STEPS / 2);
  prof__ranks_free(rs);
  prof__ranks_paths_free(paths, 4);
}

/* `mlprof run --mpi` on a program that never heard of mlprof: every rank's
 * trace lands in the folder with its rank in the name, and the PMPI
 * wrappers (preloaded) saw exactly the 7 Allreduce calls of 16 doubles. */
static void launcher_preloads_the_mpi_wrappers(void **state) {
  (void)state;
  const char *why = why_skip();
  char prog[1024];
  snprintf(prog, sizeof prog, "%s/tests/progs/mpi_plain", MLPROF_BIN_DIR);
  if (!why && !th_exists(prog)) why = "tests/progs/mpi_plain was not built";
  if (why) {
    fprintf(stderr, "skipped: %s\n", why);
    skip();
  }
  const char *dir = th_tmp_path("mpilaunch", "");
  char cmd[2048], out[600];
  snprintf(out, sizeof out, "%s.out", dir);
  snprintf(cmd, sizeof cmd,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
           "timeout 120 mpirun -np 2 --oversubscribe %s/mlprof run --mpi -o %s -- %s 2>&1",
           MLPROF_BIN_DIR, dir, prog);
  int rc = th_run(cmd, out);
  if (rc != 0) {
    char *text = th_read_file(out, NULL);
    fprintf(stderr, "mpirun failed (%d):\n%s\n", rc, text ? text : "");
    free(text);
  }
  assert_int_equal(rc, 0);
  char **paths, err[256], *dirs[] = {(char *)dir};
  assert_int_equal(prof__ranks_paths(dirs, 1, &paths, err), 2);
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 2, err), 0);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(rs->r[r].rank, r);
    const prof__rank_op *ar = op_of(&rs->r[r], "MPI_Allreduce");
    assert_non_null(ar);
    assert_int_equal(ar->calls, 7);
    assert_int_equal(ar->bytes, 7 * 16 * sizeof(double));
  }
  prof__ranks_free(rs);
  prof__ranks_paths_free(paths, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(slowed_rank_is_the_straggler),
      cmocka_unit_test(launcher_preloads_the_mpi_wrappers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
