/* rec_res.h — the resource monitor's records as the trace stores them: the
 * counter metric codes (COUNTER events on PROF_RES_TID) with their names,
 * and the PROF_CHUNK_RES payload listing the busiest threads. The producer
 * is src/res; docs/resources.md is the format reference.
 */
#ifndef PROF_REC_RES_H
#define PROF_REC_RES_H

#include <stddef.h>
#include <stdint.h>

#include "tids.h"
#include "trace.h"

/* Thread id of the resource counters in the trace (above any Linux tid). */
#define PROF_RES_TID PROF_TID_RESOURCES
/* Busiest threads kept per thread scan. */
#define PROF_RES_TOP_THREADS 8
/* GPUs sampled at most. */
#define PROF_RES_MAX_GPUS 8
/* Most threads one chunk may list (the scan looks at no more). */
#define PROF_RES_MAX_SCAN 4096
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

/* A resource counter's `aux` from its metric code and GPU index, and back. */
static inline uint16_t prof__rec_res_aux(int code, int gpu) { return (uint16_t)((code & 0xff) | (gpu << 8)); }
static inline int prof__rec_res_code(uint16_t aux) { return aux & 0xff; }
static inline int prof__rec_res_gpu(uint16_t aux) { return aux >> 8; }

/* Counter name of a metric ("res.cpu_cores", "res.gpu1.util_pct") into buf;
 * NULL for an unknown code. */
const char *prof__rec_res_metric_name(int code, int gpu, char *buf, size_t n);
/* 1 for rate metrics, 0 for gauges. */
int prof__rec_res_metric_is_rate(int code);

/* One thread of a PROF_CHUNK_RES payload. */
typedef struct prof__res_thread {
  uint32_t tid;
  char comm[17];
  uint64_t cpu_ns;     /* CPU time in the window */
  uint64_t total_ns;   /* CPU time since the thread started */
} prof__res_thread;

/* Encode / decode a PROF_CHUNK_RES payload (docs/resources.md). decode
 * returns the records kept (<= max) or -1 on a malformed payload. */
void prof__rec_res_chunk_encode(prof__buf *b, uint64_t ts_ns, uint64_t window_ns, uint32_t nthreads,
                            const prof__res_thread *t, int n);
int prof__rec_res_chunk_decode(const uint8_t *p, size_t len, uint64_t *ts_ns, uint64_t *window_ns,
                           uint32_t *nthreads, prof__res_thread *t, int max);

#endif /* PROF_REC_RES_H */
