/* clock.c — clock source selection and TSC calibration (see clock.h).
 *
 * Calibration reads (TSC, CLOCK_MONOTONIC) pairs at the start and after a
 * sleep, keeping for each end the pair whose bracketing TSC reads were
 * closest together, so one preemption cannot skew the rate. With a 20 ms
 * window the rate error is a few parts per million, which over a long run
 * adds up (10 ppm is 36 ms an hour), so the writer re-anchors the line once
 * a second (prof__clock_reanchor): ticks keep mapping onto CLOCK_MONOTONIC,
 * the clock CUPTI and the other producers' timestamps are compared with.
 */
#include "clock.h"

#include <unistd.h>
#ifdef PROF_HAVE_RDTSC
#include <cpuid.h>
#endif

prof__clock prof__clk = {0, 0, 0, 1.0, 0, 1, 0};

/* The first anchor pair, for the long-baseline rate of re-anchoring. */
static uint64_t first_tsc, first_mono;

/* Writer side of the seqlock (one writer at a time: prof_init's thread
 * before the writer thread exists, then the writer thread). */
static void publish_all(int use_tsc, double ns_per_tick, int calibrated, uint64_t tsc0, uint64_t mono0) {
  unsigned s = __atomic_load_n(&prof__clk.seq, __ATOMIC_RELAXED);
  __atomic_store_n(&prof__clk.seq, s + 1, __ATOMIC_RELAXED);
  /* release stores: the odd count is visible before any field changes */
  __atomic_store_n(&prof__clk.use_tsc, use_tsc, __ATOMIC_RELEASE);
  __atomic_store(&prof__clk.ns_per_tick, &ns_per_tick, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.calibrated, calibrated, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.tsc0, tsc0, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.mono0, mono0, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__clk.seq, s + 2, __ATOMIC_RELEASE);
}

static void publish(int use_tsc, double ns_per_tick, int calibrated) {
  publish_all(use_tsc, ns_per_tick, calibrated, __atomic_load_n(&prof__clk.tsc0, __ATOMIC_RELAXED),
              __atomic_load_n(&prof__clk.mono0, __ATOMIC_RELAXED));
}

/* Reader side: the fields of one update. The retries are bounded, so a
 * signal handler that interrupted an update on its own thread goes on. */
static void snapshot5(int *use_tsc, double *ns_per_tick, int *calibrated, uint64_t *tsc0, uint64_t *mono0) {
  unsigned s0, s1, tries = 0;
  do {
    s0 = __atomic_load_n(&prof__clk.seq, __ATOMIC_ACQUIRE);
    /* acquire loads: the second read of the count comes after them */
    *use_tsc = __atomic_load_n(&prof__clk.use_tsc, __ATOMIC_ACQUIRE);
    __atomic_load(&prof__clk.ns_per_tick, ns_per_tick, __ATOMIC_ACQUIRE);
    *calibrated = __atomic_load_n(&prof__clk.calibrated, __ATOMIC_ACQUIRE);
    *tsc0 = __atomic_load_n(&prof__clk.tsc0, __ATOMIC_ACQUIRE);
    *mono0 = __atomic_load_n(&prof__clk.mono0, __ATOMIC_ACQUIRE);
    s1 = __atomic_load_n(&prof__clk.seq, __ATOMIC_RELAXED);
  } while (((s0 & 1) || s0 != s1) && ++tries < 1000);
}

static void snapshot(int *use_tsc, double *ns_per_tick, int *calibrated) {
  uint64_t t, m;
  snapshot5(use_tsc, ns_per_tick, calibrated, &t, &m);
}

void prof__clock_get(prof__clock *out) {
  int use_tsc, calibrated;
  double k;
  uint64_t tsc0, mono0;
  snapshot5(&use_tsc, &k, &calibrated, &tsc0, &mono0);
  out->use_tsc = use_tsc;
  out->tsc0 = tsc0;
  out->mono0 = mono0;
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
  *tsc = __rdtsc(); /* set on every path (the first round always wins) */
  *mono = prof__mono_ns();
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
  first_tsc = tsc0;
  first_mono = mono0;
  prof__clk.realtime0 = realtime_ns();
  publish_all(use_tsc, 1.0, !use_tsc, tsc0, mono0);
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
  if (ms) usleep(ms * 1000u);
  pair(&t1, &m1);
  if (t1 > first_tsc && m1 > first_mono)
    publish(1, (double)(m1 - first_mono) / (double)(t1 - first_tsc), 1);
  else
    publish(0, 1.0, 1); /* TSC went backwards: not usable */
}

static uint64_t map(uint64_t ticks, double k, uint64_t tsc0, uint64_t mono0) {
  int64_t d = (int64_t)(ticks - tsc0);
  return mono0 + (uint64_t)(int64_t)((double)d * k);
}

uint64_t prof__ticks_to_ns(uint64_t ticks) {
  int use_tsc, calibrated;
  double k;
  uint64_t tsc0, mono0;
  snapshot5(&use_tsc, &k, &calibrated, &tsc0, &mono0);
  if (!use_tsc) return ticks;
  return map(ticks, k, tsc0, mono0);
}

void prof__events_ticks_to_ns(prof__event *ev, size_t n) {
  int use_tsc, calibrated;
  double k;
  uint64_t tsc0, mono0;
  snapshot5(&use_tsc, &k, &calibrated, &tsc0, &mono0);
  if (!use_tsc) return;
  for (size_t i = 0; i < n; i++) ev[i].ts = map(ev[i].ts, k, tsc0, mono0);
}

/* Continuity: the new line starts where the old one is at tick t, so no
 * timestamp jumps; its slope is the long-baseline rate plus the correction
 * that closes the measured error over the next `slew_ns`. */
int64_t prof__clock_reanchor(uint64_t slew_ns) {
  int use_tsc, calibrated;
  double k;
  uint64_t tsc0, mono0, t, m;
  snapshot5(&use_tsc, &k, &calibrated, &tsc0, &mono0);
  if (!use_tsc || !calibrated || !slew_ns) return 0;
  pair(&t, &m);
  if (t <= tsc0 || t <= first_tsc || m <= first_mono) return 0;
  uint64_t mapped = map(t, k, tsc0, mono0);
  int64_t err = (int64_t)(m - mapped);
  double k_long = (double)(m - first_mono) / (double)(t - first_tsc);
  double k_new = k_long + (double)err * k_long / (double)slew_ns;
  if (!(k_new > 0.5 * k_long && k_new < 2.0 * k_long)) k_new = k_long;
  publish_all(1, k_new, 1, t, mapped);
  return err;
}

void prof__clock_scale_rate(double factor) {
  int use_tsc, calibrated;
  double k;
  snapshot(&use_tsc, &k, &calibrated);
  if (use_tsc && factor > 0) publish(use_tsc, k * factor, calibrated);
}
