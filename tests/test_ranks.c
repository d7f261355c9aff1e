/* test_ranks.c — the merged multi-rank analysis on hand-built rank traces
 * whose numbers are known by construction: a straggler named with its
 * excess and slower phase, waiting, imbalance, communication share, bytes,
 * clock alignment across hosts, the JSON `ranks` section, the merged Chrome
 * export (with ranges closed at one instant and zero-length ranges), and a
 * generated 256-rank run. */
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
#include "mlprof.h"
#include "trace/trace.h"

#define MS 1000000ull
enum { S_DATA = 1, S_COMPUTE = 2, S_ALLREDUCE = 3 };

typedef struct rank_plan {
  int rank, steps;
  uint64_t compute_ms;     /* per step; data 10 ms, comm fills the step to 100 ms */
  uint64_t mono_base;      /* this rank's monotonic clock at its first event */
  long long offset_ns;     /* META clock.offset_ns, when has_offset */
  int has_offset;
  const char *host;
} rank_plan;

static void ev(prof__tw *w, uint64_t ts, int type, uint32_t name, int cat, uint64_t a, uint64_t b) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = (uint8_t)type;
  e.name = name;
  e.cat = (uint8_t)cat;
  e.a = a;
  e.b = b;
  assert_int_equal(prof__tw_events(w, 1, &e, 1), 0);
}

static prof__tw *open_rank(const char *path, const rank_plan *p) {
  char rank[16], rt[32], mono[32], err[256];
  snprintf(rank, sizeof rank, "%d", p->rank);
  snprintf(rt, sizeof rt, "%llu", 1700000000000000000ull);
  snprintf(mono, sizeof mono, "%llu", (unsigned long long)p->mono_base);
  prof__kv hdr[] = {{"program", "unit-mpi"}, {"pid", "100"}, {"hostname", p->host}, {"rank", rank},
                    {"world_size", "4"}, {"start_realtime_ns", rt}, {"start_mono_ns", mono}};
  prof__tw *w = prof__tw_open(path, hdr, sizeof hdr / sizeof hdr[0], err);
  assert_non_null(w);
  return w;
}

/* Step k of 100 ms: data [0,10), compute [10, 10+C), Allreduce [10+C, 100). */
static void write_rank(const char *path, const rank_plan *p) {
  prof__tw *w = open_rank(path, p);
  prof__tw_string(w, S_DATA, "load_batch", 10);
  prof__tw_string(w, S_COMPUTE, "forward_backward", 16);
  prof__tw_string(w, S_ALLREDUCE, "MPI_Allreduce", 13);
  if (p->has_offset) {
    char off[32];
    snprintf(off, sizeof off, "%lld", p->offset_ns);
    prof__kv m[] = {{"clock.offset_ns", off}, {"clock.offset_err_ns", "2500"}};
    assert_int_equal(prof__tw_meta(w, m, 2), 0);
  }
  for (int k = 0; k < p->steps; k++) {
    uint64_t t = p->mono_base + (uint64_t)k * 100 * MS, c = p->compute_ms * MS;
    ev(w, t, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)k, 0);
    ev(w, t, PROF_EV_RANGE_BEGIN, S_DATA, PROF_CAT_DATA, 0, 0);
    ev(w, t + 10 * MS, PROF_EV_RANGE_END, S_DATA, 0, 0, 0);
    ev(w, t + 10 * MS, PROF_EV_RANGE_BEGIN, S_COMPUTE, PROF_CAT_COMPUTE, 0, 0);
    ev(w, t + 10 * MS + c, PROF_EV_RANGE_END, S_COMPUTE, 0, 0, 0);
    ev(w, t + 10 * MS + c, PROF_EV_RANGE_BEGIN, S_ALLREDUCE, PROF_CAT_COMM, 0, 0);
    ev(w, t + 100 * MS - 1, PROF_EV_COMM, S_ALLREDUCE, PROF_CAT_COMM, 4096, 4);
    ev(w, t + 100 * MS, PROF_EV_RANGE_END, S_ALLREDUCE, 0, 0, 0);
    ev(w, t + 100 * MS, PROF_EV_STEP_END, 0, 0, (uint64_t)k, 0);
  }
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
}

/* Four ranks, rank 2 computes 60 ms per step where the others compute 30. */
static char **four_ranks(int hosts_differ) {
  char **paths = calloc(4, sizeof *paths);
  for (int r = 0; r < 4; r++) {
    static const char *hosts[] = {"h0", "h1", "h2", "h3"};
    rank_plan p = {.rank = r, .steps = 5, .compute_ms = r == 2 ? 60 : 30, .host = hosts_differ ? hosts[r] : "one",
                   .mono_base = 1000 * MS * (uint64_t)(r + 1), .has_offset = 1};
    p.offset_ns = 5000 * (long long)MS - (long long)p.mono_base; /* every rank started at rank 0's 5 s */
    if (!hosts_differ) p.mono_base = 1000 * MS, p.offset_ns = 0;
    paths[r] = strdup(th_tmp_path("rank", ".mlpt"));
    write_rank(paths[r], &p);
  }
  return paths;
}

static void free_paths(char **p, size_t n) {
  for (size_t i = 0; i < n; i++) free(p[i]);
  free(p);
}

static const prof__finding *finding(const prof__ranks *rs, const char *id) {
  for (size_t i = 0; i < rs->nfindings; i++)
    if (!strcmp(rs->findings[i].id, id)) return &rs->findings[i];
  return NULL;
}

static void straggler_named_with_excess_and_phase(void **state) {
  (void)state;
  char **paths = four_ranks(0), err[256];
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  assert_int_equal(rs->n, 4);
  assert_int_equal(rs->straggler, 2);
  assert_int_equal(rs->r[2].rank, 2);
  /* busy (non-comm) per step: 70 ms on rank 2, 40 ms on the others */
  assert_true(rs->straggler_excess_ns > 30.0 * MS - 1 && rs->straggler_excess_ns < 30.0 * MS + 1);
  assert_string_equal(rs->straggler_phase, "compute");
  const prof__finding *f = finding(rs, "straggler");
  assert_non_null(f);
  assert_non_null(strstr(f->title, "Rank 2"));
  assert_true(f->value > 0.749 && f->value < 0.751);
  /* the others wait for it: at the median's pace the step saves its 30 ms excess */
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 30 * MS);
  prof__ranks_free(rs);
  free_paths(paths, 4);
}

static void wait_imbalance_share_and_bytes(void **state) {
  (void)state;
  char **paths = four_ranks(0), err[256];
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  /* comm per step 60 ms (others) and 30 ms (rank 2): the others wait 30 ms per step */
  for (int r = 0; r < 4; r++) {
    assert_int_equal(rs->r[r].steps, 5);
    assert_int_equal(rs->r[r].wait_ns, r == 2 ? 0 : 5 * 30 * MS);
    assert_int_equal(rs->r[r].nops, 1);
    assert_string_equal(rs->r[r].ops[0].name, "MPI_Allreduce");
    assert_int_equal(rs->r[r].ops[0].calls, 5);
    assert_int_equal(rs->r[r].ops[0].bytes, 5 * 4096);
  }
  assert_true(rs->load_imbalance > 1.599 && rs->load_imbalance < 1.601); /* 60 / 37.5 */
  assert_true(rs->comm_share > 0.5249 && rs->comm_share < 0.5251);       /* (3*60+30)/400 */
  assert_non_null(finding(rs, "load_imbalance"));
  assert_non_null(finding(rs, "comm_bound"));
  /* balanced, every rank computes the mean (37.5 ms) instead of the max (60 ms) */
  assert_true(finding(rs, "load_imbalance")->has_saving);
  assert_int_equal(finding(rs, "load_imbalance")->saving_ns, 22500000);
  assert_string_equal(rs->clock, "one_host");
  prof__ranks_free(rs);
  free_paths(paths, 4);
}

static void hosts_aligned_by_mpi_offsets(void **state) {
  (void)state;
  char **paths = four_ranks(1), err[256];
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  assert_string_equal(rs->clock, "mpi_offset");
  assert_int_equal(rs->clock_err_ns, 2500);
  for (int r = 0; r < 4; r++) /* every rank's first event lands on rank 0's 5 s */
    assert_int_equal((int64_t)rs->r[r].first_ns + rs->r[r].shift_ns, (int64_t)(5000 * MS));
  prof__ranks_free(rs);
  free_paths(paths, 4);
}

static char *write_to_string(prof__ranks *rs, int chrome, size_t *len) {
  const char *p = th_tmp_path("merged", ".json");
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  assert_int_equal(chrome ? prof__ranks_export_chrome(rs, f) : prof__ranks_write(rs, "json", f), 0);
  fclose(f);
  return th_read_file(p, len);
}

static void json_ranks_section(void **state) {
  (void)state;
  char **paths = four_ranks(0), err[256];
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  size_t len;
  char *text = write_to_string(rs, 0, &len);
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  assert_int_equal((int)prof__jv_path(v, "ranks.count")->num, 4);
  assert_int_equal((int)prof__jv_path(v, "ranks.straggler.rank")->num, 2);
  assert_string_equal(prof__jv_path(v, "ranks.straggler.phase")->str, "compute");
  const prof__jv *r2 = prof__jv_at(prof__jv_path(v, "ranks.per_rank"), 2);
  assert_int_equal((long long)prof__jv_get(r2, "compute_ns")->num, 60 * MS);
  assert_int_equal((long long)prof__jv_get(r2, "data_ns")->num, 10 * MS);
  const prof__jv *op = prof__jv_at(prof__jv_get(r2, "comm_ops"), 0);
  assert_int_equal((int)prof__jv_get(op, "bytes")->num, 5 * 4096);
  int found = 0;
  const prof__jv *fs = prof__jv_get(v, "findings");
  for (size_t i = 0; i < fs->len; i++) found += !strcmp(prof__jv_get(prof__jv_at(fs, i), "id")->str, "straggler");
  assert_int_equal(found, 1);
  prof__jv_free(v);
  free(text);
  prof__ranks_free(rs);
  free_paths(paths, 4);
}

/* Across hosts: step 3's Allreduce of every rank overlaps on the common axis. */
static void chrome_one_process_per_rank(void **state) {
  (void)state;
  char **paths = four_ranks(1), err[256];
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 4, err), 0);
  size_t len;
  char *text = write_to_string(rs, 1, &len);
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  const prof__jv *evs = prof__jv_get(v, "traceEvents");
  double lo = 0, hi = 1e300;
  int seen[4] = {0}, names = 0;
  for (size_t i = 0; i < evs->len; i++) {
    const prof__jv *e = prof__jv_at(evs, i);
    int pid = (int)prof__jv_get(e, "pid")->num;
    if (!strcmp(prof__jv_get(e, "name")->str, "process_name")) names++;
    if (strcmp(prof__jv_get(e, "name")->str, "MPI_Allreduce") || seen[pid]++ != 3) continue;
    double b = prof__jv_get(e, "ts")->num, d = prof__jv_get(e, "dur")->num;
    if (b > lo) lo = b;
    if (b + d < hi) hi = b + d;
  }
  assert_int_equal(names, 4);
  assert_true(lo < hi);
  prof__jv_free(v);
  free(text);
  prof__ranks_free(rs);
  free_paths(paths, 4);
}

/* Rank r on one host, times in ns after 1 s (its first event): step 0
 * [0, 10000); "epoch" [1000, 5000) holds "batch" from 2000 and "layer" from
 * 3000 that never end (epoch's end closes them); "MPI_Barrier" is
 * zero-length at 6000 with a COMM record (8 bytes, 4 ranks, peer 1), where
 * "load" [6000, 8000) begins; "outer" from 9000 holds "inner" from 9500,
 * both open at the rank's last event (the step's end). */
static void write_edge_rank(const char *path, int r) {
  enum { EPOCH = 1, BATCH, LAYER, BARRIER, LOAD, OUTER, INNER };
  const char *s[] = {"epoch", "batch", "layer", "MPI_Barrier", "load", "outer", "inner"};
  rank_plan p = {.rank = r, .host = "one", .mono_base = 1000 * MS};
  prof__tw *w = open_rank(path, &p);
  for (uint32_t i = 0; i < 7; i++) assert_int_equal(prof__tw_string(w, i + 1, s[i], strlen(s[i])), 0);
  assert_int_equal(prof__tw_thread(w, 1, "trainer", 0, 0), 0);
  const uint64_t t = p.mono_base;
  ev(w, t, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  ev(w, t + 1000, PROF_EV_RANGE_BEGIN, EPOCH, PROF_CAT_COMPUTE, 0, 0);
  ev(w, t + 2000, PROF_EV_RANGE_BEGIN, BATCH, PROF_CAT_COMPUTE, 0, 0);
  ev(w, t + 3000, PROF_EV_RANGE_BEGIN, LAYER, PROF_CAT_COMPUTE, 0, 0);
  ev(w, t + 5000, PROF_EV_RANGE_END, EPOCH, 0, 0, 0);
  ev(w, t + 6000, PROF_EV_RANGE_BEGIN, BARRIER, PROF_CAT_COMM, 0, 0);
  ev(w, t + 6000, PROF_EV_COMM, BARRIER, PROF_CAT_COMM, 8, (2ull << 32) | 4);
  ev(w, t + 6000, PROF_EV_RANGE_END, BARRIER, 0, 0, 0);
  ev(w, t + 6000, PROF_EV_RANGE_BEGIN, LOAD, PROF_CAT_DATA, 0, 0);
  ev(w, t + 8000, PROF_EV_RANGE_END, LOAD, 0, 0, 0);
  ev(w, t + 9000, PROF_EV_RANGE_BEGIN, OUTER, PROF_CAT_COMPUTE, 0, 0);
  ev(w, t + 9500, PROF_EV_RANGE_BEGIN, INNER, PROF_CAT_COMPUTE, 0, 0);
  ev(w, t + 10000, PROF_EV_STEP_END, 0, 0, 0, 0);
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
}

/* The n-th event of process `pid` with this phase and name (NULL if none). */
static const prof__jv *find_event(const prof__jv *evs, int pid, const char *ph, const char *name, int n) {
  for (size_t i = 0; i < evs->len; i++) {
    const prof__jv *e = prof__jv_at(evs, i);
    if (prof__jv_get(e, "pid")->num == pid && !strcmp(prof__jv_get(e, "ph")->str, ph) &&
        !strcmp(prof__jv_get(e, "name")->str, name) && n-- == 0)
      return e;
  }
  return NULL;
}

static int near_us(double a, double b) { return a > b - 1e-9 && a < b + 1e-9; }

static double end_us(const prof__jv *evs, int pid, const char *name) {
  const prof__jv *e = find_event(evs, pid, "X", name, 0);
  assert_non_null(e);
  return prof__jv_get(e, "ts")->num + prof__jv_get(e, "dur")->num;
}

static void comm_args_are(const prof__jv *e) {
  assert_non_null(e);
  assert_true(prof__jv_path(e, "args.bytes")->num == 8);
  assert_true(prof__jv_path(e, "args.comm_size")->num == 4);
  assert_true(prof__jv_path(e, "args.peer")->num == 1);
}

/* As in the single-trace export: ranges closed at one instant end 1 ns
 * apart, innermost first, a range's end closes the ranges it holds, and a
 * zero-length range is a begin/end pair (both with the COMM args, so that
 * speedscope pairs them), for every rank. */
static void chrome_ranges_closed_together_end_apart_and_zero_length_is_a_pair(void **state) {
  (void)state;
  char *paths[2], err[256];
  for (int r = 0; r < 2; r++) {
    paths[r] = strdup(th_tmp_path("edge-rank", ".mlpt"));
    write_edge_rank(paths[r], r);
  }
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, 2, err), 0);
  size_t len;
  char *text = write_to_string(rs, 1, &len);
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  const prof__jv *evs = prof__jv_get(v, "traceEvents");
  for (int pid = 0; pid < 2; pid++) {
    assert_true(near_us(end_us(evs, pid, "layer"), 5.0));
    assert_true(near_us(end_us(evs, pid, "batch"), 5.001));
    assert_true(near_us(end_us(evs, pid, "epoch"), 5.002));
    assert_true(near_us(end_us(evs, pid, "inner"), 10.0));
    assert_true(near_us(end_us(evs, pid, "outer"), 10.001));
    assert_null(find_event(evs, pid, "X", "MPI_Barrier", 0));
    const prof__jv *b = find_event(evs, pid, "B", "MPI_Barrier", 0), *e = find_event(evs, pid, "E", "MPI_Barrier", 0);
    comm_args_are(b);
    comm_args_are(e);
    assert_true(b < e); /* begin first in the file */
    assert_true(near_us(prof__jv_get(b, "ts")->num, 6.0) && near_us(prof__jv_get(e, "ts")->num, 6.0));
    assert_string_equal(prof__jv_get(b, "cat")->str, "comm");
    assert_true(prof__jv_get(e, "tid")->num == 1);
    assert_true(near_us(prof__jv_get(find_event(evs, pid, "X", "load", 0), "ts")->num, 6.0));
    assert_true(near_us(end_us(evs, pid, "step 0"), 10.0));
    /* The thread's name names its track, once per rank. */
    const prof__jv *tn;
    int named = 0;
    for (int n = 0; (tn = find_event(evs, pid, "M", "thread_name", n)) != NULL; n++)
      if (prof__jv_get(tn, "tid")->num == 1) {
        assert_string_equal(prof__jv_path(tn, "args.name")->str, "trainer");
        named++;
      }
    assert_int_equal(named, 1);
  }
  prof__jv_free(v);
  free(text);
  prof__ranks_free(rs);
  free(paths[0]);
  free(paths[1]);
}

static void directory_and_bad_input(void **state) {
  (void)state;
  char err[256], **paths;
  char *bad[] = {(char *)"/nonexistent/mlprof-ranks"};
  assert_true(prof__ranks_paths(bad, 1, &paths, err) < 0);
  const char *dir = th_tmp_path("rankdir", "");
  assert_int_equal(mkdir(dir, 0755), 0);
  char *dirs[] = {(char *)dir};
  assert_true(prof__ranks_paths(dirs, 1, &paths, err) < 0); /* empty: no traces */
  char p[512];
  snprintf(p, sizeof p, "%s/x.r0.mlpt", dir);
  FILE *f = fopen(p, "w");
  fputs("not a trace", f);
  fclose(f);
  assert_int_equal(prof__ranks_paths(dirs, 1, &paths, err), 1);
  prof__ranks *rs;
  assert_true(prof__ranks_run(&rs, paths, 1, err) < 0);
  assert_null(rs);
  prof__ranks_paths_free(paths, 1);
}

/* 256 generated ranks with one straggler: named, and the summaries stay small. */
static void many_ranks(void **state) {
  (void)state;
  enum { N = 256 };
  const char *dir = th_tmp_path("rank256", "");
  assert_int_equal(mkdir(dir, 0755), 0);
  for (int r = 0; r < N; r++) {
    char p[512];
    snprintf(p, sizeof p, "%s/t.r%03d.mlpt", dir, r);
    rank_plan plan = {.rank = r, .steps = 4, .compute_ms = r == 77 ? 50 : 30, .host = "one", .mono_base = 1000 * MS};
    write_rank(p, &plan);
  }
  char **paths, err[256], *dirs[] = {(char *)dir};
  assert_int_equal(prof__ranks_paths(dirs, 1, &paths, err), N);
  prof__ranks *rs;
  assert_int_equal(prof__ranks_run(&rs, paths, N, err), 0);
  assert_int_equal(rs->n, N);
  assert_true(rs->straggler >= 0);
  assert_int_equal(rs->r[rs->straggler].rank, 77);
  assert_true(rs->nstep_min <= 64); /* per-step state follows steps, not events or ranks */
  prof__ranks_free(rs);
  prof__ranks_paths_free(paths, N);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(straggler_named_with_excess_and_phase),
      cmocka_unit_test(wait_imbalance_share_and_bytes),
      cmocka_unit_test(hosts_aligned_by_mpi_offsets),
      cmocka_unit_test(json_ranks_section),
      cmocka_unit_test(chrome_one_process_per_rank),
      cmocka_unit_test(chrome_ranges_closed_together_end_apart_and_zero_length_is_a_pair),
      cmocka_unit_test(directory_and_bad_input),
      cmocka_unit_test(many_ranks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
