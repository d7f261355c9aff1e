/* sec_resources.h — state of the "resources" report section, shared by
 * its record pass, findings and text/JSON writers (sec_resources.c) and its
 * HTML panel (sec_resources_html.c).
 */
#ifndef PROF_SEC_RESOURCES_H
#define PROF_SEC_RESOURCES_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "trace/rec_res.h"

#define RES_MAX_THREADS 64        /* distinct threads kept from the thread chunks */

/* Slots of an interval: rates first, then gauges. */
enum { S_CPU, S_IOR, S_IOW, S_DR, S_DW, S_NRX, S_NTX, S_NRATE, S_GPU = S_NRATE, S_RSS, S_NSLOT };

typedef struct iv {
  uint64_t ts, dur;
  double v[S_NSLOT];   /* rates: mean over the interval; S_GPU: mean of GPUs; S_RSS: bytes */
  double cpu_peak, gpu_peak;
  int has_gpu;
} iv;

typedef struct racc { double amount, cover_s, peak; } racc;   /* a rate metric */
typedef struct gacc { double sum, peak; uint64_t n; } gacc;   /* a gauge */

typedef struct thr {
  uint32_t tid;
  char comm[17];
  double cpu_s, window_s, peak;
} thr;

typedef struct step_res {
  double cover_s, cpu_core_s, cpu_peak, amount[S_NRATE], gpu_w, gpu_sum, gpu_peak;
} step_res;

typedef struct res_st {
  int hdr_done;        /* header facts read (once, on the first record) */
  int seen, cupti, gpu_seen;
  double cpus, period_ms, min_peak_s;
  racc rate[PROF_RES_NPROC];
  gacc gauge[PROF_RES_NPROC];
  gacc gpu[PROF_RES_MAX_GPUS][PROF_RES_GPU_END - PROF_RES_GPU_UTIL];
  int ngpus;
  iv *ivs;
  size_t nivs;
  thr threads[RES_MAX_THREADS];
  int nthreads;
  uint32_t max_threads_seen;
  int bad_chunks;
  /* finish */
  step_res *steps;
  size_t nsteps;
  step_res in_steps;
  double step_s, wait_s;
  /* forked workers (DataLoader workers sampled by the parent, src/cpu/workers.c):
   * the range id of their samples (0: not seen yet), CPU periods sampled,
   * distinct worker pids seen, and META cpu.workers */
  uint32_t worker_range;
  int worker_range_checked;
  double worker_periods;
  uint32_t worker_pids[64];
  int nworker_pids;
  int workers_meta;
} res_st;

/* The HTML panel (sec_resources_html.c). */
void prof__sec_resources_html(prof__an *an, void *st, FILE *out);

#endif
