/* test_html_axis.c — chart axes read well: linear ticks step by 1, 2 or 5
 * times a power of ten, a flat series gets distinct labels, log axes tick at
 * powers of ten with labels that tell them apart, and x ticks of steps stay
 * inside the steps shown (html_axis.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/report/html_axis.h"

/* Every label of the axis, distinct from its neighbours. */
static void labels(const prof__axis *a, char out[][32]) {
  for (size_t i = 0; i < a->n; i++) {
    prof__axis_label(a, a->v[i], out[i], 32);
    if (i) assert_string_not_equal(out[i], out[i - 1]);
  }
}

static void log_axis_of_tiny_rms_values_labels_each_decade(void **state) {
  (void)state;
  prof__axis a;
  char l[PROF_AXIS_MAX_TICKS][32];
  /* RMS values from 1e-12 to 0.14 (log10: -12 .. -0.85) */
  assert_true(prof__axis_log(&a, -12, -0.853, 6) >= 3);
  labels(&a, l);
  assert_string_equal(l[0], "1e-12");
  assert_string_equal(l[a.n - 1], "1");
  assert_true(a.n <= 7);
  for (size_t i = 0; i < a.n; i++) assert_null(strstr(l[i], "0.00"));
}

static void flat_series_gets_distinct_ticks(void **state) {
  (void)state;
  prof__axis a;
  char l[PROF_AXIS_MAX_TICKS][32];
  assert_true(prof__axis_linear(&a, 0.5, 0.5, 5) >= 3);
  labels(&a, l);
  assert_true(a.lo < 0.5 && a.hi > 0.5);
}

static void linear_ticks_are_round(void **state) {
  (void)state;
  prof__axis a;
  char l[PROF_AXIS_MAX_TICKS][32];
  prof__axis_linear(&a, 0, 1.37, 5); /* 0, 0.5, 1, 1.5 */
  labels(&a, l);
  assert_string_equal(l[1], "0.5");
  assert_true(a.hi >= 1.37);
  prof__axis_linear(&a, 0, 3.2e6, 5); /* 0, 1M, 2M, 3M, 4M */
  labels(&a, l);
  assert_string_equal(l[1], "1M");
  prof__axis_linear(&a, 0, 0.00042, 5); /* tiny values keep their digits */
  labels(&a, l);
  assert_string_not_equal(l[1], "0.00");
}

static void step_ticks_stay_inside_the_steps(void **state) {
  (void)state;
  prof__axis a;
  char l[PROF_AXIS_MAX_TICKS][32];
  prof__axis_within(&a, 0, 179, 6); /* not 0, 60, 120, 179 */
  labels(&a, l);
  assert_int_equal(a.n, 4);
  assert_string_equal(l[0], "0");
  assert_string_equal(l[1], "50");
  assert_string_equal(l[3], "150");
  assert_true(a.v[a.n - 1] <= 179);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(log_axis_of_tiny_rms_values_labels_each_decade),
      cmocka_unit_test(flat_series_gets_distinct_ticks),
      cmocka_unit_test(linear_ticks_are_round),
      cmocka_unit_test(step_ticks_stay_inside_the_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
