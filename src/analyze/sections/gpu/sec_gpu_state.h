/* sec_gpu_state.h — private to the GPU section (sec_gpu.c, sec_gpu_windows.c):
 * the pass-1 state (intervals, per-name aggregates, CPU segments of
 * step-running threads) and the merged unions finish() measures the step
 * windows against.
 */
#ifndef MLPROF_ANALYZE_SEC_GPU_STATE_H
#define MLPROF_ANALYZE_SEC_GPU_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/sections/gpu/sec_gpu.h"
#include "analyze/util/hashmap.h"

typedef struct iv {
  uint64_t s, e;
} iv;

typedef struct kiv {
  uint64_t s, e, launch;
  uint32_t name, device;
} kiv;

typedef struct tiv { /* an interval on a CPU thread */
  uint64_t s, e;
  uint32_t tid;
} tiv;

typedef struct seg {
  uint64_t s, e;
  uint8_t bucket;
} seg;

typedef struct memev {
  uint64_t ts;
  uint64_t bytes;
  uint32_t device;
  uint8_t alloc, mem;
} memev;

typedef struct vec {
  void *p;
  size_t n, cap;
} vec;

typedef struct cpu_thread {
  uint32_t tid;
  int seen;      /* the thread had a range or step event (a slot is zero until then) */
  int in_step;
  int cur_cat;   /* category of the innermost open range (the engine's context), -1: none */
  uint64_t seg_start;
  int seg_bucket;
  vec segs; /* seg, time-ordered */
} cpu_thread;

typedef struct gpu_state {
  gpu_summary sum;
  int inited, capture, oom;
  vec k, c, s, r, sync, mem; /* kiv, iv, iv, tiv, tiv, memev */
  uint64_t r_max, sync_max;  /* longest runtime call and synchronisation */
  vec kst, rst;              /* gpu_kstat, gpu_rstat */
  prof__map32 kmap, rmap;
  cpu_thread *th;            /* by thread index (prof__an_thread_index) */
  size_t nth;                /* capacity of th */
  uint64_t first, last;      /* GPU record span */
} gpu_state;

typedef struct unions {
  kiv *k;             /* all kernels */
  size_t nk;
  iv *dev[16];        /* kernels of each busy device (summary.busy_devices), merged */
  size_t ndev[16];
  iv *c, *s;
  size_t nc, ns;
  const tiv *r, *sync; /* runtime calls, synchronisations: sorted by start, not merged */
  size_t nr, nsync;
  uint64_t r_max, sync_max;
  const void *kc;     /* compute kernels: k itself when no kernel communicates */
  size_t nkc, kcsz;
  iv *m;              /* communication kernels */
  size_t nm;
} unions;

/* Append one uninitialised slot of `sz` bytes to v; NULL (and g->oom set)
 * when memory runs out. */
void *prof__sec_gpu_vec_push(gpu_state *g, vec *v, size_t sz);
/* Merge the sorted intervals v[0..n) in place; returns the new count. */
size_t prof__sec_gpu_merge_iv(iv *v, size_t n);
/* Kernels of k[0..n) (sorted by start) that start in [b, e). */
uint64_t prof__sec_gpu_count_starts(const kiv *k, size_t n, uint64_t b, uint64_t e);
/* Measure every step window (busy, idle split, breakdown) against u. */
void prof__sec_gpu_measure_windows(gpu_state *g, prof__an *an, const unions *u);

#endif
