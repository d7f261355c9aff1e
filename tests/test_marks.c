/* test_marks.c — the "annotations" section: prof_mark and prof_counter
 * values in the text, JSON and HTML reports (counts, first and last, per
 * step), with the profiler's own counters left out. Readings past the
 * section's memory budget spill to a temporary file (tmpfile is counted). */
// wrap: tmpfile
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"

/* Three steps of 10 ms from t = 1 s on thread 1. Mark "epoch-end" in steps
 * 0 and 2 (twice in step 2); counter "lr" = 0.1, 0.05, 0.025 in steps 0..2
 * (set twice in step 1, first to 0.07); the profiler's own "mem.rss_bytes"
 * and "cpuctr/cpu_ns" counters beside them. */
static int tmpfiles; /* temporary files the analysis created */
FILE *__real_tmpfile(void);
FILE *__wrap_tmpfile(void) {
  tmpfiles++;
  return __real_tmpfile();
}

static const char *marks_trace(void) {
  tb t = tb_open("marks");
  tb_str(&t, 1, "epoch-end");
  tb_str(&t, 2, "lr");
  tb_str(&t, 3, "mem.rss_bytes");
  tb_str(&t, 4, "cpuctr/cpu_ns");
  const double lr[] = {0.1, 0.05, 0.025};
  for (uint64_t k = 0; k < 3; k++) {
    uint64_t b = 1000000000 + k * 10000000;
    tb_sb(&t, 1, b, k);
    if (k == 1) tb_counter(&t, 1, b + 1000000, 2, 0.07);
    tb_counter(&t, 1, b + 2000000, 2, lr[k]);
    tb_counter(&t, 1, b + 2500000, 3, 1e6);
    tb_counter(&t, 1, b + 2600000, 4, 5e6);
    if (k != 1) tb_mark(&t, 1, b + 3000000, 1);
    if (k == 2) tb_mark(&t, 1, b + 4000000, 1);
    tb_se(&t, 1, b + 10000000, k);
  }
  tb_thread_named(&t, 1, "main", 0);
  return tb_close(&t, "0");
}

static char *report(const char *fmt, size_t *len) {
  prof__an *an = NULL;
  char err[256], *text = NULL;
  size_t n = 0;
  assert_int_equal(prof__an_run_opts(&an, marks_trace(), 1, err), 0);
  FILE *f = open_memstream(&text, &n);
  assert_int_equal(prof__report_write(an, fmt, f), 0);
  fclose(f);
  prof__an_free(an);
  if (len) *len = n;
  return text;
}

static const prof__jv *named(const prof__jv *arr, const char *name) {
  for (size_t i = 0; arr && i < arr->len; i++)
    if (strcmp(prof__jv_get(&arr->items[i], "name")->str, name) == 0) return &arr->items[i];
  return NULL;
}

static double num(const prof__jv *o, const char *k) {
  const prof__jv *v = prof__jv_get(o, k);
  assert_non_null(v);
  return v->num;
}

static void json_has_marks_and_counters_per_step(void **state) {
  (void)state;
  size_t len;
  char err[256], *text = report("json", &len);
  prof__jv *root = prof__jv_parse(text, len, err);
  assert_non_null(root);
  const prof__jv *ann = prof__jv_get(root, "annotations");
  assert_non_null(ann);
  const prof__jv *m = named(prof__jv_get(ann, "marks"), "epoch-end");
  assert_non_null(m);
  assert_true(num(m, "count") == 3);
  assert_true(num(m, "first_step") == 0);
  assert_true(num(m, "last_step") == 2);
  const prof__jv *ps = prof__jv_get(m, "per_step");
  assert_int_equal(ps->len, 2);
  assert_true(num(&ps->items[1], "step") == 2 && num(&ps->items[1], "count") == 2);
  const prof__jv *c = named(prof__jv_get(ann, "counters"), "lr");
  assert_non_null(c);
  assert_true(num(c, "count") == 4);
  assert_true(num(c, "first") == 0.1);
  assert_true(num(c, "last") == 0.025);
  assert_true(num(c, "min") == 0.025);
  assert_true(num(c, "max") == 0.1);
  ps = prof__jv_get(c, "per_step");
  assert_int_equal(ps->len, 3);
  assert_true(num(&ps->items[1], "last") == 0.05); /* the step's last value, not its first */
  assert_null(named(prof__jv_get(ann, "counters"), "mem.rss_bytes"));
  assert_null(named(prof__jv_get(ann, "counters"), "cpuctr/cpu_ns"));
  prof__jv_free(root);
  free(text);
}

static void text_names_counts_first_and_last(void **state) {
  (void)state;
  char *t = report("text", NULL);
  const char *sec = strstr(t, "Marks and counters");
  assert_non_null(sec);
  assert_non_null(strstr(sec, "mark    epoch-end"));
  assert_non_null(strstr(sec, "3 times ; first step 0 (0.003 s), last step 2 (0.024 s)"));
  assert_non_null(strstr(sec, "counter lr"));
  assert_non_null(strstr(sec, "= 0.1, last step 2 (0.022 s) = 0.025; range 0.025 .. 0.1"));
  assert_null(strstr(sec, "mem.rss_bytes"));
  free(t);
}

static void html_has_the_section(void **state) {
  (void)state;
  char *h = report("html", NULL);
  const char *sec = strstr(h, "<section class=\"sec\" id=\"annotations\">");
  assert_non_null(sec);
  assert_non_null(strstr(h, "<a href=\"#annotations\">"));
  assert_non_null(strstr(sec, "<td>epoch-end</td>"));
  assert_non_null(strstr(sec, "<td>lr</td>"));
  free(h);
}

/* More readings than the section keeps in memory (4 MB of 16-byte
 * readings): they spill to a temporary file and come back exact. 3000 steps
 * with 100 readings of "loss" each, value step + k / 100; a mark per step. */
static void many_readings_spill_and_stay_exact(void **state) {
  (void)state;
  enum { STEPS = 3000, PER = 100 };
  tb t = tb_open("marks_many");
  tb_str(&t, 1, "loss");
  tb_str(&t, 2, "tick");
  for (uint64_t k = 0; k < STEPS; k++) {
    uint64_t b = 1000000000 + k * 1000000;
    tb_sb(&t, 1, b, k);
    for (uint64_t i = 0; i < PER; i++) tb_counter(&t, 1, b + 1000 + i * 1000, 1, (double)k + (double)i / 100);
    tb_mark(&t, 1, b + 500000, 2);
    tb_se(&t, 1, b + 900000, k);
  }
  tb_thread_named(&t, 1, "main", 0);
  prof__an *an = NULL;
  char err[256], *text = NULL;
  size_t n = 0;
  tmpfiles = 0;
  assert_int_equal(prof__an_run_opts(&an, tb_close(&t, "0"), 1, err), 0);
  assert_int_equal(tmpfiles, 1); /* the readings went to the file */
  FILE *f = open_memstream(&text, &n);
  assert_int_equal(prof__report_write(an, "json", f), 0);
  fclose(f);
  prof__an_free(an);
  prof__jv *root = prof__jv_parse(text, n, err);
  assert_non_null(root);
  const prof__jv *ann = prof__jv_get(root, "annotations");
  const prof__jv *c = named(prof__jv_get(ann, "counters"), "loss");
  assert_non_null(c);
  assert_true(num(c, "count") == STEPS * PER);
  assert_true(num(c, "first") == 0);
  assert_true(num(c, "last") == (STEPS - 1) + (double)(PER - 1) / 100);
  const prof__jv *ps = prof__jv_get(c, "per_step");
  assert_int_equal(ps->len, STEPS);
  for (size_t k = 0; k < STEPS; k++) {
    assert_true(num(&ps->items[k], "step") == (double)k);
    assert_true(num(&ps->items[k], "last") == (double)k + (double)(PER - 1) / 100);
  }
  const prof__jv *m = named(prof__jv_get(ann, "marks"), "tick");
  assert_int_equal(prof__jv_get(m, "per_step")->len, STEPS);
  assert_null(prof__jv_get(ann, "per_step_incomplete"));
  prof__jv_free(root);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(json_has_marks_and_counters_per_step),
      cmocka_unit_test(text_names_counts_first_and_last),
      cmocka_unit_test(html_has_the_section),
      cmocka_unit_test(many_readings_spill_and_stay_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
