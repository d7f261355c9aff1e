/* test_clock.c — clock source selection and calibration against
 * CLOCK_MONOTONIC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <unistd.h>

#include "core/clock.h"

static void monotonic_fallback_is_identity(void **state) {
  (void)state;
  prof__clock_init(1);
  assert_false(prof__clk.use_tsc);
  assert_true(prof__clk.calibrated);
  uint64_t t = prof__ticks();
  assert_int_equal(prof__ticks_to_ns(t), t);
  assert_true(prof__clk.realtime0 > 1600000000ull * 1000000000ull); /* after 2020 */
}

static void calibrated_ticks_track_monotonic_time(void **state) {
  (void)state;
  prof__clock_init(0);
  prof__clock_calibrate(20);
  assert_true(prof__clk.calibrated);
  if (prof__clk.use_tsc) assert_true(prof__clk.ns_per_tick > 0.01 && prof__clk.ns_per_tick < 10.0);
  uint64_t m0 = prof__mono_ns(), t0 = prof__ticks();
  usleep(50000);
  uint64_t m1 = prof__mono_ns(), t1 = prof__ticks();
  int64_t d_ticks = (int64_t)(prof__ticks_to_ns(t1) - prof__ticks_to_ns(t0));
  int64_t d_mono = (int64_t)(m1 - m0);
  int64_t err = d_ticks - d_mono;
  if (err < 0) err = -err;
  assert_true(err < d_mono / 100); /* within 1% over 50 ms */
  /* Converted timestamps sit on the monotonic axis. */
  int64_t off = (int64_t)prof__ticks_to_ns(prof__ticks()) - (int64_t)prof__mono_ns();
  assert_true(off < 1000000 && off > -1000000);
}

/* A batch of events converts as each timestamp alone would. */
static void batch_conversion_matches_one_by_one(void **state) {
  (void)state;
  prof__clock_init(0);
  prof__clock_calibrate(20);
  prof__event ev[64];
  uint64_t want[64];
  for (int i = 0; i < 64; i++) {
    ev[i] = (prof__event){.ts = prof__ticks() + (uint64_t)i * 997u};
    want[i] = prof__ticks_to_ns(ev[i].ts);
  }
  prof__events_ticks_to_ns(ev, 64);
  for (int i = 0; i < 64; i++) assert_int_equal(ev[i].ts, want[i]);
  prof__events_ticks_to_ns(ev, 0); /* nothing to do */
}

static void ticks_never_go_backwards(void **state) {
  (void)state;
  prof__clock_init(0);
  uint64_t prev = prof__ticks();
  for (int i = 0; i < 100000; i++) {
    uint64_t t = prof__ticks();
    assert_true(t >= prev);
    prev = t;
  }
}

/* Error of the tick -> ns line against CLOCK_MONOTONIC now (monotonic minus
 * mapped), from the tightest of a few tries. */
static int64_t line_error(void) {
  int64_t best = 0;
  uint64_t width = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t m0 = prof__mono_ns(), t = prof__ticks(), m1 = prof__mono_ns();
    if (m1 - m0 < width) {
      width = m1 - m0;
      best = (int64_t)((m0 + m1) / 2 - prof__ticks_to_ns(t));
    }
  }
  return best;
}

static void reanchoring_is_continuous_and_corrects_drift(void **state) {
  (void)state;
  prof__clock_init(0);
  prof__clock_calibrate(20);
  if (!prof__clk.use_tsc) {
    assert_int_equal(prof__clock_reanchor(1000000000ull), 0); /* nothing to correct */
    skip();
  }
  prof__clock_scale_rate(1.001); /* a rate 1000 ppm off: the line runs ahead */
  usleep(30000);
  int64_t drift = line_error();
  print_message("error after 30 ms at +1000 ppm: %lld ns\n", (long long)drift);
  assert_true(drift < -15000); /* at least 15 us behind monotonic time */
  uint64_t t = prof__ticks();
  uint64_t before = prof__ticks_to_ns(t);
  /* A slew far longer than the test: the new slope is the long-baseline rate. */
  int64_t e = prof__clock_reanchor(1000000000000ull);
  uint64_t after = prof__ticks_to_ns(t);
  int64_t jump = (int64_t)(after - before);
  assert_true(e < -15000);             /* it measured the error */
  assert_true(jump > -2000 && jump < 2000); /* and the line did not jump */
  int64_t e0 = line_error();
  usleep(30000);
  int64_t e1 = line_error();
  print_message("error growth over 30 ms after re-anchoring: %lld ns (before: %lld)\n", (long long)(e1 - e0),
                (long long)drift);
  int64_t growth = e1 - e0 < 0 ? e0 - e1 : e1 - e0;
  assert_true(growth * 4 < -drift); /* the slope error is gone */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monotonic_fallback_is_identity),
      cmocka_unit_test(calibrated_ticks_track_monotonic_time),
      cmocka_unit_test(batch_conversion_matches_one_by_one),
      cmocka_unit_test(ticks_never_go_backwards),
      cmocka_unit_test(reanchoring_is_continuous_and_corrects_drift),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
