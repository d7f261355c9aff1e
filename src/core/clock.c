/* clock.c — clock source selection and TSC calibration (see clock.h).
 *
 * Calibration reads (TSC, CLOCK_MONOTONIC) pairs at the start and after a
 * sleep, keeping for each end the pair whose bracketing TSC reads were
 * closest together, so one preemption cannot skew the rate. With a 20 ms
 * window the rate error is a few parts per million.
 */
#include "clock.h"

#include <unistd.h>
#ifdef PROF_HAVE_RDTSC
#include <cpuid.h>
#endif

prof__clock prof__clk = {0, 0, 0, 1.0, 0, 1, 0};

/* Writer side of the seqlock (one writer at a time: prof_init's thread
 * before the writer thread exists, then the writer thread). */
static void publish(int use_tsc, double ns_per_tick, int calibrated) {
  unsigned s = __atomic_load_n(&prof__clk.seq, __ATOMIC_RELAXED);
  __atomic_store_n(&prof__clk.seq, s + 1, __ATOMIC_RELAXED);
  /* release stores: the odd count is visible before any field changes */
  __atomic_store_n(&prof__clk.use_tsc, use_tsc, __ATOMIC_RELEASE);
  __atomic_store(&prof__clk.ns_per_tick, &ns_per_tick, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.calibrated, calibrated, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.seq, s + 2, __ATOMIC_RELEASE);
}

/* Reader side: the three fields of one update. The retries are bounded, so
 * a signal handler that interrupted an update on its own thread goes on. */
static void snapshot(int *use_tsc, double *ns_per_tick, int *calibrated) {
  unsigned s0, s1, tries = 0;
  do {
    s0 = __atomic_load_n(&prof__clk.seq, __ATOMIC_ACQUIRE);
    /* acquire loads: the second read of the count comes after them */
    *use_tsc = __atomic_load_n(&prof__clk.use_tsc, __ATOMIC_ACQUIRE);
    __atomic_load(&prof__clk.ns_per_tick, ns_per_tick, __ATOMIC_ACQUIRE);
    *calibrated = __atomic_load_n(&prof__clk.calibrated, __ATOMIC_ACQUIRE);
    s1 = __atomic_load_n(&prof__clk.seq, __ATOMIC_RELAXED);
  } while (((s0 & 1) || s0 != s1) && ++tries < 1000);
}

void prof__clock_get(prof__clock *out) {
  int use_tsc, calibrated;
  double k;
  snapshot(&use_tsc, &k, &calibrated);
  out->use_tsc = use_tsc;
  out->tsc0 = prof__clk.tsc0;
  out->mono0 = prof__clk.mono0;
  out->ns_per_tick = k;
  out->realtime0 = prof__clk.realtime0;
  out->calibrated = calibrated;
  out->seq = 0;
}

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

/* In prof_init(), before the writer thread exists and while recording is
 * off: no thread reads the anchors meanwhile. */
void prof__clock_init(int force_monotonic) {
  int use_tsc = !force_monotonic && prof__tsc_invariant();
  uint64_t tsc0, mono0;
  if (use_tsc) {
    pair(&tsc0, &mono0);
  } else {
    mono0 = prof__mono_ns();
    tsc0 = mono0;
  }
  prof__clk.tsc0 = tsc0;
  prof__clk.mono0 = mono0;
  prof__clk.realtime0 = realtime_ns();
  publish(use_tsc, 1.0, !use_tsc);
}

/* On the writer thread, while other threads read the clock. */
void prof__clock_calibrate(unsigned ms) {
  int use_tsc, calibrated;
  double k;
  snapshot(&use_tsc, &k, &calibrated);
  if (!use_tsc) {
    publish(0, 1.0, 1);
    return;
  }
  uint64_t t1 = 0, m1 = 0;
  usleep(ms * 1000u);
  pair(&t1, &m1);
  if (t1 > prof__clk.tsc0 && m1 > prof__clk.mono0)
    publish(1, (double)(m1 - prof__clk.mono0) / (double)(t1 - prof__clk.tsc0), 1);
  else
    publish(0, 1.0, 1); /* TSC went backwards: not usable */
}

uint64_t prof__ticks_to_ns(uint64_t ticks) {
  int use_tsc, calibrated;
  double k;
  snapshot(&use_tsc, &k, &calibrated);
  if (!use_tsc) return ticks;
  int64_t d = (int64_t)(ticks - prof__clk.tsc0);
  return prof__clk.mono0 + (uint64_t)(int64_t)((double)d * k);
}
