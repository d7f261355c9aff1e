/* test_mem_run.c — memory profiling end to end: `mlprof run` preloading
 * libmlprof.so into an unmodified program (tests/progs/mem_prog.c) and a
 * program linked against it (tests/progs/mem_linked.c), in every mode;
 * the planted leaks must come back with their exact bytes, counts and
 * functions. Under load (200 000 malloc/free pairs in a fraction of a
 * second) full mode with the default ring must still be exact, and a trace
 * recorded lossy on purpose must withhold the leak list and the growth
 * finding and say why, in text, JSON and HTML.
 *
 * Under ASan (MLPROF_SANITIZED) every test skips: ASan owns malloc, so the
 * interposer never sees an allocation, and an instrumented library cannot
 * be preloaded into an uninstrumented program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/util/jsonparse.h"
#include "helpers.h"

#define CLI MLPROF_BIN_DIR "/mlprof"
#define PROG MLPROF_BIN_DIR "/tests/progs/mem_prog"
#define LINKED MLPROF_BIN_DIR "/tests/progs/mem_linked"
#define EARLY MLPROF_BIN_DIR "/tests/progs/mem_early"

static int sanitized(void) {
#ifdef MLPROF_SANITIZED
  return 1;
#else
  return 0;
#endif
}

/* Run a command, parse its stdout as JSON. */
static prof__jv *run_json(const char *cmd, int want_rc) {
  const char *out = th_tmp_path("mem_run", ".json");
  char full[4096];
  snprintf(full, sizeof full, "%s >'%s' 2>/dev/null", cmd, out);
  assert_int_equal(th_run(full, NULL), want_rc);
  size_t len;
  char *text = th_read_file(out, &len);
  assert_non_null(text);
  char err[256];
  prof__jv *v = prof__jv_parse(text, len, err);
  if (!v) fprintf(stderr, "bad JSON (%s): %.300s\n", err, text);
  assert_non_null(v);
  free(text);
  return v;
}

static const char *frame0(const prof__jv *leak) {
  const prof__jv *st = prof__jv_get(leak, "stack");
  const prof__jv *f = st ? prof__jv_at(st, 0) : NULL;
  return f && f->type == PROF_JV_STR ? f->str : "";
}

static double num(const prof__jv *obj, const char *key) {
  const prof__jv *v = prof__jv_path(obj, key);
  assert_non_null(v);
  assert_int_equal(v->type, PROF_JV_NUM);
  return v->num;
}

/* The leak group whose innermost function is `fn`, or NULL. */
static const prof__jv *leak_of(const prof__jv *mem, const char *fn) {
  const prof__jv *leaks = prof__jv_get(mem, "leaks");
  assert_non_null(leaks);
  for (size_t i = 0; i < leaks->len; i++)
    if (strcmp(frame0(prof__jv_at(leaks, i)), fn) == 0) return prof__jv_at(leaks, i);
  return NULL;
}

static void expect_leak(const prof__jv *mem, const char *fn, double bytes, double count) {
  const prof__jv *l = leak_of(mem, fn);
  if (!l) fprintf(stderr, "no leak group in %s\n", fn);
  assert_non_null(l);
  assert_true(num(l, "bytes") == bytes);
  assert_true(num(l, "count") == count);
}

/* No leak stack may show a profiler function. */
static void no_profiler_frames(const prof__jv *mem) {
  const prof__jv *leaks = prof__jv_get(mem, "leaks");
  for (size_t i = 0; i < leaks->len; i++) {
    const prof__jv *st = prof__jv_get(prof__jv_at(leaks, i), "stack");
    for (size_t k = 0; st && k < st->len; k++) assert_null(strstr(prof__jv_at(st, k)->str, "prof_"));
  }
}

static void full_mode_finds_planted_leaks_exactly(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run --mem full -q -f json -o %s -- %s all", CLI, th_tmp_path("full", ".mlpt"), PROG);
  prof__jv *r = run_json(cmd, 0); /* 0: the program's own allocator checks passed */
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  assert_string_equal(prof__jv_get(mem, "mode")->str, "full");
  expect_leak(mem, "leak_big", 200000, 2);
  expect_leak(mem, "leak_calloc", 20480, 5);
  expect_leak(mem, "leak_aligned", 3000 + 8192, 2);
  expect_leak(mem, "realloc_chain", 50000, 1); /* only the last block of the chain */
  /* freed blocks never leak: temporaries, aligned frees, the cross-thread hand-off */
  assert_null(leak_of(mem, "no_leaks"));
  assert_null(leak_of(mem, "producer"));
  assert_null(leak_of(mem, "consumer"));
  assert_true(num(mem, "unmatched_frees") == 0);
  no_profiler_frames(mem);
  /* the 1000 malloc(64)/free pairs are the top temporary site */
  const prof__jv *temp = prof__jv_at(prof__jv_path(mem, "sites.temporary"), 0);
  assert_non_null(temp);
  assert_string_equal(frame0(temp), "no_leaks");
  assert_true(num(temp, "calls") >= 1000);
  /* a memory_leak finding names the planted bytes */
  const prof__jv *f = prof__jv_get(r, "findings");
  int found = 0;
  for (size_t i = 0; f && i < f->len; i++)
    found |= strcmp(prof__jv_get(prof__jv_at(f, i), "id")->str, "memory_leak") == 0;
  assert_true(found);
  prof__jv_free(r);
}

static int has_finding(const prof__jv *r, const char *id) {
  const prof__jv *f = prof__jv_get(r, "findings");
  for (size_t i = 0; f && i < f->len; i++)
    if (strcmp(prof__jv_get(prof__jv_at(f, i), "id")->str, id) == 0) return 1;
  return 0;
}

static int withheld(const prof__jv *mem, const char *what) {
  const prof__jv *w = prof__jv_get(mem, "withheld");
  assert_non_null(w);
  for (size_t i = 0; i < w->len; i++)
    if (strcmp(prof__jv_at(w, i)->str, what) == 0) return 1;
  return 0;
}

static void full_mode_under_load_is_exact_with_the_default_ring(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run --mem full -q -f json -o %s -- %s churn 200000", CLI,
           th_tmp_path("churn", ".mlpt"), PROG);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  assert_true(num(mem, "lost_events") == 0);
  assert_int_equal(prof__jv_get(mem, "withheld")->len, 0);
  assert_true(num(mem, "allocs") == 200001); /* the truth: 200 000 pairs and one leak */
  assert_true(num(mem, "leaked_blocks") == 1);
  assert_true(num(mem, "leaked_bytes") == 12345);
  assert_int_equal(prof__jv_get(mem, "leaks")->len, 1);
  expect_leak(mem, "churn_leak", 12345, 1);
  assert_true(num(mem, "unmatched_frees") == 0);
  assert_false(has_finding(r, "lost_events"));
  prof__jv_free(r);
}

static void lossy_trace_withholds_leaks_and_growth(void **state) {
  (void)state;
  if (sanitized()) skip();
  const char *trace = th_tmp_path("lossy", ".mlpt");
  char cmd[2048];
  /* the same program records growth and a leak when nothing is lost ... */
  snprintf(cmd, sizeof cmd, "MLPROF_MEM=full MLPROF_OUTPUT=%s %s burst 20000", trace, LINKED);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s report -q -f json %s", CLI, trace);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_true(num(mem, "lost_events") == 0);
  expect_leak(mem, "linked_leak", 77777, 1);
  assert_true(has_finding(r, "memory_growth"));
  assert_true(has_finding(r, "memory_leak"));
  prof__jv_free(r);
  /* ... and withholds both when a small ring dropped events on purpose
   * (a trace of its own: an existing trace is never written over) */
  trace = th_tmp_path("lossy", ".mlpt");
  snprintf(cmd, sizeof cmd, "MLPROF_MEM=full MLPROF_RING_FULL=drop MLPROF_RING_KB=16 MLPROF_OUTPUT=%s %s burst 20000",
           trace, LINKED);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s report -q -f json %s", CLI, trace);
  r = run_json(cmd, 0);
  mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  assert_true(num(mem, "lost_events") > 0);
  assert_true(withheld(mem, "leaks") && withheld(mem, "memory_leak"));
  assert_true(withheld(mem, "growth_bytes_per_step") && withheld(mem, "memory_growth"));
  assert_int_equal(prof__jv_get(mem, "leaks")->len, 0);
  assert_int_equal(prof__jv_get(mem, "leaked_bytes")->type, PROF_JV_NULL);
  assert_null(prof__jv_get(mem, "growth_bytes_per_step"));
  assert_false(has_finding(r, "memory_leak"));
  assert_false(has_finding(r, "memory_growth"));
  assert_true(has_finding(r, "lost_events"));
  prof__jv_free(r);
  /* the text and HTML reports say why, next to the numbers */
  const char *txt = th_tmp_path("lossy", ".txt");
  snprintf(cmd, sizeof cmd, "%s report -q %s", CLI, trace);
  assert_int_equal(th_run(cmd, txt), 0);
  char *text = th_read_file(txt, NULL);
  assert_non_null(text);
  const char *sec = strstr(text, "\nMemory (mode full)");
  assert_non_null(sec);
  assert_non_null(strstr(sec, "LOSSY: "));
  assert_non_null(strstr(sec, "the leak list and the growth finding withheld"));
  assert_non_null(strstr(sec, "at least "));
  assert_null(strstr(sec, "still allocated at exit"));
  free(text);
  const char *html = th_tmp_path("lossy", ".html");
  snprintf(cmd, sizeof cmd, "%s report -q -f html -o %s %s", CLI, html, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  text = th_read_file(html, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "Lossy trace."));
  assert_non_null(strstr(text, "the leak list and the growth finding withheld"));
  assert_null(strstr(text, "Still allocated at exit ("));
  free(text);
}

static void counts_mode_has_peak_but_no_events(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run --mem counts -q -f json -o %s -- %s grow 12", CLI, th_tmp_path("counts", ".mlpt"),
           PROG);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  assert_string_equal(prof__jv_get(mem, "source")->str, "counters");
  assert_true(num(mem, "peak_live_bytes") >= 12.0 * 1048576); /* usable bytes of 12 x 1 MiB */
  assert_true(num(mem, "peak_live_bytes") < 16.0 * 1048576);
  assert_true(num(mem, "bytes_allocated") >= 12.0 * 1048576);
  assert_int_equal(prof__jv_get(mem, "leaks")->len, 0); /* counts: no stacks, no leaks */
  prof__jv_free(r);
}

static void sampled_mode_estimates_are_unbiased(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[2048];
  /* 40 blocks of 1 MiB, never freed, one mean sampling interval of 512 KiB */
  snprintf(cmd, sizeof cmd, "%s run --mem sampled -q -f json -o %s -- %s grow 40", CLI,
           th_tmp_path("sampled", ".mlpt"), PROG);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  const prof__jv *l = leak_of(mem, "grow");
  assert_non_null(l);
  double est = num(l, "bytes"), truth = 40.0 * 1048576;
  assert_true(est > truth * 0.75 && est < truth * 1.25);
  prof__jv_free(r);
}

static void off_mode_records_no_memory(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run --mem off -q -f json -o %s -- %s leaks", CLI, th_tmp_path("off", ".mlpt"), PROG);
  prof__jv *r = run_json(cmd, 0);
  assert_null(prof__jv_get(r, "memory"));
  prof__jv_free(r);
}

/* Default (sampled) mode with a writer period far longer than the whole
 * run: the periodic mem.live_bytes samples cannot place the steps, the
 * points taken at each step end do. */
static void growth_is_seen_when_steps_are_shorter_than_the_writer_period(void **state) {
  (void)state;
  if (sanitized()) skip();
  const char *trace = th_tmp_path("linked-short", ".mlpt");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "MLPROF_MEM=sampled MLPROF_FLUSH_MS=10000 MLPROF_OUTPUT=%s %s", trace, LINKED);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s report -q -f json %s", CLI, trace);
  prof__jv *r = run_json(cmd, 0);
  assert_true(has_finding(r, "memory_growth"));
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  /* 1 MiB kept per step (usable size may round up a little) */
  double g = num(mem, "growth_bytes_per_step");
  assert_true(g >= 1048576 && g < 1.01 * 1048576);
  prof__jv_free(r);
}

static void linked_program_pools_steps_and_growth(void **state) {
  (void)state;
  if (sanitized()) skip();
  const char *trace = th_tmp_path("linked", ".mlpt");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "MLPROF_MEM=full MLPROF_OUTPUT=%s %s", trace, LINKED);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s report -q -f json %s", CLI, trace);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  expect_leak(mem, "linked_leak", 77777, 1);
  expect_leak(mem, "keep_growing", 10.0 * 1048576, 10);
  const prof__jv *pl = leak_of(mem, "pool_user");
  assert_non_null(pl);
  assert_string_equal(prof__jv_get(pl, "pool")->str, "arena");
  assert_true(num(pl, "bytes") == 4096 && num(pl, "count") == 1);
  const prof__jv *pool = prof__jv_at(prof__jv_get(mem, "pools"), 0);
  assert_non_null(pool);
  assert_string_equal(prof__jv_get(pool, "name")->str, "arena");
  assert_true(num(pool, "peak_live_bytes") == 8192 && num(pool, "allocs") == 10);
  const prof__jv *steps = prof__jv_get(mem, "steps");
  assert_int_equal(steps->len, 10);
  assert_true(num(prof__jv_at(steps, 3), "allocs") == 101); /* 1 MiB + 100 temporaries */
  /* the heap made before prof_init is in every figure: 4 MiB over it */
  double before = num(mem, "start_live_bytes") - num(mem, "start_recorded_bytes");
  assert_true(num(prof__jv_at(steps, 3), "live_end_bytes") == 4.0 * 1048576 + before);
  assert_true(num(mem, "growth_bytes_per_step") == 1048576);
  const prof__jv *rg = prof__jv_at(prof__jv_get(mem, "ranges"), 0);
  assert_string_equal(prof__jv_get(rg, "name")->str, "work");
  assert_true(num(rg, "allocs") == 1010);
  const prof__jv *f = prof__jv_get(r, "findings");
  int growth = 0;
  for (size_t i = 0; f && i < f->len; i++)
    growth |= strcmp(prof__jv_get(prof__jv_at(f, i), "id")->str, "memory_growth") == 0;
  assert_true(growth);
  no_profiler_frames(mem);
  prof__jv_free(r);
}

/* The site (first meaningful frame) in memory.sites.by_peak, or NULL. */
static const prof__jv *peak_site(const prof__jv *mem, const char *frame) {
  const prof__jv *v = prof__jv_path(mem, "sites.by_peak");
  for (size_t i = 0; v && i < v->len; i++) {
    const prof__jv *f = prof__jv_get(prof__jv_at(v, i), "frame");
    if (f && f->type == PROF_JV_STR && strcmp(f->str, frame) == 0) return prof__jv_at(v, i);
  }
  return NULL;
}

/* tests/progs/mem_early.c: 16 MiB made before prof_init, 8 MiB held for a
 * moment inside step 0. In every mode the heap peak counts both (24 MiB and
 * the small blocks) and lies in step 0; the heap live at the start is said,
 * and with events the 16 MiB block has its call site. */
static void heap_made_before_init_counts_and_peak_lies_in_its_step(void **state) {
  (void)state;
  if (sanitized()) skip();
  const char *modes[] = {"counts", "sampled", "full"};
  for (int m = 0; m < 3; m++) {
    const char *trace = th_tmp_path("early", ".mlpt");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "MLPROF_MEM=%s MLPROF_REPORT=0 MLPROF_OUTPUT=%s %s", modes[m], trace, EARLY);
    assert_int_equal(th_run(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s report -q -f json %s", CLI, trace);
    prof__jv *r = run_json(cmd, 0);
    const prof__jv *mem = prof__jv_get(r, "memory");
    assert_non_null(mem);
    double peak = num(mem, "peak_live_bytes"), mib = 1048576;
    fprintf(stderr, "mode %s: heap peak %.0f bytes\n", modes[m], peak);
    assert_true(peak >= 24 * mib + 64000 && peak < 24.5 * mib);
    const prof__jv *step = prof__jv_get(mem, "peak_step");
    assert_non_null(step);
    assert_int_equal(step->type, PROF_JV_NUM);
    assert_true(step->num == 0);
    assert_true(num(mem, "start_live_bytes") >= 16 * mib + 64000 && num(mem, "start_live_bytes") < 16.5 * mib);
    assert_true(num(mem, "start_live_blocks") >= 1001);
    if (m > 0) {
      const prof__jv *early = peak_site(mem, "early_block");
      assert_non_null(early);
      assert_true(num(early, "bytes") == 16 * mib);
      assert_true(num(mem, "start_recorded_bytes") == 16 * mib);
      assert_null(leak_of(mem, "early_block")); /* freed after the steps: its FREE was seen */
    }
    prof__jv_free(r);
  }
}

static void children_that_exec_get_their_own_trace(void **state) {
  (void)state;
  if (sanitized()) skip();
  char dir[512], cmd[4096];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("children", ""));
  snprintf(cmd, sizeof cmd, "mkdir -p %s && %s run -q --no-report -o %s/top.mlpt -- /bin/sh -c '%s leaks' >/dev/null 2>&1"
           " && ls %s | grep -c '^mem_prog\\.[0-9]*\\.mlpt$'", dir, CLI, dir, PROG, dir);
  const char *out = th_tmp_path("children", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_int_equal(atoi(text), 1);
  free(text);
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && %s run -q --no-report --no-children -o %s/top.mlpt -- "
           "/bin/sh -c '%s leaks' >/dev/null 2>&1; ls %s | grep -c '^mem_prog' ", dir, dir, CLI, dir, PROG, dir);
  th_run(cmd, out);
  text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_int_equal(atoi(text), 0);
  free(text);
}

/* The documented variables hold under `mlprof run`: MLPROF_OUTPUT names the
 * trace's folder (created when missing), stdout stays the program's, and the
 * three report files are named on stderr. */
static void environment_names_the_output_and_stdout_stays_the_programs(void **state) {
  (void)state;
  if (sanitized()) skip();
  char dir[512], cmd[4096], path[700];
  snprintf(dir, sizeof dir, "%s/runs/a/", th_tmp_path("runenv", ""));
  const char *out = th_tmp_path("runenv", ".out"), *err = th_tmp_path("runenv", ".err");
  snprintf(cmd, sizeof cmd, "MLPROF_REPORT=1 MLPROF_OUTPUT='%s' %s run -q -- /bin/echo hello >'%s' 2>'%s'", dir, CLI, out, err);
  assert_int_equal(th_run(cmd, NULL), 0);
  char *text = th_read_file(out, NULL), *etext = th_read_file(err, NULL);
  assert_non_null(text);
  assert_non_null(etext);
  assert_string_equal(text, "hello\n");
  const char *named = strstr(etext, "mlprof: reports ");
  assert_non_null(named);
  assert_non_null(strstr(named, ".report.html"));
  assert_non_null(strstr(etext, dir)); /* the trace is in MLPROF_OUTPUT's folder */
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^echo\\.[0-9]*\\.mlpt\\.report\\.html$'", dir);
  snprintf(path, sizeof path, "%s", th_tmp_path("runenv", ".n"));
  assert_int_equal(th_run(cmd, path), 0);
  free(text);
  text = th_read_file(path, NULL);
  assert_non_null(text);
  assert_int_equal(atoi(text), 1);
  free(text);
  free(etext);
}

/* The thread that writes the memory counters has one name everywhere: the
 * trace's thread table says what the OS (and the resources view) says. */
static void memory_track_has_the_writer_threads_name(void **state) {
  (void)state;
  if (sanitized()) skip();
  char cmd[4096];
  const char *trace = th_tmp_path("wname", ".mlpt");
  snprintf(cmd, sizeof cmd, "%s run -q --no-report -o %s -- %s grow 5 >/dev/null 2>&1 && %s info %s | grep -c 'mlprof-writer'",
           CLI, trace, PROG, CLI, trace);
  const char *out = th_tmp_path("wname", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  snprintf(cmd, sizeof cmd, "%s info %s | grep -q 'mlprof-memory'", CLI, trace);
  assert_int_not_equal(th_run(cmd, NULL), 0);
}

/* MLPROF_REPORT=0 under `mlprof run`: a trace and no analysis. */
static void report_zero_writes_no_report(void **state) {
  (void)state;
  if (sanitized()) skip();
  char dir[512], cmd[4096];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("runrep", ""));
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s' && MLPROF_REPORT=0 %s run -q -o '%s/t.mlpt' -- /bin/echo hi >/dev/null 2>&1 && "
           "test -s '%s/t.mlpt' && ! ls '%s' | grep -q report",
           dir, CLI, dir, dir, dir);
  assert_int_equal(th_run(cmd, NULL), 0);
}

static void missing_library_is_reported(void **state) {
  (void)state;
  const char *out = th_tmp_path("nolib", ".txt");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "MLPROF_LIBRARY=/nonexistent/libmlprof.so %s run -- /bin/true 2>&1", CLI);
  assert_int_equal(th_run(cmd, out), 1);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "MLPROF_LIBRARY"));
  free(text);
  snprintf(cmd, sizeof cmd, "%s run 2>&1", CLI);
  assert_int_equal(th_run(cmd, out), 1);
}

static void python_runs_under_the_launcher(void **state) {
  (void)state;
  if (sanitized()) skip();
  /* the interpreter itself, not a wrapper script (pyenv shims exec it) */
  const char *exe_file = th_tmp_path("python", ".txt");
  if (th_run("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", exe_file) != 0) skip();
  char *exe = th_read_file(exe_file, NULL);
  assert_non_null(exe);
  exe[strcspn(exe, "\n")] = 0;
  char cmd[2048];
  /* exact counts: the sampled mode's bytes_allocated is an estimate (about
   * +-15 % here), which a bound this close to the truth would make flaky */
  snprintf(cmd, sizeof cmd,
           "%s run --mem counts --no-children -q -f json -o %s -- %s -c 'x=[bytearray(1000) for i in range(20000)]'",
           CLI, th_tmp_path("python", ".mlpt"), exe);
  free(exe);
  prof__jv *r = run_json(cmd, 0);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  assert_true(num(mem, "bytes_allocated") > 20000.0 * 1000);
  prof__jv_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(full_mode_finds_planted_leaks_exactly),
      cmocka_unit_test(full_mode_under_load_is_exact_with_the_default_ring),
      cmocka_unit_test(lossy_trace_withholds_leaks_and_growth),
      cmocka_unit_test(counts_mode_has_peak_but_no_events),
      cmocka_unit_test(growth_is_seen_when_steps_are_shorter_than_the_writer_period),
      cmocka_unit_test(sampled_mode_estimates_are_unbiased),
      cmocka_unit_test(off_mode_records_no_memory),
      cmocka_unit_test(linked_program_pools_steps_and_growth),
      cmocka_unit_test(heap_made_before_init_counts_and_peak_lies_in_its_step),
      cmocka_unit_test(children_that_exec_get_their_own_trace),
      cmocka_unit_test(missing_library_is_reported),
      cmocka_unit_test(environment_names_the_output_and_stdout_stays_the_programs),
      cmocka_unit_test(report_zero_writes_no_report),
      cmocka_unit_test(memory_track_has_the_writer_threads_name),
      cmocka_unit_test(python_runs_under_the_launcher),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
