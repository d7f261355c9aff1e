/* clock.c — clock source selection and TSC calibration (see clock.h).
 *
 * Calibration reads (TSC, CLOCK_MONOTONIC) pairs at the start and after a
 * sleep, keeping for each end the pair whose bracketing TSC reads were
 * closest together, so one preemption cannot skew the rate. With a 20 ms
 * window the rate error is a few parts per million.
 */
#include "clock.h"

#include <string.h>
#include <unistd.h>
#ifdef PROF_HAVE_RDTSC
#include <cpuid.h>
#endif

prof__clock prof__clk = {0, 0, 0, 1.0, 0, 1};

int prof__tsc_invariant(void) {
#ifdef PROF_HAVE_RDTSC
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1;
#else
  return 0;
#endif
}

static uint64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One (tsc, mono) pair with the tightest bracket out of a few tries. */
static void pair(uint64_t *tsc, uint64_t *mono) {
#ifdef PROF_HAVE_RDTSC
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t t0 = __rdtsc();
    uint64_t m = prof__mono_ns();
    uint64_t t1 = __rdtsc();
    if (t1 - t0 < best) {
      best = t1 - t0;
      *tsc = t0 + (t1 - t0) / 2;
      *mono = m;
    }
  }
#else
  *tsc = *mono = prof__mono_ns();
#endif
}

void prof__clock_init(int force_monotonic) {
  prof__clock c;
  memset(&c, 0, sizeof c);
  c.use_tsc = !force_monotonic && prof__tsc_invariant();
  c.ns_per_tick = 1.0;
  if (c.use_tsc) {
    pair(&c.tsc0, &c.mono0);
    c.calibrated = 0;
  } else {
    c.mono0 = prof__mono_ns();
    c.tsc0 = c.mono0;
    c.calibrated = 1;
  }
  c.realtime0 = realtime_ns();
  prof__clk = c;
}

void prof__clock_calibrate(unsigned ms) {
  if (!prof__clk.use_tsc) {
    prof__clk.calibrated = 1;
    return;
  }
  uint64_t t1 = 0, m1 = 0;
  usleep(ms * 1000u);
  pair(&t1, &m1);
  if (t1 > prof__clk.tsc0 && m1 > prof__clk.mono0)
    prof__clk.ns_per_tick = (double)(m1 - prof__clk.mono0) / (double)(t1 - prof__clk.tsc0);
  else
    prof__clk.use_tsc = 0; /* TSC went backwards: not usable */
  prof__clk.calibrated = 1;
}

uint64_t prof__ticks_to_ns(uint64_t ticks) {
  if (!prof__clk.use_tsc) return ticks;
  int64_t d = (int64_t)(ticks - prof__clk.tsc0);
  return prof__clk.mono0 + (uint64_t)(int64_t)((double)d * prof__clk.ns_per_tick);
}
