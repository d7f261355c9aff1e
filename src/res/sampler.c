/* sampler.c — the resource module: configuration, the writer hook that
 * samples, and the counter events it produces.
 *
 * The module's header hook reads MLPROF_RESOURCE_MS (default 100 ms; 0
 * turns sampling off), finds the usable CPUs and opens NVML; its prepare
 * hook takes the first reading, before the writer thread starts; its start
 * hook names the counters. From then on everything
 * happens on the background writer thread: each cycle, once a period has
 * passed, one reading of every source becomes a handful of COUNTER events
 * on PROF_RES_TID, and about once a second a PROF_CHUNK_RES chunk lists the
 * busiest threads. Application threads never run any of this and share no
 * lock with it. The last sample is taken at shutdown, so the final partial
 * period is covered too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/bgwriter.h"
#include "core/producer.h"
#include "res.h"

static struct {
  uint32_t period_ms;
  int configured, ngpus, active, prepared;
  uint32_t name_proc[PROF_RES_NPROC];
  uint32_t name_gpu[PROF_RES_MAX_GPUS][PROF_RES_GPU_END - PROF_RES_GPU_UTIL];
  char gpu_line[160], h_period[16], h_cpus[24], h_online[16];
  char gpu_key[PROF_RES_MAX_GPUS][24], gpu_name[PROF_RES_MAX_GPUS][96];
  /* writer thread only */
  prof__res_raw prev;
  prof__res_scan scan;
  uint64_t last_scan_ns, samples, cost_ns;
  int announced;
} R;

uint32_t prof__res_period_ms(void) {
  return (uint32_t)prof__env_long("RESOURCE_MS", PROF_RES_DEFAULT_MS, 0, PROF_RES_MAX_MS);
}

static prof__event ev_of(uint64_t ts, int code, int gpu, uint32_t name, double v, uint64_t b) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = PROF_EV_COUNTER;
  e.aux = prof__rec_res_aux(code, gpu);
  e.name = name;
  e.a = prof__f64_bits(v);
  e.b = b;
  return e;
}

static uint64_t delta(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

/* The rate events of one interval: ts = its start, b = its length. */
static size_t rate_events(const prof__res_raw *p, const prof__res_raw *c, prof__event *ev, size_t max) {
  uint64_t dt = c->ns - p->ns;
  double s = dt / 1e9;
  struct { int code, ok; uint64_t d; } m[] = {
      {PROF_RES_CPU, 1, delta(c->cpu_ns, p->cpu_ns)},
      {PROF_RES_CPU_SYS, 1, delta(c->sys_ns, p->sys_ns)},
      {PROF_RES_CTX_VOL, 1, delta(c->nvcsw, p->nvcsw)},
      {PROF_RES_CTX_INVOL, 1, delta(c->nivcsw, p->nivcsw)},
      {PROF_RES_MINFLT, 1, delta(c->minflt, p->minflt)},
      {PROF_RES_MAJFLT, 1, delta(c->majflt, p->majflt)},
      {PROF_RES_IO_READ, p->have_io && c->have_io, delta(c->rchar, p->rchar)},
      {PROF_RES_IO_WRITE, p->have_io && c->have_io, delta(c->wchar, p->wchar)},
      {PROF_RES_DISK_READ, p->have_io && c->have_io, delta(c->read_bytes, p->read_bytes)},
      {PROF_RES_DISK_WRITE, p->have_io && c->have_io, delta(c->write_bytes, p->write_bytes)},
      {PROF_RES_NET_RX, p->have_net && c->have_net, delta(c->net_rx, p->net_rx)},
      {PROF_RES_NET_TX, p->have_net && c->have_net, delta(c->net_tx, p->net_tx)},
  };
  size_t n = 0;
  if (dt == 0) return 0;
  for (size_t i = 0; i < sizeof m / sizeof m[0] && n < max; i++) {
    if (!m[i].ok) continue;
    /* CPU time is in ns: ns per s of wall time is cores. */
    double v = m[i].code <= PROF_RES_CPU_SYS ? (double)m[i].d / (double)dt : (double)m[i].d / s;
    ev[n++] = ev_of(p->ns, m[i].code, 0, R.name_proc[m[i].code], v, dt);
  }
  return n;
}

static size_t gpu_events(uint64_t ts, int ngpus, prof__event *ev, size_t max) {
  size_t n = 0;
  for (int i = 0; i < ngpus; i++) {
    prof__res_gpu g;
    if (prof__res_nvml_read(i, &g)) continue;
    double v[] = {g.util_pct, g.mem_util_pct, g.mem_used_bytes, g.power_w, g.sm_mhz, g.temp_c};
    unsigned bit[] = {1, 2, 4, 16, 32, 64};
    for (int k = 0; k < 6 && n < max; k++)
      if (g.have & bit[k]) ev[n++] = ev_of(ts, PROF_RES_GPU_UTIL + k, i, R.name_gpu[i][k], v[k], 0);
  }
  return n;
}

size_t prof__res_events(prof__res_raw *prev, const prof__res_raw *cur, int ngpus, prof__event *ev,
                        size_t max) {
  size_t n = rate_events(prev, cur, ev, max);
  if (cur->have_load && n < max) ev[n++] = ev_of(cur->ns, PROF_RES_LOAD1, 0, R.name_proc[PROF_RES_LOAD1], cur->load1, 0);
  if (cur->have_rss && n < max)
    ev[n++] = ev_of(cur->ns, PROF_RES_RSS, 0, R.name_proc[PROF_RES_RSS], (double)cur->rss_bytes, 0);
  n += gpu_events(cur->ns, ngpus, ev + n, max - n);
  *prev = *cur;
  return n;
}

/* ---- the writer hook ----------------------------------------------------- */

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void scan_threads(prof__tw *tw, uint64_t now) {
  prof__res_thread top[PROF_RES_TOP_THREADS];
  uint32_t nthreads = 0;
  int n = prof__res_scan_threads(&R.scan, top, PROF_RES_TOP_THREADS, &nthreads);
  uint64_t window = now - R.last_scan_ns;
  R.last_scan_ns = now;
  if (n <= 0) return;
  prof__buf b = {0};
  prof__rec_res_chunk_encode(&b, now, window, nthreads, top, n);
  if (!b.oom) prof__tw_chunk(tw, PROF_CHUNK_RES, b.p, b.len);
  prof__buf_free(&b);
}

/* At the end: the sampling cost, and the peak resident set the kernel kept
 * (res.rss_hwm_bytes), which a program shorter than a period, or a spike
 * between two samples, would otherwise hide from the RSS peak. */
static void write_cost(prof__tw *tw) {
  char samples[24], cost[24], hwm[24];
  snprintf(samples, sizeof samples, "%llu", (unsigned long long)R.samples);
  snprintf(cost, sizeof cost, "%llu", (unsigned long long)(R.samples ? R.cost_ns / R.samples : 0));
  uint64_t h = prof__res_rss_hwm();
  snprintf(hwm, sizeof hwm, "%llu", (unsigned long long)h);
  prof__kv kv[] = {{"res.samples", samples}, {"res.sample_cost_ns", cost}, {"res.rss_hwm_bytes", hwm}};
  prof__tw_meta(tw, kv, h ? 3 : 2);
}

static void sample(prof__tw *tw, uint64_t now, int final) {
  uint64_t c0 = thread_cpu_ns();
  prof__event ev[64];
  prof__res_raw cur;
  prof__res_read(&cur);
  size_t n = prof__res_events(&R.prev, &cur, R.ngpus, ev, 64);
  if (!R.announced) R.announced = prof__tw_thread(tw, PROF_RES_TID, "mlprof resources", 0, 0) == 0;
  if (n) prof__tw_events(tw, PROF_RES_TID, ev, n);
  if (!R.scan.primed || final || now - R.last_scan_ns >= PROF_RES_THREAD_MS * 1000000ull) scan_threads(tw, now);
  R.samples++;
  R.cost_ns += thread_cpu_ns() - c0;
}

static void hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  if (!__atomic_load_n(&R.active, __ATOMIC_ACQUIRE)) return;
  uint64_t now = prof__mono_ns();
  if (tw && (final || now - R.prev.ns >= (uint64_t)R.period_ms * 1000000ull)) sample(tw, now, final);
  if (!final) return;
  if (tw) write_cost(tw);
  __atomic_store_n(&R.active, 0, __ATOMIC_RELEASE);
  prof__res_nvml_close();
  prof__res_scan_free(&R.scan);
}

/* ---- the module ---------------------------------------------------------- */

static void configure(void) {
  if (R.configured) return;
  R.configured = 1;
  R.period_ms = prof__res_period_ms();
  snprintf(R.h_period, sizeof R.h_period, "%u", R.period_ms);
  int online;
  double lim = prof__res_cpu_limit(&online);
  snprintf(R.h_cpus, sizeof R.h_cpus, "%.2f", lim);
  snprintf(R.h_online, sizeof R.h_online, "%d", online);
  const char *lib = prof__env("RESOURCE_NVML");
  if (!R.period_ms || (lib && strcmp(lib, "off") == 0)) {
    snprintf(R.gpu_line, sizeof R.gpu_line, "not sampled (%s)",
             R.period_ms ? "MLPROF_RESOURCE_NVML=off" : "MLPROF_RESOURCE_MS=0");
    return;
  }
  char msg[128];
  int n = prof__res_nvml_open(lib, msg, sizeof msg);
  R.ngpus = n > 0 ? n : 0;
  snprintf(R.gpu_line, sizeof R.gpu_line, "%s%s", n > 0 ? "" : "not sampled: ", msg);
  for (int i = 0; i < R.ngpus; i++) {
    snprintf(R.gpu_key[i], sizeof R.gpu_key[i], "res.gpu%d.name", i);
    prof__res_nvml_name(i, R.gpu_name[i], sizeof R.gpu_name[i]);
  }
}

static size_t res_header(prof__kv *kv, size_t max) {
  configure();
  prof__kv mine[4 + PROF_RES_MAX_GPUS] = {
      {"res.period_ms", R.h_period}, {"res.cpus", R.h_cpus}, {"res.cpus_online", R.h_online}, {"res.gpu", R.gpu_line}};
  size_t n = 4;
  for (int i = 0; i < R.ngpus; i++) mine[n++] = (prof__kv){R.gpu_key[i], R.gpu_name[i]};
  if (n > max) n = max;
  memcpy(kv, mine, n * sizeof *kv);
  return n;
}

static void intern_names(void) {
  char buf[48];
  for (int c = 1; c < PROF_RES_NPROC; c++) R.name_proc[c] = prof__intern(prof__rec_res_metric_name(c, 0, buf, sizeof buf));
  for (int i = 0; i < R.ngpus; i++)
    for (int k = 0; k < PROF_RES_GPU_END - PROF_RES_GPU_UTIL; k++)
      R.name_gpu[i][k] = prof__intern(prof__rec_res_metric_name(PROF_RES_GPU_UTIL + k, i, buf, sizeof buf));
}

/* The first reading, before the writer thread exists: read while it is
 * being started, getrusage(RUSAGE_SELF) waits for it (0.3 ms on a virtual
 * machine, on the program's thread). */
static void res_prepare(void) {
  configure();
  if (!R.period_ms) return;
  prof__res_read(&R.prev);
  R.prepared = 1;
}

static int res_start(void) {
  static int hooked;
  configure();
  if (!R.period_ms) return 0;
  intern_names();
  if (!R.prepared) prof__res_read(&R.prev); /* a module added after prof_init began */
  R.prepared = 0;
  R.last_scan_ns = R.prev.ns;
  if (!hooked && prof__writer_hook_add(hook, NULL) != 0) return -1;
  hooked = 1;
  prof__writer_period_cap(R.period_ms); /* the writer wakes at least that often */
  __atomic_store_n(&R.active, 1, __ATOMIC_RELEASE);
  return 0;
}

const prof__module prof__mod_res = {
    .name = "res", .prepare = res_prepare, .header = res_header, .start = res_start};
