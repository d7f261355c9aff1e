/* cpu.h — internal interface of the CPU module: the sampler (sampler.c),
 * per-thread counters (counters.c) and the PAPI door (papi.c). */
#ifndef PROF_CPU_H
#define PROF_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"
#include "trace/ev_sample.h" /* PROF_SAMPLE_CPU / _WALL: the SAMPLE event's aux */

#define PROF_SAMPLE_HZ_DEFAULT 99 /* see docs/cpu-sampling.md */
/* Above it MLPROF_SAMPLE_HZ is capped: one CPU-time timer per thread firing
 * at 10 kHz already costs about a quarter of the run (docs/performance.md). */
#define PROF_SAMPLE_HZ_MAX 10000

/* Counter events are PROF_EV_COUNTER with names "cpuctr/<counter>" and the
 * cumulative per-thread value (a double in `a`), written by the writer. */
#include "trace/ev_cpuctr.h" /* counter names and the step-boundary flag */

unsigned prof__sampler_hz(void);
/* The realtime signal the sampler's timers send while its handler is
 * installed, else 0 (before start, after shutdown, or after stepping aside). */
int prof__sampler_signal(void);
/* 1 once the program took over the sampling signal and sampling stopped. */
int prof__sampler_stepped_aside(void);

/* The kernel's encoding of a thread's CPU-time clock (what
 * pthread_getcpuclockid returns): ~tid << 3 | PERTHREAD | SCHED. */
static inline int prof__thread_cpu_clock(int tid) { return (int)((~(unsigned)tid << 3) | 4u | 2u); }

/* ---- perf_clock.c: a thread's CPU clock that signals it at exact periods ---- */
/* A task-clock perf event of thread `tid` that sends `sig` to that thread
 * after each `period_ns` of its CPU time, created disabled: the first
 * prof__perf_clock_rearm starts it. Returns the fd (close-on-exec) or -1
 * with errno. */
int prof__perf_clock_open(int tid, int sig, uint64_t period_ns);
/* 1 when the kernel lets this process open such events, else 0 with the
 * reason in `why` (perf_event_paranoid, a container's seccomp filter). */
int prof__perf_clock_probe(char *why, size_t n);
/* Async-signal-safe: let the event fire once more; its CPU time in ns so
 * far (0 when unreadable). */
void prof__perf_clock_rearm(int fd);
uint64_t prof__perf_clock_read(int fd);
/* Stop the event for good and close the fd, unless the fd is no longer a
 * perf event sending `sig` (the program closed it and reused the number):
 * then -1, and the fd is left alone. */
int prof__perf_clock_close(int fd, int sig);

/* counters.c: set up (reads MLPROF_PAPI_EVENTS) and read every writer cycle. */
void prof__counters_start(void);
/* Step hook: the calling (step) thread's CPU time as a counter event. */
void prof__counters_step(void);
void prof__counters_cycle(prof__tw *tw, int final);

/* ---- papi.c ---------------------------------------------------------------- */
#define PROF_PAPI_MAX 8
#define PROF_PAPI_DEFAULT_EVENTS "PAPI_TOT_CYC,PAPI_TOT_INS,PAPI_L3_TCM"

typedef struct prof__papi_set {
  int es;                              /* PAPI event set handle */
  int open;                            /* es was created (a zeroed set is closed) */
  int n;                               /* events added */
  char names[PROF_PAPI_MAX][40];
} prof__papi_set;

/* Initialise PAPI once. Returns 1 when hardware counters are usable, 0 when
 * not, with PAPI's reason in `why`. */
int prof__papi_init(char *why, size_t n);
/* Build an event set of the comma-separated `events` attached to thread
 * `tid` and start it. Events PAPI does not have are skipped (named in
 * `why`). Returns the number of events counting (0: none; set unusable). */
int prof__papi_open(prof__papi_set *set, int tid, const char *events, char *why, size_t n);
/* Read the cumulative values (set->n of them). Returns 0 or -1. */
int prof__papi_read(prof__papi_set *set, long long *vals);
void prof__papi_close(prof__papi_set *set);

/* papi_load.c: fills the table of libpapi's functions (papi_api.h), opening
 * libpapi only where the kernel counts hardware events. Returns 1, or 0
 * with the reason in `why` (always 0 in a build without PAPI). */
struct prof__papi_api;
int prof__papi_load(struct prof__papi_api *api, char *why, size_t n);

#endif
