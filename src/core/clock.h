/* clock.h — the profiler's timestamp source.
 *
 * On x86-64 with an invariant TSC, a timestamp is one `rdtsc`; elsewhere it
 * is CLOCK_MONOTONIC through the vDSO. Ticks are turned into nanoseconds by
 * the writer thread with a calibration measured against CLOCK_MONOTONIC, so
 * the hot path never converts. MLPROF_CLOCK=monotonic forces the fallback.
 */
#ifndef PROF_CLOCK_H
#define PROF_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "trace/event.h"
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PROF_HAVE_RDTSC 1
#endif

/* realtime0 is set by prof__clock_init() before any other thread reads it.
 * use_tsc, ns_per_tick, calibrated and the anchor pair (tsc0, mono0) change
 * when the writer thread calibrates and re-anchors, while other threads
 * convert ticks: they are written and read with atomics under the sequence
 * counter `seq` (odd while an update is in progress), so a reader never
 * mixes an old anchor with a new rate. */
typedef struct prof__clock {
  int use_tsc;          /* 1: ticks are TSC cycles; 0: ticks are ns */
  uint64_t tsc0;        /* calibration pair: TSC and monotonic ns at start */
  uint64_t mono0;
  double ns_per_tick;   /* measured; 1.0 when use_tsc == 0 */
  uint64_t realtime0;   /* CLOCK_REALTIME ns taken with mono0 */
  int calibrated;
  unsigned seq;         /* seqlock of use_tsc, ns_per_tick, calibrated */
} prof__clock;

extern prof__clock prof__clk;

static inline uint64_t prof__mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Raw ticks: the hot path's only clock read. */
static inline uint64_t prof__ticks(void) {
#ifdef PROF_HAVE_RDTSC
  if (__builtin_expect(__atomic_load_n(&prof__clk.use_tsc, __ATOMIC_RELAXED), 1)) return __rdtsc();
#endif
  return prof__mono_ns();
}

/* Decide the clock source and take the start anchors (cheap). */
void prof__clock_init(int force_monotonic);
/* Measure ns_per_tick over ~`ms` milliseconds (call off the hot path). */
void prof__clock_calibrate(unsigned ms);
/* Writer thread, about once a second: measure the error of the tick -> ns
 * line against CLOCK_MONOTONIC now (returned, in ns: monotonic minus
 * mapped), and start a new line at this point, continuous with the old one,
 * whose slope closes that error over the next `slew_ns` nanoseconds. Keeps
 * long runs from drifting against other clocks (GPU activity timestamps).
 * Returns 0 when ticks are not TSC cycles. */
int64_t prof__clock_reanchor(uint64_t slew_ns);
/* Multiply the current rate by `factor` (tests: simulate a miscalibration). */
void prof__clock_scale_rate(double factor);
/* A consistent copy of the clock (any thread). */
void prof__clock_get(prof__clock *out);
/* Convert ticks to CLOCK_MONOTONIC ns with the current calibration (any thread). */
uint64_t prof__ticks_to_ns(uint64_t ticks);
/* The same for the timestamps of n events in place, with one read of the
 * clock's parameters for all of them (the writer's batches). */
void prof__events_ticks_to_ns(prof__event *ev, size_t n);
/* Does this CPU advertise an invariant TSC? */
int prof__tsc_invariant(void);

#endif
