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
 * format reference; the analyzer's sec_resources.c reads both back.
 */
#ifndef PROF_RES_H
#define PROF_RES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/event.h"
#include "../core/tids.h"

/* Thread id of the resource counters in the trace (above any Linux tid). */
#define PROF_RES_TID PROF_TID_RESOURCES
/* Default sampling period (ms) and its bounds. */
#define PROF_RES_DEFAULT_MS 100u
#define PROF_RES_MAX_MS 60000u
/* Period of the per-thread CPU scan (ms; at least one sample period). */
#define PROF_RES_THREAD_MS 1000u
/* Busiest threads kept per thread scan, and threads looked at per scan. */
#define PROF_RES_TOP_THREADS 8
#define PROF_RES_MAX_SCAN 4096
/* GPUs sampled at most. */
#define PROF_RES_MAX_GPUS 8
/* Version byte of the PROF_CHUNK_RES payload. */
#define PROF_RES_CHUNK_VERSION 1

/* Metric codes, in the low byte of a counter event's `aux` (the high byte is
 * the GPU index for GPU metrics). Values are part of the trace format.
 * Rates: event ts = start of the interval, b = interval length in ns, the
 * value is the mean rate over it. Gauges: ts = sampling time, b = 0. */
enum {
  PROF_RES_CPU = 1,          /* rate: process CPU (user + system), in cores */
  PROF_RES_CPU_SYS = 2,      /* rate: system part, in cores */
  PROF_RES_LOAD1 = 3,        /* gauge: machine load average (1 min) */
  PROF_RES_CTX_VOL = 4,      /* rate: voluntary context switches per s */
  PROF_RES_CTX_INVOL = 5,    /* rate: involuntary context switches per s */
  PROF_RES_MINFLT = 6,       /* rate: minor page faults per s */
  PROF_RES_MAJFLT = 7,       /* rate: major page faults per s */
  PROF_RES_RSS = 8,          /* gauge: resident set size, bytes */
  PROF_RES_IO_READ = 9,      /* rate: bytes read by syscalls (rchar) per s */
  PROF_RES_IO_WRITE = 10,    /* rate: bytes written by syscalls (wchar) per s */
  PROF_RES_DISK_READ = 11,   /* rate: bytes fetched from storage per s */
  PROF_RES_DISK_WRITE = 12,  /* rate: bytes sent towards storage per s */
  PROF_RES_NET_RX = 13,      /* rate: namespace network bytes received per s */
  PROF_RES_NET_TX = 14,      /* rate: namespace network bytes sent per s */
  PROF_RES_NPROC = 15,       /* end of the process metrics */
  PROF_RES_GPU_UTIL = 32,    /* gauge: % of time a kernel ran (NVML) */
  PROF_RES_GPU_MEM_UTIL = 33,/* gauge: % of time memory was read or written */
  PROF_RES_GPU_MEM_USED = 34,/* gauge: device memory used, bytes */
  PROF_RES_GPU_POWER = 35,   /* gauge: board power, W */
  PROF_RES_GPU_SM_MHZ = 36,  /* gauge: SM clock, MHz */
  PROF_RES_GPU_TEMP = 37,    /* gauge: temperature, degrees C */
  PROF_RES_GPU_END = 38
};

/* Counter name of a metric ("res.cpu_cores", "res.gpu1.util_pct") into buf;
 * NULL for an unknown code. */
const char *prof__res_metric_name(int code, int gpu, char *buf, size_t n);
/* 1 for rate metrics, 0 for gauges. */
int prof__res_metric_is_rate(int code);

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
/* /proc/<pid>/task/<tid>/stat: comm (into comm, at most 16 bytes + NUL) and
 * utime + stime in clock ticks. */
int prof__res_parse_taskstat(const char *s, size_t n, char comm[17], uint64_t *ticks);

/* CPUs this process may use: the affinity mask, lowered by a cgroup quota
 * when there is one. Also the machine's online CPUs in *online. */
double prof__res_cpu_limit(int *online);

/* ---- Per-thread CPU (threads.c) ----------------------------------------- */

typedef struct prof__res_thread {
  uint32_t tid;
  char comm[17];
  uint64_t cpu_ns;     /* CPU time in the window */
  uint64_t total_ns;   /* CPU time since the thread started */
} prof__res_thread;

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

/* Encode / decode a PROF_CHUNK_RES payload (docs/resources.md). decode
 * returns the records kept (<= max) or -1 on a malformed payload. */
struct prof__buf;
void prof__res_chunk_encode(struct prof__buf *b, uint64_t ts_ns, uint64_t window_ns, uint32_t nthreads,
                            const prof__res_thread *t, int n);
int prof__res_chunk_decode(const uint8_t *p, size_t len, uint64_t *ts_ns, uint64_t *window_ns,
                           uint32_t *nthreads, prof__res_thread *t, int max);

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
