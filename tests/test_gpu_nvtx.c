/* test_gpu_nvtx.c — NVTX annotations become mlprof events: the same NVTX
 * workload (progs/nvtx_work.h) in this process (libmlprof.a linked in:
 * NVTX's static injection pointer), under `mlprof run` (NVTX_INJECTION64_PATH)
 * and linked with the shared libmlprof (no variable set by the user).
 * Ranges nest, counts are exact, marks, domains, registered strings,
 * start/end ranges across threads and the thread name all arrive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/session.h"
#include "trace/tids.h"
#include "gpu/gpu.h"
#include "helpers.h"
#include "mlprof.h"

#ifdef MLPROF_TEST_NVTX
#include "progs/nvtx_work.h"

#define NAMES 64

typedef struct counts {
  char name[NAMES][64];
  int begins[NAMES], marks[NAMES];
  int max_depth, bad_nesting, async_begins, async_on_lane;
  char thread_name[64];
  uint32_t main_tid;
} counts;

static int slot(counts *c, uint32_t id, char strings[][64], uint32_t nstr) {
  const char *s = id < nstr ? strings[id] : "?";
  for (int i = 0; i < NAMES; i++) {
    if (!c->name[i][0]) snprintf(c->name[i], sizeof c->name[i], "%s", s);
    if (strcmp(c->name[i], s) == 0) return i;
  }
  return 0;
}

static int count_of(const counts *c, const char *name, int marks) {
  for (int i = 0; i < NAMES; i++)
    if (strcmp(c->name[i], name) == 0) return marks ? c->marks[i] : c->begins[i];
  return 0;
}

/* Read a trace: ranges per name (begins), marks per name, the deepest
 * nesting on the thread that ran the workload, start/end ranges on lanes. */
static void read_trace(const char *path, counts *c) {
  memset(c, 0, sizeof *c);
  static char strings[4096][64];
  memset(strings, 0, sizeof strings);
  prof__reader *rd;
  char err[256];
  if (prof__reader_open(&rd, path, err) != 0) fail_msg("%s: %s", path, err);
  prof__rec r;
  int depth[8] = {0};
  uint32_t tids[8] = {0};
  while (prof__reader_next(rd, &r) == 1) {
    if (r.kind == PROF_REC_STRING && r.id < 4096) snprintf(strings[r.id], 64, "%.*s", (int)r.len, r.str);
    if (r.kind == PROF_REC_THREAD && strcmp(r.str, "nvtx-main") == 0) snprintf(c->thread_name, 64, "%s", r.str);
    if (r.kind != PROF_REC_EVENT) continue;
    int lane = r.tid >= PROF_TID_NVTX_LANE0 && r.tid < PROF_TID_NVTX_LANE0 + 16;
    int ti = 0;
    while (ti < 7 && tids[ti] && tids[ti] != r.tid) ti++;
    tids[ti] = r.tid;
    if (r.ev.type == PROF_EV_RANGE_BEGIN) {
      c->begins[slot(c, r.ev.name, strings, 4096)]++;
      if (lane) c->async_on_lane++;
      if (++depth[ti] > c->max_depth) c->max_depth = depth[ti];
    } else if (r.ev.type == PROF_EV_RANGE_END) {
      if (--depth[ti] < 0) c->bad_nesting++;
    } else if (r.ev.type == PROF_EV_MARK) {
      c->marks[slot(c, r.ev.name, strings, 4096)]++;
    }
  }
  prof__reader_close(rd);
}

static void expect_workload(const counts *c) {
  assert_int_equal(count_of(c, "outer", 0), 10);
  assert_int_equal(count_of(c, "inner", 0), 50);
  assert_int_equal(count_of(c, "mydom:dom_step", 0), 4);
  assert_int_equal(count_of(c, "async_io", 0), 3);
  assert_int_equal(c->async_on_lane, 3); /* ended on other threads: recorded on the async lanes */
  assert_int_equal(count_of(c, "checkpoint", 1), 3);
  assert_int_equal(count_of(c, "mydom:dmark", 1), 2);
  assert_int_equal(c->max_depth, 2); /* inner inside outer */
  assert_int_equal(c->bad_nesting, 0);
  assert_string_equal(c->thread_name, "nvtx-main");
}

static void in_process_static_injection(void **state) {
  (void)state;
  prof_config cfg = prof_config_default();
  cfg.output = th_tmp_path("nvtx-inproc", ".mlpt");
  cfg.report = 0;
  unsetenv("NVTX_INJECTION64_PATH");
  assert_int_equal(prof_init(&cfg), 0);
  assert_int_equal(prof_start(), 0);
  assert_int_equal(nvtx_work(), 0);
  assert_int_equal(prof_stop(), 0);
  assert_int_equal(prof_shutdown(), 0);
  counts c;
  read_trace(cfg.output, &c);
  expect_workload(&c);
}

static void under_mlprof_run(void **state) {
  (void)state;
#ifdef MLPROF_SANITIZED
  skip(); /* a sanitized libmlprof cannot be preloaded into an uninstrumented program */
#endif
  const char *trace = th_tmp_path("nvtx-run", ".mlpt");
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "env -u NVTX_INJECTION64_PATH '%s/mlprof' run -q --no-report -o '%s' -- '%s/nvtx_prog'",
           MLPROF_BIN_DIR, trace, NVTX_PROG_DIR);
  const char *out = th_tmp_path("nvtx-run-out", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  size_t n = 0;
  char *text = th_read_file(out, &n);
  assert_non_null(strstr(text ? text : "", "nvtx_prog done"));
  free(text);
  counts c;
  read_trace(trace, &c);
  expect_workload(&c);
}

static void linked_with_shared_libmlprof_needs_no_variable(void **state) {
  (void)state;
  const char *trace = th_tmp_path("nvtx-linked", ".mlpt");
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "env -u NVTX_INJECTION64_PATH MLPROF_REPORT=0 '%s/nvtx_linked' '%s'", NVTX_PROG_DIR, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  counts c;
  read_trace(trace, &c);
  expect_workload(&c);
}

static void bare_program_runs_unchanged(void **state) {
  (void)state;
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "env -u NVTX_INJECTION64_PATH '%s/nvtx_prog'", NVTX_PROG_DIR);
  const char *out = th_tmp_path("nvtx-bare-out", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  size_t n = 0;
  char *text = th_read_file(out, &n);
  assert_string_equal(text ? text : "", "nvtx_prog done\n");
  free(text);
}
#endif

/* The loader variables are pointed at libmlprof only when nobody set them
 * (nsys, the user), and only when libmlprof is a shared library (this test
 * links the static one). */
static void loader_variables_set_by_others_are_kept(void **state) {
  (void)state;
  setenv("NVTX_INJECTION64_PATH", "/opt/other-tool/libinject.so", 1);
  assert_int_equal(prof__gpu_point_env("NVTX_INJECTION64_PATH"), 0);
  assert_string_equal(getenv("NVTX_INJECTION64_PATH"), "/opt/other-tool/libinject.so");
  unsetenv("NVTX_INJECTION64_PATH");
  assert_int_equal(prof__gpu_point_env("NVTX_INJECTION64_PATH"), 0); /* static libmlprof: nothing to load */
  assert_null(getenv("NVTX_INJECTION64_PATH"));
}

#ifndef MLPROF_TEST_NVTX
static void without_nvtx_headers(void **state) {
  (void)state;
  print_message("built without the NVTX 3 headers: NVTX capture is not tested\n");
  skip();
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
#ifdef MLPROF_TEST_NVTX
      cmocka_unit_test(in_process_static_injection),
      cmocka_unit_test(under_mlprof_run),
      cmocka_unit_test(linked_with_shared_libmlprof_needs_no_variable),
      cmocka_unit_test(bare_program_runs_unchanged),
#else
      cmocka_unit_test(without_nvtx_headers),
#endif
      cmocka_unit_test(loader_variables_set_by_others_are_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
