/* test_diff.c — `mlprof diff`: two runs that differ by a planted slowdown
 * in one range; that range is ranked first, the median change and the
 * noise are right, findings that appear are listed, --fail-if-slower
 * sets the exit status, and the diff of runs of half a million steps fits in
 * a gigabyte of address space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/diff/diff.h"
#include "analyze/util/jsonparse.h"

#define MLPROF MLPROF_BIN_DIR "/mlprof"

/* 20 steps on thread 1, each: "load" (data) 0.2 ms, "forward" 2 ms,
 * "backward" 3 ms + `slow` ns, "optimizer" 0.5 ms, plus 10 us * (k % 3) of
 * untracked time as jitter. With `data_heavy`, "load" takes 20 ms. */
static const char *run_trace(const char *stem, uint64_t slow, int data_heavy) {
  tb t = tb_open(stem);
  tb_str(&t, 1, "load");
  tb_str(&t, 2, "forward");
  tb_str(&t, 3, "backward");
  tb_str(&t, 4, "optimizer");
  uint64_t ts = 1000;
  for (uint64_t k = 0; k < 20; k++) {
    const uint64_t d[] = {data_heavy ? 20000000 : 200000, 2000000, 3000000 + slow, 500000};
    const int cat[] = {PROF_CAT_DATA, PROF_CAT_COMPUTE, PROF_CAT_COMPUTE, PROF_CAT_COMPUTE};
    tb_sb(&t, 1, ts, k);
    for (uint32_t r = 0; r < 4; r++) {
      tb_b(&t, 1, ts, r + 1, cat[r]);
      ts += d[r];
      tb_e(&t, 1, ts, r + 1);
    }
    ts += 10000 * (k % 3);
    tb_se(&t, 1, ts, k);
    ts += 100;
  }
  tb_thread_named(&t, 1, "main", 0);
  return tb_close(&t, "0");
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  return an;
}

static void planted_slowdown_is_ranked_first(void **state) {
  (void)state;
  char base[512], cur[512];
  snprintf(base, sizeof base, "%s", run_trace("dbase", 0, 0));
  snprintf(cur, sizeof cur, "%s", run_trace("dnew", 1500000, 0)); /* backward +1.5 ms */
  prof__an *b = analyze(base), *c = analyze(cur);
  prof__diff d;
  assert_int_equal(prof__diff_compute(&d, b, c), 0);
  assert_true(d.nitems >= 4);
  assert_string_equal(d.items[0].kind, "range");
  assert_string_equal(d.items[0].name, "backward");
  assert_true(d.per_step);
  assert_float_equal(d.items[0].base, 3000000, 1);
  assert_float_equal(d.items[0].delta, 1500000, 1);
  for (size_t i = 1; i < d.nitems; i++) assert_float_equal(d.items[i].delta, 0, 1);
  /* median 5.7 ms + 10 us jitter -> 7.21 ms: +26.3% */
  assert_float_equal(d.base_median, 5710000, 1);
  assert_float_equal(d.cur_median, 7210000, 1);
  assert_float_equal(d.median_pct, 100.0 * 1500000 / 5710000, 1e-6);
  assert_true(d.noise_pct > 0 && d.noise_pct < 1);
  assert_true(d.significant);
  prof__diff_free(&d);
  prof__an_free(b);
  prof__an_free(c);
}

static void same_run_is_within_noise(void **state) {
  (void)state;
  prof__an *b = analyze(run_trace("dsame", 0, 0)), *c = analyze(run_trace("dsame2", 0, 0));
  prof__diff d;
  assert_int_equal(prof__diff_compute(&d, b, c), 0);
  assert_float_equal(d.median_pct, 0, 1e-9);
  assert_false(d.significant);
  assert_int_equal(d.nfindings, 0);
  prof__diff_free(&d);
  prof__an_free(b);
  prof__an_free(c);
}

static void appeared_findings_are_listed(void **state) {
  (void)state;
  prof__an *b = analyze(run_trace("dfb", 0, 0)), *c = analyze(run_trace("dfn", 0, 1));
  prof__diff d;
  assert_int_equal(prof__diff_compute(&d, b, c), 0);
  int found = 0;
  for (size_t i = 0; i < d.nfindings; i++)
    if (strcmp(d.findings[i].id, "input_bound") == 0 && d.findings[i].appeared) found = 1;
  assert_true(found);
  assert_string_equal(d.items[0].name, "load [data]");
  prof__diff_free(&d);
  assert_int_equal(prof__diff_compute(&d, c, b), 0); /* the other way round: it disappears */
  assert_int_equal(d.nfindings, 1);
  assert_string_equal(d.findings[0].id, "input_bound");
  assert_false(d.findings[0].appeared);
  prof__diff_free(&d);
  prof__an_free(b);
  prof__an_free(c);
}

static int run_cli(const char *args, char **out) {
  char cmd[2048];
  const char *log = th_tmp_path("diff-out", ".txt");
  snprintf(cmd, sizeof cmd, "'%s' %s", MLPROF, args);
  int rc = th_run(cmd, log);
  *out = th_read_file(log, NULL);
  assert_non_null(*out);
  return rc;
}

static void fail_if_slower_sets_the_exit_status(void **state) {
  (void)state;
  char base[512], cur[512], args[1400], *out;
  snprintf(base, sizeof base, "%s", run_trace("cbase", 0, 0));
  snprintf(cur, sizeof cur, "%s", run_trace("cnew", 1500000, 0));
  snprintf(args, sizeof args, "diff --quiet --fail-if-slower 30 '%s' '%s'", base, cur);
  assert_int_equal(run_cli(args, &out), 0); /* +26% is within 30% */
  assert_non_null(strstr(out, "backward"));
  free(out);
  snprintf(args, sizeof args, "diff --quiet --fail-if-slower 10 '%s' '%s'", base, cur);
  assert_int_equal(run_cli(args, &out), 4);
  assert_non_null(strstr(out, "slower (limit 10.0%)"));
  free(out);
  snprintf(args, sizeof args, "diff --quiet --fail-if-slower 10 '%s' '%s'", cur, base); /* faster */
  assert_int_equal(run_cli(args, &out), 0);
  free(out);
  snprintf(args, sizeof args, "diff --fail-if-slower ten '%s' '%s'", base, cur);
  assert_int_equal(run_cli(args, &out), 1);
  free(out);
  snprintf(args, sizeof args, "diff '%s'", base);
  assert_int_equal(run_cli(args, &out), 1);
  free(out);
  snprintf(args, sizeof args, "diff '%s' /nonexistent.mlpt", base);
  assert_int_equal(run_cli(args, &out), 2);
  free(out);
}

static void json_and_html_formats(void **state) {
  (void)state;
  char base[512], cur[512], args[1400], *out, err[256];
  snprintf(base, sizeof base, "%s", run_trace("jbase", 0, 0));
  snprintf(cur, sizeof cur, "%s", run_trace("jnew", 1500000, 0));
  const char *json = th_tmp_path("diff", ".json");
  snprintf(args, sizeof args, "diff -q --format json -o '%s' '%s' '%s'", json, base, cur);
  assert_int_equal(run_cli(args, &out), 0);
  free(out);
  size_t len;
  char *text = th_read_file(json, &len);
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  assert_string_equal(prof__jv_get(v, "schema")->str, "mlprof.diff/1");
  assert_float_equal(prof__jv_path(v, "steps.median_change_pct")->num, 100.0 * 1500000 / 5710000, 1e-6);
  const prof__jv *c0 = prof__jv_at(prof__jv_get(v, "changes"), 0);
  assert_string_equal(prof__jv_get(c0, "name")->str, "backward");
  assert_float_equal(prof__jv_get(c0, "delta_ns")->num, 1500000, 1);
  assert_int_equal(prof__jv_path(v, "findings.appeared")->type, PROF_JV_ARR);
  prof__jv_free(v);
  free(text);
  snprintf(args, sizeof args, "diff -q --format html '%s' '%s'", base, cur);
  assert_int_equal(run_cli(args, &out), 0);
  assert_non_null(strstr(out, "<!DOCTYPE html>"));
  assert_non_null(strstr(out, "id=\"changes\""));
  assert_null(strstr(out, "src=")); /* nothing loaded from elsewhere */
  assert_null(strstr(out, "https://"));
  free(out);
}

/* Function rows are time per step like the others (their sampled weight
 * turned into ns), not sample counts shown as ns; the HTML gives the base
 * p95 as the p95. The functions trace: 2 steps, fg_leaf 60 % of 10.005 s of
 * sampled time (test_html_functions.c's planted trace, in the corpus). */
static void function_rows_are_time_and_html_figures_are_their_own(void **state) {
  (void)state;
  char args[1400], *out, err[256];
  const char *t = MLPROF_SRC_DIR "/tests/fuzz/corpus/raw_test_functions_hot.mlpt";
  const char *json = th_tmp_path("diff-fn", ".json");
  snprintf(args, sizeof args, "diff -q --format json -o '%s' '%s' '%s'", json, t, t);
  assert_int_equal(run_cli(args, &out), 0);
  free(out);
  size_t len;
  char *text = th_read_file(json, &len);
  prof__jv *v = prof__jv_parse(text, len, err);
  assert_non_null(v);
  const prof__jv *ch = prof__jv_get(v, "changes");
  int functions = 0;
  for (size_t i = 0; ch && i < ch->len; i++) {
    const prof__jv *x = prof__jv_at(ch, i);
    if (strcmp(prof__jv_get(x, "kind")->str, "function") != 0) continue;
    functions++;
    /* a function's self time per step: at least a microsecond here, where
     * a sample count would read a few ns */
    assert_true(prof__jv_get(x, "base_ns")->num >= 1000);
  }
  assert_true(functions > 0);
  double p95 = prof__jv_path(v, "steps.base_p95_ns")->num, median = prof__jv_path(v, "steps.base_median_ns")->num;
  prof__jv_free(v);
  free(text);
  snprintf(args, sizeof args, "diff -q --format html '%s' '%s'", t, t);
  assert_int_equal(run_cli(args, &out), 0);
  char want[128];
  snprintf(want, sizeof want, "p95 %.3f ms", p95 / 1e6);
  if (p95 != median) assert_non_null(strstr(out, want));
  free(out);
}

/* `n` steps on thread 1, each "load" (data) then "forward". */
static const char *long_run(const char *stem, uint64_t n) {
  tb t = tb_open(stem);
  tb_str(&t, 1, "load");
  tb_str(&t, 2, "forward");
  enum { PER_STEP = 6, BATCH = 4096 / PER_STEP };
  prof__event ev[BATCH * PER_STEP];
  uint64_t ts = 1000;
  for (uint64_t k = 0; k < n;) {
    size_t m = 0;
    for (; m < BATCH * PER_STEP && k < n; k++) {
      const uint8_t type[PER_STEP] = {PROF_EV_STEP_BEGIN, PROF_EV_RANGE_BEGIN, PROF_EV_RANGE_END,
                                      PROF_EV_RANGE_BEGIN, PROF_EV_RANGE_END, PROF_EV_STEP_END};
      const uint32_t name[PER_STEP] = {0, 1, 1, 2, 2, 0};
      const uint64_t dt[PER_STEP] = {100, 10, 200, 10, 1000 + k % 5000, 10};
      for (int e = 0; e < PER_STEP; e++) {
        ts += dt[e];
        ev[m++] = (prof__event){.ts = ts, .type = type[e], .name = name[e], .cat = name[e] == 1 ? PROF_CAT_DATA : 0,
                                .a = type[e] == PROF_EV_STEP_BEGIN || type[e] == PROF_EV_STEP_END ? k : 0};
      }
    }
    assert_int_equal(prof__tw_events(t.w, 1, ev, m), 0);
    if (prof__tw_pending(t.w) > (1u << 20)) tb_flush(&t);
  }
  return tb_close(&t, "0");
}

/* The diff compares a few parts of each run's report: it never renders the
 * per-step arrays (half a million steps made it take 2 GB and fail under
 * this limit). Sanitizers map far more address space than that: skipped. */
static void diff_of_long_runs_fits_in_a_gigabyte(void **state) {
  (void)state;
#ifdef MLPROF_SANITIZED
  skip();
#endif
  const char *path = long_run("dlong", 500000);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit lim = {1ul << 30, 1ul << 30};
    prof__an *b = NULL, *c = NULL;
    char err[256];
    if (setrlimit(RLIMIT_AS, &lim) || prof__an_run_opts(&b, path, 1, err) || prof__an_run_opts(&c, path, 1, err))
      _exit(2);
    prof__diff d;
    FILE *null = fopen("/dev/null", "w");
    int rc = null ? prof__diff_compute(&d, b, c) : -1;
    if (rc == 0) rc = prof__diff_write(&d, "text", 0, null);
    _exit(rc == 0 && d.base_steps == 500000 && d.nitems == 2 ? 0 : 3);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(planted_slowdown_is_ranked_first),
      cmocka_unit_test(same_run_is_within_noise),
      cmocka_unit_test(appeared_findings_are_listed),
      cmocka_unit_test(fail_if_slower_sets_the_exit_status),
      cmocka_unit_test(json_and_html_formats),
      cmocka_unit_test(function_rows_are_time_and_html_figures_are_their_own),
      cmocka_unit_test(diff_of_long_runs_fits_in_a_gigabyte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
