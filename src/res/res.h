/* res.h — resource monitoring: what the sampler reads and how it stores it.
 *
 * The sampler runs inside the background writer's hook (never on an
 * application thread, and without any lock an application thread takes).
 * Every MLPROF_RESOURCE_MS it reads the process's CPU time, context
 * switches, page faults, RSS, I/O byte counters, the machine load, the
 * network bytes of the process's network namespace and, through NVML loaded
 * at run time, each GPU's utilisation, memory, power, clock and
 * temperature. Samples are COUNTER events on the dedicated thread id
 * PROF_RES_TID (so every exporter shows them as counter tracks); the
 * busiest threads travel in PROF_CHUNK_RES chunks. docs/resources.md is the
 * format reference; the analyzer's sec_resources.c reads both back. The
 * metric codes and the chunk codec shared with the reader are in
 * trace/rec_res.h.
 */
#ifndef PROF_RES_H
#define PROF_RES_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"
#include "trace/rec_res.h"

/* Default sampling period (ms) and its bounds. */
#define PROF_RES_DEFAULT_MS 250u
#define PROF_RES_MAX_MS 60000u
/* Period of the per-thread CPU scan (ms; at least one sample period). */
#define PROF_RES_THREAD_MS 1000u


/* ---- Process counters (procfs.c) ---------------------------------------- */

/* One reading of the process's cumulative counters. The have_* flags say
 * which sources could be read (a container may hide /proc/self/io). */
typedef struct prof__res_raw {
  uint64_t ns;                 /* CLOCK_MONOTONIC */
  uint64_t cpu_ns, sys_ns;     /* user + system, system; from getrusage */
  uint64_t nvcsw, nivcsw, minflt, majflt;
  uint64_t rss_bytes;
  double load1;
  uint64_t rchar, wchar, read_bytes, write_bytes;
  uint64_t net_rx, net_tx;
  int have_rss, have_load, have_io, have_net;
} prof__res_raw;

/* Read every source into *r (a failed source clears its have_ flag). */
void prof__res_read(prof__res_raw *r);

/* Parsers of the procfs texts, exposed for tests. Return 0 or -1 on text
 * they cannot use; never read outside [s, s+n). */
int prof__res_parse_io(const char *s, size_t n, prof__res_raw *r);
int prof__res_parse_netdev(const char *s, size_t n, uint64_t *rx, uint64_t *tx);
int prof__res_parse_loadavg(const char *s, size_t n, double *load1);
/* /proc/self/status: the peak resident set of this image (VmHWM), in bytes. */
int prof__res_parse_hwm(const char *s, size_t n, uint64_t *bytes);
/* That peak now, read from /proc/self/status; 0 when unknown. The kernel
 * keeps it at every page, so it holds a peak between two samples too. */
uint64_t prof__res_rss_hwm(void);
/* /proc/<pid>/task/<tid>/stat: comm (into comm, at most 16 bytes + NUL) and
 * utime + stime in clock ticks. */
int prof__res_parse_taskstat(const char *s, size_t n, char comm[17], uint64_t *ticks);

/* CPUs this process may use: the affinity mask, lowered by a cgroup quota
 * when there is one. Also the machine's online CPUs in *online. */
double prof__res_cpu_limit(int *online);

/* ---- Per-thread CPU (threads.c) ----------------------------------------- */


/* Scanner state: the previous per-thread totals, sorted by tid. */
typedef struct prof__res_scan {
  uint32_t *tids;
  uint64_t *ticks;
  size_t n, cap;
  uint64_t last_ns;
  int primed;
} prof__res_scan;

/* Read /proc/self/task/<tid>/stat of every thread (at most
 * PROF_RES_MAX_SCAN) and keep the `max` threads with the most CPU since the
 * previous scan in out[], busiest first. Returns how many were kept, or -1
 * when the folder cannot be read. *nthreads: threads seen. The first scan
 * only primes the totals and returns 0. */
int prof__res_scan_threads(prof__res_scan *s, prof__res_thread *out, int max, uint32_t *nthreads);
void prof__res_scan_free(prof__res_scan *s);


/* ---- GPUs through NVML (nvml.c) ----------------------------------------- */

typedef struct prof__res_gpu {
  double util_pct, mem_util_pct, mem_used_bytes, mem_total_bytes, power_w, sm_mhz, temp_c;
  unsigned have; /* bit per field, in the order above */
} prof__res_gpu;

/* dlopen `lib` (NULL: "libnvidia-ml.so.1") and initialise NVML. Returns the
 * number of GPUs (at most PROF_RES_MAX_GPUS), or -1 with the reason in msg
 * (the library is absent, init failed, no devices). */
int prof__res_nvml_open(const char *lib, char *msg, size_t n);
/* Read GPU `i`; returns 0 or -1. */
int prof__res_nvml_read(int i, prof__res_gpu *g);
/* Name of GPU `i` into buf ("" when unknown). */
void prof__res_nvml_name(int i, char *buf, size_t n);
void prof__res_nvml_close(void);

/* ---- Sampler (sampler.c) ------------------------------------------------ */

/* Take one sample and queue its events into ev[] (at most `max`), given
 * the previous reading (updated to this one). Returns the events written.
 * Used by the writer hook and the benchmark. */
size_t prof__res_events(prof__res_raw *prev, const prof__res_raw *cur, int ngpus, prof__event *ev,
                        size_t max);
/* Period in ms from MLPROF_RESOURCE_MS (0: sampling off). */
uint32_t prof__res_period_ms(void);

#endif /* PROF_RES_H */
