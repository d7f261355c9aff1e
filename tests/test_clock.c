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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monotonic_fallback_is_identity),
      cmocka_unit_test(calibrated_ticks_track_monotonic_time),
      cmocka_unit_test(ticks_never_go_backwards),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
