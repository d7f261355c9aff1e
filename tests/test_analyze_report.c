/* test_analyze_report.c — the text and JSON reports and the report files
 * written at shutdown, on a hand-built trace with known numbers; a trace
 * whose step thread lost events withholds the step findings and says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"

/* Four steps of 1000 ns on thread 1: "load" (data) 300 ns, "forward"
 * (compute) 600 ns, 100 ns untracked; a loader thread with a name. */
static const char *report_trace_lost(uint64_t lost_main, uint64_t lost_loader) {
  tb t = tb_open("report");
  tb_str(&t, 1, "load \"batch\"");
  tb_str(&t, 2, "forward");
  for (uint64_t i = 0; i < 4; i++) {
    uint64_t b = 10000 + i * 1000;
    tb_sb(&t, 1, b, i);
    tb_b(&t, 1, b, 1, PROF_CAT_DATA);
    tb_e(&t, 1, b + 300, 1);
    tb_b(&t, 1, b + 300, 2, PROF_CAT_COMPUTE);
    tb_e(&t, 1, b + 900, 2);
    tb_se(&t, 1, b + 1000, i);
  }
  tb_thread_named(&t, 1, "main", lost_main);
  tb_thread_named(&t, 2, "loader", lost_loader);
  return tb_close(&t, "1");
}

static const char *report_trace(void) { return report_trace_lost(0, 0); }

static char *report_string(const char *path, const char *format, int *rc) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  *rc = prof__report_write(an, format, f);
  fclose(f);
  prof__an_free(an);
  return buf;
}

static void text_report_names_the_facts(void **state) {
  (void)state;
  int rc;
  char *t = report_string(report_trace(), "text", &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(t, "unit-train"));
  assert_non_null(strstr(t, "pid 4242"));
  assert_non_null(strstr(t, "testhost"));
  assert_non_null(strstr(t, "lost 0 events"));
  assert_non_null(strstr(t, "[high] input_bound"));
  assert_non_null(strstr(t, "data       30.0%"));
  assert_non_null(strstr(t, "compute    60.0%"));
  assert_non_null(strstr(t, "untracked 10.0%"));
  assert_non_null(strstr(t, "misuse 1"));
  /* forward (self 2.4 us) ranks above load (1.2 us) */
  char *fwd = strstr(t, "forward "), *load = strstr(t, "load \"batch\"");
  assert_non_null(fwd);
  assert_non_null(load);
  assert_true(strstr(t, "Ranges by self time") < fwd && fwd < load);
  assert_null(strstr(t, "TRUNCATED"));
  free(t);
}

static const prof__jv *must(const prof__jv *root, const char *path) {
  const prof__jv *v = prof__jv_path(root, path);
  if (!v) fail_msg("missing key %s", path);
  return v;
}

static void json_report_has_the_documented_keys(void **state) {
  (void)state;
  int rc;
  const char *path = report_trace();
  char *t = report_string(path, "json", &rc);
  assert_int_equal(rc, 0);
  char err[128];
  prof__jv *v = prof__jv_parse(t, strlen(t), err);
  if (!v) fail_msg("%s", err);
  assert_string_equal(must(v, "schema")->str, "mlprof.report/1");
  assert_string_equal(must(v, "trace.path")->str, path);
  assert_string_equal(must(v, "trace.program")->str, "unit-train");
  assert_true(must(v, "trace.pid")->num == 4242);
  assert_true(must(v, "trace.lost_events")->num == 0);
  assert_int_equal(must(v, "trace.truncated")->type, PROF_JV_BOOL);
  assert_int_equal(must(v, "trace.truncated")->boolean, 0);
  assert_true(must(v, "trace.misuse")->num == 1);
  assert_true(must(v, "steps.count")->num == 4);
  assert_true(must(v, "steps.median_ns")->num == 1000);
  const prof__jv *per = must(v, "steps.per_step");
  assert_int_equal(per->len, 4);
  const prof__jv *s2 = prof__jv_at(per, 2);
  assert_true(must(s2, "number")->num == 2);
  assert_true(must(s2, "begin_ns")->num == 12000);
  assert_true(must(s2, "duration_ns")->num == 1000);
  assert_true(must(s2, "breakdown.data")->num == 300);
  assert_true(must(s2, "breakdown.other")->num == 100);
  assert_true(must(v, "breakdown.total_ns")->num == 4000);
  assert_true(must(v, "breakdown.ns.compute")->num == 2400);
  assert_true(must(v, "breakdown.share.data")->num == 0.3);
  assert_true(must(v, "breakdown.share.untracked")->num == 0.1);
  const prof__jv *r0 = prof__jv_at(must(v, "ranges"), 0);
  assert_string_equal(must(r0, "name")->str, "forward");
  assert_string_equal(must(r0, "category")->str, "compute");
  assert_true(must(r0, "count")->num == 4);
  assert_true(must(r0, "total_ns")->num == 2400);
  assert_true(must(r0, "self_ns")->num == 2400);
  const prof__jv *r1 = prof__jv_at(must(v, "ranges"), 1);
  assert_string_equal(must(r1, "name")->str, "load \"batch\"");
  assert_string_equal(must(r1, "category")->str, "data");
  const prof__jv *f0 = prof__jv_at(must(v, "findings"), 0);
  assert_string_equal(must(f0, "id")->str, "input_bound");
  assert_string_equal(must(f0, "severity")->str, "high");
  assert_int_equal(must(f0, "title")->type, PROF_JV_STR);
  assert_int_equal(must(f0, "measured")->type, PROF_JV_STR);
  assert_int_equal(must(f0, "recommendation")->type, PROF_JV_STR);
  assert_int_equal(must(v, "threads")->len, 2);
  prof__jv_free(v);
  free(t);
}

static void html_is_a_page_and_unknown_formats_fail(void **state) {
  (void)state;
  int rc;
  char *t = report_string(report_trace(), "html", &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(t, "<!DOCTYPE html>"));
  assert_non_null(strstr(t, "</html>"));
  free(t);
  t = report_string(report_trace(), "yaml", &rc);
  assert_int_equal(rc, PROF_EINVAL);
  free(t);
}

static void report_files_are_written_beside_the_trace(void **state) {
  (void)state;
  const char *path = report_trace();
  char err[256], txt[600], json[600];
  assert_int_equal(prof__report_files(path, err), 0);
  snprintf(txt, sizeof txt, "%s.report.txt", path);
  snprintf(json, sizeof json, "%s.report.json", path);
  size_t len;
  char *t = th_read_file(txt, &len);
  assert_non_null(t);
  assert_non_null(strstr(t, "lost 0 events"));
  free(t);
  t = th_read_file(json, &len);
  assert_non_null(t);
  prof__jv *v = prof__jv_parse(t, len, err);
  assert_non_null(v);
  prof__jv_free(v);
  free(t);
  char html[600];
  snprintf(html, sizeof html, "%s.report.html", path);
  t = th_read_file(html, &len);
  assert_non_null(t);
  assert_non_null(strstr(t, "id=\"summary\""));
  free(t);
  assert_int_equal(prof__report_files("/nonexistent/t.mlpt", err), PROF_ENOENT);
  assert_true(strlen(err) > 0);
}

static void truncated_trace_report_warns(void **state) {
  (void)state;
  tb t = tb_open("rtrunc");
  tb_str(&t, 1, "forward");
  tb_sb(&t, 1, 0, 0);
  tb_se(&t, 1, 100, 0);
  int rc;
  char *txt = report_string(tb_abort(&t), "text", &rc);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(txt, "WARNING: the trace is truncated"));
  assert_non_null(strstr(txt, "TRUNCATED"));
  free(txt);
}

static int json_withheld_has(const prof__jv *bd, const char *id) {
  const prof__jv *w = prof__jv_get(bd, "withheld");
  assert_non_null(w);
  for (size_t i = 0; i < w->len; i++)
    if (strcmp(prof__jv_at(w, i)->str, id) == 0) return 1;
  return 0;
}

static void step_thread_losses_withhold_the_step_findings(void **state) {
  (void)state;
  int rc;
  const char *trace = report_trace_lost(5, 0);
  char *t = report_string(trace, "text", &rc);
  assert_int_equal(rc, 0);
  assert_null(strstr(t, "] input_bound")); /* 30 % data would be high, but ranges may be missing */
  const char *bd = strstr(t, "Step-time breakdown");
  assert_non_null(bd);
  assert_non_null(strstr(bd, "LOSSY: 5 events of the thread running the steps were lost"));
  assert_non_null(strstr(t, "lost_events"));
  free(t);
  t = report_string(trace, "json", &rc);
  char err[128];
  prof__jv *j = prof__jv_parse(t, strlen(t), err);
  assert_non_null(j);
  const prof__jv *b = prof__jv_get(j, "breakdown");
  assert_non_null(b);
  assert_true(prof__jv_get(b, "lost_events")->num == 5);
  assert_true(json_withheld_has(b, "input_bound") && json_withheld_has(b, "untracked_time"));
  assert_true(json_withheld_has(b, "step_time_variance") && json_withheld_has(b, "warmup_step"));
  prof__jv_free(j);
  free(t);
  t = report_string(trace, "html", &rc);
  assert_non_null(strstr(t, "Lossy trace."));
  free(t);
  /* losses on another thread leave the step thread's conclusions alone */
  trace = report_trace_lost(0, 9);
  t = report_string(trace, "json", &rc);
  j = prof__jv_parse(t, strlen(t), err);
  assert_non_null(j);
  b = prof__jv_get(j, "breakdown");
  assert_true(prof__jv_get(b, "lost_events")->num == 0);
  assert_int_equal(prof__jv_get(b, "withheld")->len, 0);
  prof__jv_free(j);
  free(t);
  t = report_string(trace, "text", &rc);
  assert_non_null(strstr(t, "[high] input_bound"));
  assert_null(strstr(t, "LOSSY"));
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(text_report_names_the_facts),
    cmocka_unit_test(json_report_has_the_documented_keys),
    cmocka_unit_test(html_is_a_page_and_unknown_formats_fail),
    cmocka_unit_test(report_files_are_written_beside_the_trace),
    cmocka_unit_test(truncated_trace_report_warns),
    cmocka_unit_test(step_thread_losses_withhold_the_step_findings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
