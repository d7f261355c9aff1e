/* sec_resources.c — the "resources" report section: CPU, memory, I/O,
 * network and GPU use over the run and per step, from the counters the
 * resource sampler (src/res/) records on PROF_RES_TID and the busiest
 * threads of its PROF_CHUNK_RES chunks; plus the findings cpu_saturated,
 * cpu_underused, io_bound, gpu_underused and machine_saturated.
 *
 * One pass: whole-run totals accumulate as events arrive; the sampling
 * intervals are kept in a bounded buffer (adjacent intervals are merged
 * pairwise when it fills, which keeps every total exact and only coarsens
 * the per-step split) and are spread over the steps by time overlap at the
 * end. Thresholds are documented in docs/resources.md; keep the two in step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/resources/sec_resources.h"
#include "analyze/util/termsafe.h"
#include "trace/ev_sample.h"

/* Finding thresholds (docs/resources.md). "Waiting" is the share of step
 * time in data- and io-category ranges on the step thread. */
#define SAT_CPU_SHARE 0.85    /* cpu_saturated: process CPU >= 85% of usable cores */
#define SAT_WAIT 0.10         /* ... while steps wait >= 10% of their time */
#define UNDER_MIN_CORES 2.0   /* cpu_underused: at least 2 usable cores */
#define UNDER_BUSY_LO 0.6     /* ... the process uses 0.6 to 1.4 cores */
#define UNDER_BUSY_HI 1.4
#define UNDER_IDLE 1.0        /* ... leaves >= 1 core idle */
#define UNDER_WAIT 0.25       /* ... and steps wait >= 25% of their time */
#define IO_RATE (20.0 * 1048576.0) /* io_bound: >= 20 MiB/s read + written during steps */
#define IO_WAIT 0.20          /* ... while steps wait >= 20% of their time */
#define GPU_LOW 50.0          /* gpu_underused: mean utilisation < 50% during steps */
#define GPU_VERY_LOW 25.0     /* high severity below this */
#define BUSY_LOAD 1.0         /* machine_saturated: mean load1 >= 1.0 x the online CPUs */
#define BUSY_OTHERS 0.5       /* ... of which other processes (load1 - process cores) >= 50% of them */
#define BUSY_HIGH 2.0         /* ... high severity from load1 >= 2 x the online CPUs */
#define MAX_IVS 65536         /* intervals kept before merging pairs */
#define WORKERS_BUSY 0.8      /* forked workers are saturated at >= 0.8 cores each */

static int slot_of(int code) {
  switch (code) {
  case PROF_RES_CPU: return S_CPU;
  case PROF_RES_IO_READ: return S_IOR;
  case PROF_RES_IO_WRITE: return S_IOW;
  case PROF_RES_DISK_READ: return S_DR;
  case PROF_RES_DISK_WRITE: return S_DW;
  case PROF_RES_NET_RX: return S_NRX;
  case PROF_RES_NET_TX: return S_NTX;
  default: return -1;
  }
}

/* ---- intervals ------------------------------------------------------------ */

static void iv_merge(iv *a, const iv *b) {
  uint64_t end = b->ts + b->dur > a->ts + a->dur ? b->ts + b->dur : a->ts + a->dur;
  double da = (double)a->dur, db = (double)b->dur, d = (double)(end - a->ts);
  for (int s = 0; s < S_NRATE; s++) a->v[s] = d > 0 ? (a->v[s] * da + b->v[s] * db) / d : 0;
  a->v[S_GPU] = a->has_gpu && b->has_gpu ? (a->v[S_GPU] + b->v[S_GPU]) / 2 : a->has_gpu ? a->v[S_GPU] : b->v[S_GPU];
  a->v[S_RSS] = fmax(a->v[S_RSS], b->v[S_RSS]);
  a->cpu_peak = fmax(a->cpu_peak, b->cpu_peak);
  a->gpu_peak = fmax(a->gpu_peak, b->gpu_peak);
  a->has_gpu |= b->has_gpu;
  a->dur = end - a->ts;
}

/* A new interval [ts, ts+dur); merges pairs when the buffer is full. */
static iv *iv_new(res_st *st, uint64_t ts, uint64_t dur) {
  if (!st->ivs && !(st->ivs = calloc(MAX_IVS, sizeof *st->ivs))) return NULL;
  if (st->nivs == MAX_IVS) {
    for (size_t i = 0; i < MAX_IVS / 2; i++) {
      st->ivs[i] = st->ivs[2 * i];
      iv_merge(&st->ivs[i], &st->ivs[2 * i + 1]);
    }
    st->nivs = MAX_IVS / 2;
  }
  iv *v = &st->ivs[st->nivs++];
  memset(v, 0, sizeof *v);
  v->ts = ts;
  v->dur = dur;
  return v;
}

/* The interval of a rate event: the last one if it starts at ts. */
static iv *iv_for_rate(res_st *st, uint64_t ts, uint64_t dur) {
  if (st->nivs && st->ivs[st->nivs - 1].ts == ts) return &st->ivs[st->nivs - 1];
  return iv_new(st, ts, dur);
}

/* ---- pass 1 ----------------------------------------------------------------- */

static void on_rate(res_st *st, int code, double v, uint64_t ts, uint64_t dur) {
  double s = (double)dur / 1e9;
  racc *r = &st->rate[code];
  r->amount += v * s;
  r->cover_s += s;
  if (s >= st->min_peak_s && v > r->peak) r->peak = v;
  int slot = slot_of(code);
  if (slot < 0) return;
  iv *x = iv_for_rate(st, ts, dur);
  if (!x) return;
  x->v[slot] = v;
  if (slot == S_CPU && s >= st->min_peak_s) x->cpu_peak = v;
}

static void gauge_add(gacc *g, double v) {
  g->sum += v;
  g->n++;
  if (g->n == 1 || v > g->peak) g->peak = v;
}

static void on_gauge(res_st *st, int code, int gpu, double v) {
  iv *last = st->nivs ? &st->ivs[st->nivs - 1] : NULL;
  if (code < PROF_RES_NPROC) {
    gauge_add(&st->gauge[code], v);
    if (last && code == PROF_RES_RSS) last->v[S_RSS] = fmax(last->v[S_RSS], v);
    return;
  }
  gauge_add(&st->gpu[gpu][code - PROF_RES_GPU_UTIL], v);
  if (gpu + 1 > st->ngpus) st->ngpus = gpu + 1;
  st->gpu_seen = 1;
  if (!last || code != PROF_RES_GPU_UTIL) return;
  /* mean over the GPUs sampled at this instant (GPU 0 comes first) */
  int k = gpu == 0 || !last->has_gpu ? 0 : gpu;
  last->v[S_GPU] = (last->v[S_GPU] * k + v) / (k + 1);
  last->gpu_peak = fmax(last->gpu_peak, v);
  last->has_gpu = 1;
}

static void on_event(res_st *st, const prof__event *ev) {
  int code = prof__rec_res_code(ev->aux), gpu = prof__rec_res_gpu(ev->aux);
  double v = prof__bits_f64(ev->a);
  if (!isfinite(v)) return;
  if (prof__rec_res_metric_is_rate(code)) {
    if (gpu || ev->b == 0 || ev->b > UINT64_MAX - ev->ts) return;
    on_rate(st, code, v, ev->ts, ev->b);
  } else if (code == PROF_RES_LOAD1 || code == PROF_RES_RSS) {
    if (!gpu) on_gauge(st, code, 0, v);
  } else if (code >= PROF_RES_GPU_UTIL && code < PROF_RES_GPU_END && gpu < PROF_RES_MAX_GPUS) {
    on_gauge(st, code, gpu, v);
  } else {
    return;
  }
  st->seen = 1;
}

static thr *thread_slot(res_st *st, uint32_t tid) {
  for (int i = 0; i < st->nthreads; i++)
    if (st->threads[i].tid == tid) return &st->threads[i];
  if (st->nthreads == RES_MAX_THREADS) return NULL;
  thr *t = &st->threads[st->nthreads++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  return t;
}

static void on_chunk(res_st *st, const prof__rec *rec) {
  prof__res_thread t[PROF_RES_TOP_THREADS];
  uint64_t ts, window;
  uint32_t nthreads;
  int n = prof__rec_res_chunk_decode(rec->data, rec->len, &ts, &window, &nthreads, t, PROF_RES_TOP_THREADS);
  if (n < 0 || window == 0) {
    st->bad_chunks++;
    return;
  }
  if (nthreads > st->max_threads_seen) st->max_threads_seen = nthreads;
  double w = (double)window / 1e9;
  for (int i = 0; i < n; i++) {
    thr *x = thread_slot(st, t[i].tid);
    if (!x) continue;
    memcpy(x->comm, t[i].comm, sizeof x->comm);
    x->cpu_s += (double)t[i].cpu_ns / 1e9;
    x->window_s += w;
    x->peak = fmax(x->peak, (double)t[i].cpu_ns / (double)window);
  }
}

static void header_facts(prof__an *an, res_st *st) {
  st->hdr_done = 1;
  const char *p = prof__an_header(an, "res.period_ms"), *c = prof__an_header(an, "res.cpus");
  st->period_ms = p ? atof(p) : 0;
  st->cpus = c ? atof(c) : 0;
  /* Peaks ignore intervals shorter than half a period (the last one at shutdown). */
  st->min_peak_s = st->period_ms > 0 ? st->period_ms / 2000.0 : 0;
}

/* A CPU sample of a forked worker (range "[forked worker]"): its CPU
 * periods and its pid. */
static void on_sample(prof__an *an, res_st *st, const prof__rec *rec) {
  const prof__event *ev = &rec->ev;
  if (prof__ev_sample_mode(ev) != PROF_SAMPLE_CPU || !ev->a || ev->a > UINT32_MAX) return;
  if (!st->worker_range) {
    if (strcmp(prof__an_str(an, (uint32_t)ev->a), PROF_WORKER_RANGE) != 0) return;
    st->worker_range = (uint32_t)ev->a;
  }
  if (ev->a != st->worker_range) return;
  st->worker_periods += ev->b ? (double)ev->b : 1.0;
  for (int i = 0; i < st->nworker_pids; i++)
    if (st->worker_pids[i] == rec->tid) return;
  if (st->nworker_pids < (int)(sizeof st->worker_pids / sizeof st->worker_pids[0]))
    st->worker_pids[st->nworker_pids++] = rec->tid;
}

static void res_record(prof__an *an, void *vst, const prof__rec *rec) {
  res_st *st = vst;
  if (!st->hdr_done) header_facts(an, st);
  if (rec->kind == PROF_REC_EVENT && rec->ev.type == PROF_EV_SAMPLE) {
    on_sample(an, st, rec);
    return;
  }
  if (rec->kind == PROF_REC_META && strcmp(rec->key, PROF_META_WORKERS) == 0) {
    st->workers_meta = atoi(rec->value);
    return;
  }
  if (rec->kind == PROF_REC_EVENT && rec->tid == PROF_RES_TID && rec->ev.type == PROF_EV_COUNTER)
    on_event(st, &rec->ev);
  else if (rec->kind == PROF_REC_CHUNK && rec->chunk_type == PROF_CHUNK_RES)
    on_chunk(st, rec);
  else if (rec->kind == PROF_REC_CHUNK && rec->chunk_type == PROF_CHUNK_GPU)
    st->cupti = 1;
}

/* ---- per step ----------------------------------------------------------------- */

/* First step (sorted by begin) whose end is after ts. */
static size_t first_step_after(const prof__an *an, uint64_t ts) {
  size_t lo = 0, hi = an->nsteps;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (an->steps[mid].end_ns <= ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void spread(step_res *s, const iv *x, double ov) {
  s->cover_s += ov;
  s->cpu_core_s += x->v[S_CPU] * ov;
  s->cpu_peak = fmax(s->cpu_peak, x->cpu_peak);
  for (int k = 0; k < S_NRATE; k++) s->amount[k] += x->v[k] * ov;
  if (!x->has_gpu) return;
  s->gpu_w += ov;
  s->gpu_sum += x->v[S_GPU] * ov;
  s->gpu_peak = fmax(s->gpu_peak, x->gpu_peak);
}

static void per_step(prof__an *an, res_st *st) {
  st->steps = calloc(an->nsteps ? an->nsteps : 1, sizeof *st->steps);
  if (!st->steps) return;
  st->nsteps = an->nsteps;
  for (size_t i = 0; i < st->nivs; i++) {
    const iv *x = &st->ivs[i];
    uint64_t end = x->ts + x->dur;
    for (size_t k = first_step_after(an, x->ts); k < an->nsteps && an->steps[k].begin_ns < end; k++) {
      uint64_t b = an->steps[k].begin_ns > x->ts ? an->steps[k].begin_ns : x->ts;
      uint64_t e = an->steps[k].end_ns < end ? an->steps[k].end_ns : end;
      if (e <= b) continue;
      double ov = (double)(e - b) / 1e9;
      spread(&st->steps[k], x, ov);
      spread(&st->in_steps, x, ov);
    }
  }
  for (size_t k = 0; k < an->nsteps; k++) {
    const prof__step *s = &an->steps[k];
    st->step_s += (double)(s->end_ns - s->begin_ns) / 1e9;
    st->wait_s += (double)(s->bd_ns[PROF_BD_DATA] + s->bd_ns[PROF_BD_IO]) / 1e9;
  }
}

/* ---- findings ------------------------------------------------------------------ */

static double mean_cores(const step_res *s) { return s->cover_s > 0 ? s->cpu_core_s / s->cover_s : 0; }
static double wait_share(const res_st *st) { return st->step_s > 0 ? st->wait_s / st->step_s : 0; }

/* Mean over the steps of min(wait, rest) with wait = the data- and
 * io-category time on the step thread: what overlapping the wait with the
 * rest of the step would save. */
static double overlap_saving(const prof__an *an) {
  double sum = 0;
  for (size_t k = 0; k < an->nsteps; k++) {
    const prof__step *s = &an->steps[k];
    uint64_t dur = s->end_ns - s->begin_ns, w = s->bd_ns[PROF_BD_DATA] + s->bd_ns[PROF_BD_IO];
    if (w > dur) w = dur;
    sum += (double)(w < dur - w ? w : dur - w);
  }
  return an->nsteps ? sum / (double)an->nsteps : 0;
}

static double wait_per_step_ns(const prof__an *an, const res_st *st) {
  return an->nsteps ? st->wait_s * 1e9 / (double)an->nsteps : 0;
}

static void finding_saturated(prof__an *an, res_st *st) {
  double cores = mean_cores(&st->in_steps), wait = wait_share(st);
  if (st->cpus <= 0 || st->in_steps.cover_s <= 0 || cores < SAT_CPU_SHARE * st->cpus || wait < SAT_WAIT) return;
  char title[160], m[400];
  snprintf(title, sizeof title, "CPUs are saturated: the process keeps %.1f of %.1f usable cores busy", cores, st->cpus);
  snprintf(m, sizeof m,
           "mean process CPU during steps %.2f cores of %.2f usable (%.0f%%), peak %.2f; steps wait %.0f%% of "
           "their time in data/io ranges; machine load %.2f",
           cores, st->cpus, 100 * cores / st->cpus, st->in_steps.cpu_peak, 100 * wait,
           st->gauge[PROF_RES_LOAD1].n ? st->gauge[PROF_RES_LOAD1].sum / (double)st->gauge[PROF_RES_LOAD1].n : 0.0);
  prof__an_finding(an, "cpu_saturated", wait >= 0.3 ? "high" : "medium", cores / st->cpus, title, m,
                   "The CPUs are the limit while steps wait: use fewer or lighter data-loader threads (the busiest "
                   "threads are listed under Resources), move decoding and augmentation to the GPU, cache "
                   "preprocessed samples, or run on a machine with more cores.");
  char a[32];
  prof__an_finding_saving(an, wait_per_step_ns(an, st), prof__an_confidence(an->nsteps, 0),
                          "upper bound: the data/io wait of the step thread, %s per step over %zu steps, gone if the "
                          "CPUs kept up",
                          prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(wait_per_step_ns(an, st))), an->nsteps);
}

/* Other processes keep the machine's run queue longer than its CPUs: the
 * process gets less CPU than it asks for. */
static void finding_machine_busy(prof__an *an, res_st *st) {
  const char *on = prof__an_header(an, "res.cpus_online");
  double online = on ? atof(on) : 0;
  if (!(online > 0)) online = st->cpus;
  const gacc *l = &st->gauge[PROF_RES_LOAD1];
  const racc *c = &st->rate[PROF_RES_CPU], *inv = &st->rate[PROF_RES_CTX_INVOL];
  if (!(online > 0) || !l->n || c->cover_s <= 0) return;
  double load = l->sum / (double)l->n, cores = c->amount / c->cover_s, others = load - cores;
  if (load < BUSY_LOAD * online || others < BUSY_OTHERS * online) return;
  char title[200], m[480];
  snprintf(title, sizeof title,
           "The machine is saturated by other processes: load %.1f on %.0f CPUs, %.1f of it not this process", load,
           online, others);
  snprintf(m, sizeof m,
           "mean 1-minute load average %.2f on %.0f online CPUs (threshold %.1fx); this process used %.2f cores on "
           "average, so about %.1f runnable tasks were other processes'%s",
           load, online, BUSY_LOAD, cores, others, "");
  if (inv->cover_s > 0) {
    size_t k = strlen(m);
    snprintf(m + k, sizeof m - k, "; the process was preempted %.0f times a second (involuntary context switches)",
             inv->amount / inv->cover_s);
  }
  prof__an_finding(an, "machine_saturated", load >= BUSY_HIGH * online ? "high" : "medium", load / online, title, m,
                   "Other work competes for the CPUs, so this process gets less CPU than it asks for and its "
                   "timings are inflated. Profile on a quiet machine (check `top`/`uptime`), reserve cores "
                   "(taskset, cgroup cpusets, a batch scheduler's exclusive mode), or lower the other jobs' "
                   "priority (nice); compare step times only between runs on equally loaded machines.");
  /* Each runnable task gets online/load of a CPU, so the process's CPU
   * time per step took load/online times longer than it would alone. */
  double cpu = cores * (double)an->step_stats.mean_ns, stretch = load / online;
  double save = stretch > 1 ? cpu * (stretch - 1) : 0, rest = (double)an->step_stats.mean_ns - cpu;
  if (save > rest) save = rest > 0 ? rest : 0;
  char a[32];
  prof__an_finding_saving(an, save, prof__an_confidence(an->nsteps, 0),
                          "the process's CPU time per step (%s: %.2f cores x the mean step) took %.1fx as long as "
                          "alone, load %.2f sharing %.0f CPUs: its CPU time x (load / CPUs - 1), at most the step "
                          "time off a CPU",
                          prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(cpu)), cores, stretch, load, online);
  prof__an_finding_knum(an, "load1", load);
  prof__an_finding_knum(an, "others", others);
}

static double busiest_thread(const res_st *st, const thr **who) {
  double best = 0;
  *who = NULL;
  for (int i = 0; i < st->nthreads; i++)
    if (st->threads[i].peak > best) best = st->threads[i].peak, *who = &st->threads[i];
  return best;
}

/* The forked workers' CPU over the trace, in cores (0: none sampled). */
static double worker_cores(const prof__an *an, const res_st *st, int *n) {
  const char *v = prof__an_header(an, "cpu.sample_hz");
  double hz = v ? atof(v) : 0, span = (double)(an->last_ns - an->first_ns) / 1e9;
  *n = st->workers_meta > st->nworker_pids ? st->workers_meta : st->nworker_pids;
  if (!(hz > 0)) hz = 99;
  return st->worker_periods > 0 && span > 0 && an->last_ns > an->first_ns ? st->worker_periods / hz / span : 0;
}

/* The saving of more parallel loading: the wait spread over k loaders. */
static void underused_saving(prof__an *an, res_st *st, double k, const char *who) {
  double w = wait_per_step_ns(an, st);
  char a[32];
  prof__an_finding_saving(an, w * (1 - 1 / k), prof__an_confidence(an->nsteps, 0),
                          "the data/io wait of the step thread (%s per step over %zu steps) spread over %.0f %s: "
                          "it shrinks to 1/%.0f",
                          prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(w)), an->nsteps, k, who, k);
}

/* Steps wait for data with cores idle while forked DataLoader workers run:
 * more workers when they are saturated, else the way they hand batches. */
static void underused_with_workers(prof__an *an, res_st *st, double cores, double wait, int n, double wc) {
  double idle = st->cpus - cores - wc, per = wc / n;
  if (idle < UNDER_IDLE) return; /* the workers use the cores this process leaves */
  char title[200], m[480];
  int busy = per >= WORKERS_BUSY;
  snprintf(title, sizeof title, "Steps wait for data while %.1f cores idle (%d DataLoader worker%s %s)", idle, n,
           n == 1 ? "" : "s", busy ? "busy" : "not busy");
  snprintf(m, sizeof m,
           "mean process CPU during steps %.2f cores and its %d forked workers %.2f cores (%.2f each) over the run, "
           "of %.2f usable; steps wait %.0f%% of their time in data/io ranges",
           cores, n, wc, per, st->cpus, 100 * wait);
  char rec[640];
  if (busy)
    snprintf(rec, sizeof rec,
             "The %d workers are saturated (%.2f cores each) and %.1f cores idle: raise num_workers (to about %.0f), "
             "or make __getitem__ cheaper (see the workers' hot lines in the functions section).",
             n, per, idle, floor(n + idle));
  else
    snprintf(rec, sizeof rec,
             "The %d workers are not saturated (%.2f cores each), so more workers would not help: keep them "
             "alive across epochs (persistent_workers=True), let each prefetch more batches (prefetch_factor), "
             "balance the cost of __getitem__ across samples, and look for waits inside the workers (I/O, locks) "
             "or in the hand-over (large batches pickled through shared memory; pin_memory).",
             n, per);
  prof__an_finding(an, "cpu_underused", wait >= 0.5 ? "high" : "medium", cores + wc, title, m, rec);
  prof__an_finding_kstr(an, "advice", busy ? "more_workers" : "workers_not_busy");
  prof__an_finding_knum(an, "workers", n);
  prof__an_finding_knum(an, "worker_cores", wc);
  if (busy) underused_saving(an, st, floor(n + idle) / n, "times the workers");
  else underused_saving(an, st, 1, "(workers not saturated: no saving from more of them)");
}

static void finding_underused(prof__an *an, res_st *st) {
  double cores = mean_cores(&st->in_steps), wait = wait_share(st);
  if (st->cpus < UNDER_MIN_CORES || st->in_steps.cover_s <= 0) return;
  if (cores < UNDER_BUSY_LO || cores > UNDER_BUSY_HI || st->cpus - cores < UNDER_IDLE || wait < UNDER_WAIT) return;
  int n;
  double wc = worker_cores(an, st, &n);
  if (n > 0) {
    underused_with_workers(an, st, cores, wait, n, wc);
    return;
  }
  const thr *who;
  double busy = busiest_thread(st, &who);
  char title[160], m[400];
  snprintf(title, sizeof title, "One core does the work while %.1f cores idle in a data-bound job", st->cpus - cores);
  snprintf(m, sizeof m,
           "mean process CPU during steps %.2f cores of %.2f usable; steps wait %.0f%% of their time in "
           "data/io ranges",
           cores, st->cpus, 100 * wait);
  if (who) {
    size_t l = strlen(m);
    snprintf(m + l, sizeof m - l, "; busiest thread '%s' (tid %u) peaks at %.2f cores", who->comm, who->tid, busy);
  }
  prof__an_finding(an, "cpu_underused", wait >= 0.5 ? "high" : "medium", cores, title, m,
                   "Parallelise data loading: use several loader threads or worker processes (e.g. a "
                   "DataLoader with num_workers > 0, tf.data with parallel map), and prefetch batches so "
                   "the idle cores prepare the next step while this one runs.");
  /* the loading spread over the idle cores too: the wait shrinks to 1/k */
  underused_saving(an, st, floor(st->cpus - cores) + 1, "cores (the idle ones and the busy one)");
}

static void finding_io(prof__an *an, res_st *st) {
  double wait = wait_share(st), s = st->in_steps.cover_s;
  if (s <= 0 || wait < IO_WAIT) return;
  double r = st->in_steps.amount[S_IOR] / s, w = st->in_steps.amount[S_IOW] / s;
  if (r + w < IO_RATE) return;
  char title[160], m[400];
  snprintf(title, sizeof title, "Steps wait while the process moves %.0f MiB/s of I/O", (r + w) / 1048576.0);
  snprintf(m, sizeof m,
           "during steps the process read %.1f MiB/s and wrote %.1f MiB/s (storage: %.1f / %.1f MiB/s); steps "
           "wait %.0f%% of their time in data/io ranges",
           r / 1048576.0, w / 1048576.0, st->in_steps.amount[S_DR] / s / 1048576.0,
           st->in_steps.amount[S_DW] / s / 1048576.0, 100 * wait);
  prof__an_finding(an, "io_bound", wait >= 0.4 ? "high" : "medium", r + w, title, m,
                   w > r ? "Writes dominate: checkpoint asynchronously (copy the state, write from a background "
                           "thread), checkpoint less often, and buffer logs."
                         : "Reads dominate: cache the dataset in memory or on local fast storage, read in larger "
                           "blocks or pre-packed shards (TFRecord, WebDataset), and prefetch asynchronously.");
  prof__an_finding_saving(an, overlap_saving(an), prof__an_confidence(an->nsteps, 0),
                          "the I/O overlapped with the rest of the step (asynchronous reads or writes): each step "
                          "takes max(wait, rest) instead of their sum, wait = the data/io time of the step thread; "
                          "mean over %zu steps",
                          an->nsteps);
}

static int has_finding(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return 1;
  return 0;
}

static void finding_gpu(prof__an *an, res_st *st) {
  if (st->cupti || has_finding(an, "gpu_underused") || has_finding(an, "gpu_low_utilization") ||
      st->in_steps.gpu_w <= 0)
    return;
  double util = st->in_steps.gpu_sum / st->in_steps.gpu_w;
  if (util >= GPU_LOW) return;
  char title[160], m[320];
  snprintf(title, sizeof title, "The GPU is busy only %.0f%% of the step time", util);
  snprintf(m, sizeof m,
           "NVML utilisation averaged %.0f%% during steps (peak %.0f%%) over %d GPU%s; no CUPTI activity in the "
           "trace, so kernels are not broken down",
           util, st->in_steps.gpu_peak, st->ngpus, st->ngpus > 1 ? "s" : "");
  prof__an_finding(an, "gpu_underused", util < GPU_VERY_LOW ? "high" : "medium", util, title, m,
                   "Feed the GPU faster: prefetch input to the device, use larger batches, overlap host work "
                   "with kernels, and check the step breakdown for the CPU phases the GPU waits on.");
  double idle = (1 - util / 100) * (an->nsteps ? st->step_s * 1e9 / (double)an->nsteps : 0);
  char a[32];
  prof__an_finding_saving(an, idle, prof__an_confidence(an->nsteps, 0),
                          "upper bound: the time per step the GPU was idle by NVML (%.0f%% of %s), if the host kept it "
                          "busy",
                          100 - util, prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(st->step_s * 1e9 / (double)(an->nsteps ? an->nsteps : 1))));
}

static double rate_mean(const racc *r) { return r->cover_s > 0 ? r->amount / r->cover_s : 0; }

/* A rate's peak is its highest over a reading at least min_peak_s long, and
 * the whole covered span is such a reading: the peak is never below the
 * mean. (A short last reading, the exit's, can hold the run's fastest rate:
 * the mean counts it, the long readings miss it; gzip writing its output
 * showed "1.75 MiB/s, peak 1.51 MiB/s".) */
static void peaks_at_least_mean(res_st *st) {
  for (int c = 0; c < PROF_RES_NPROC; c++) {
    racc *r = &st->rate[c];
    if (r->cover_s >= st->min_peak_s && rate_mean(r) > r->peak) r->peak = rate_mean(r);
  }
}

static void res_finish(prof__an *an, void *vst) {
  res_st *st = vst;
  if (!st->seen) return;
  peaks_at_least_mean(st);
  gacc *rss = &st->gauge[PROF_RES_RSS]; /* a peak between two readings, from the kernel's mark */
  if (rss->n) rss->peak = prof__an_rss_peak(an, rss->peak);
  per_step(an, st);
  finding_saturated(an, st);
  finding_underused(an, st);
  finding_io(an, st);
  finding_gpu(an, st);
  finding_machine_busy(an, st);
}

/* ---- reports ---------------------------------------------------------------- */

static double meta_num(const prof__an *an, const char *key) {
  const char *v = prof__an_meta(an, key);
  return v ? atof(v) : 0;
}

static double gauge_mean(const gacc *g) { return g->n ? g->sum / (double)g->n : 0; }

static void json_run(const res_st *st, prof__json *j) {
  const racc *r = st->rate;
  double s = r[PROF_RES_CPU].cover_s;
  prof__json_key(j, "run");
  prof__json_obj_begin(j);
  prof__json_knum(j, "duration_s", s);
  prof__json_knum(j, "cpu_cores_mean", rate_mean(&r[PROF_RES_CPU]));
  prof__json_knum(j, "cpu_cores_peak", r[PROF_RES_CPU].peak);
  prof__json_knum(j, "cpu_user_cores_mean", rate_mean(&r[PROF_RES_CPU]) - rate_mean(&r[PROF_RES_CPU_SYS]));
  prof__json_knum(j, "cpu_sys_cores_mean", rate_mean(&r[PROF_RES_CPU_SYS]));
  prof__json_knum(j, "load1_mean", gauge_mean(&st->gauge[PROF_RES_LOAD1]));
  prof__json_knum(j, "load1_peak", st->gauge[PROF_RES_LOAD1].peak);
  prof__json_knum(j, "rss_peak_bytes", st->gauge[PROF_RES_RSS].peak);
  prof__json_knum(j, "ctx_voluntary", r[PROF_RES_CTX_VOL].amount);
  prof__json_knum(j, "ctx_involuntary", r[PROF_RES_CTX_INVOL].amount);
  prof__json_knum(j, "minor_faults", r[PROF_RES_MINFLT].amount);
  prof__json_knum(j, "major_faults", r[PROF_RES_MAJFLT].amount);
  int io = r[PROF_RES_IO_READ].cover_s > 0, net = r[PROF_RES_NET_RX].cover_s > 0;
  static const struct { const char *key; int code, rate, net; } m[] = {
      {"io_read_bytes", PROF_RES_IO_READ, 0, 0},      {"io_write_bytes", PROF_RES_IO_WRITE, 0, 0},
      {"io_read_rate", PROF_RES_IO_READ, 1, 0},       {"io_write_rate", PROF_RES_IO_WRITE, 1, 0},
      {"storage_read_bytes", PROF_RES_DISK_READ, 0, 0}, {"storage_write_bytes", PROF_RES_DISK_WRITE, 0, 0},
      {"net_rx_bytes", PROF_RES_NET_RX, 0, 1},        {"net_tx_bytes", PROF_RES_NET_TX, 0, 1},
      {"net_rx_rate", PROF_RES_NET_RX, 1, 1},         {"net_tx_rate", PROF_RES_NET_TX, 1, 1},
  };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    prof__json_key(j, m[i].key);
    if (!(m[i].net ? net : io)) prof__json_null(j);
    else prof__json_num(j, m[i].rate ? rate_mean(&r[m[i].code]) : round(r[m[i].code].amount));
  }
  prof__json_obj_end(j);
}

static void json_in_steps(const res_st *st, prof__json *j) {
  const step_res *s = &st->in_steps;
  double t = s->cover_s;
  prof__json_key(j, "in_steps");
  prof__json_obj_begin(j);
  prof__json_knum(j, "covered_s", t);
  prof__json_knum(j, "wait_share", wait_share(st));
  prof__json_knum(j, "cpu_cores_mean", mean_cores(s));
  prof__json_knum(j, "cpu_cores_peak", s->cpu_peak);
  prof__json_knum(j, "io_read_rate", t > 0 ? s->amount[S_IOR] / t : 0);
  prof__json_knum(j, "io_write_rate", t > 0 ? s->amount[S_IOW] / t : 0);
  prof__json_key(j, "gpu_util_mean");
  if (s->gpu_w > 0) prof__json_num(j, s->gpu_sum / s->gpu_w);
  else prof__json_null(j);
  prof__json_obj_end(j);
}

static void json_steps(prof__an *an, const res_st *st, prof__json *j) {
  prof__json_key(j, "steps");
  prof__json_arr_begin(j);
  for (size_t k = 0; k < st->nsteps; k++) {
    const step_res *s = &st->steps[k];
    double d = (double)(an->steps[k].end_ns - an->steps[k].begin_ns) / 1e9;
    prof__json_obj_begin(j);
    prof__json_kuint(j, "step", an->steps[k].number);
    prof__json_knum(j, "duration_s", d);
    prof__json_knum(j, "cpu_cores_mean", mean_cores(s));
    prof__json_knum(j, "cpu_cores_peak", s->cpu_peak);
    prof__json_knum(j, "io_read_bytes", round(s->amount[S_IOR]));
    prof__json_knum(j, "io_write_bytes", round(s->amount[S_IOW]));
    prof__json_knum(j, "io_read_rate", d > 0 ? s->amount[S_IOR] / d : 0);
    prof__json_knum(j, "io_write_rate", d > 0 ? s->amount[S_IOW] / d : 0);
    prof__json_knum(j, "net_rx_bytes", round(s->amount[S_NRX]));
    prof__json_knum(j, "net_tx_bytes", round(s->amount[S_NTX]));
    if (s->gpu_w > 0) {
      prof__json_knum(j, "gpu_util_mean", s->gpu_sum / s->gpu_w);
      prof__json_knum(j, "gpu_util_peak", s->gpu_peak);
    }
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_threads(const res_st *st, prof__json *j) {
  prof__json_key(j, "threads");
  prof__json_arr_begin(j);
  int used[RES_MAX_THREADS] = {0};
  for (int n = 0; n < st->nthreads && n < PROF_RES_TOP_THREADS; n++) {
    int best = -1; /* busiest first, by CPU seconds seen */
    for (int i = 0; i < st->nthreads; i++)
      if (!used[i] && (best < 0 || st->threads[i].cpu_s > st->threads[best].cpu_s)) best = i;
    used[best] = 1;
    const thr *t = &st->threads[best];
    prof__json_obj_begin(j);
    prof__json_kuint(j, "tid", t->tid);
    prof__json_kstr(j, "name", t->comm);
    prof__json_knum(j, "cpu_s", t->cpu_s);
    prof__json_knum(j, "cpu_cores_mean", t->window_s > 0 ? t->cpu_s / t->window_s : 0);
    prof__json_knum(j, "cpu_cores_peak", t->peak);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_gpus(prof__an *an, const res_st *st, prof__json *j) {
  prof__json_key(j, "gpus");
  prof__json_arr_begin(j);
  for (int i = 0; i < st->ngpus; i++) {
    const gacc *g = st->gpu[i];
    char key[32];
    snprintf(key, sizeof key, "res.gpu%d.name", i);
    const char *name = prof__an_header(an, key);
    prof__json_obj_begin(j);
    prof__json_kint(j, "index", i);
    prof__json_kstr(j, "name", name ? name : "");
    prof__json_knum(j, "util_mean", gauge_mean(&g[0]));
    prof__json_knum(j, "util_peak", g[0].peak);
    prof__json_knum(j, "mem_util_mean", gauge_mean(&g[1]));
    prof__json_knum(j, "mem_used_peak_bytes", g[2].peak);
    prof__json_knum(j, "power_mean_w", gauge_mean(&g[3]));
    prof__json_knum(j, "power_peak_w", g[3].peak);
    prof__json_knum(j, "sm_clock_mean_mhz", gauge_mean(&g[4]));
    prof__json_knum(j, "temp_peak_c", g[5].peak);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void res_json(prof__an *an, void *vst, prof__json *j) {
  res_st *st = vst;
  if (!st->seen) return;
  double cost = meta_num(an, "res.sample_cost_ns");
  const char *gpu = prof__an_header(an, "res.gpu"), *online = prof__an_header(an, "res.cpus_online");
  prof__json_key(j, "resources");
  prof__json_obj_begin(j);
  prof__json_knum(j, "period_ms", st->period_ms);
  prof__json_knum(j, "cpus", st->cpus);
  prof__json_knum(j, "cpus_online", online ? atof(online) : 0);
  prof__json_knum(j, "samples", meta_num(an, "res.samples"));
  prof__json_knum(j, "sample_cost_us", cost / 1e3);
  prof__json_knum(j, "sample_cost_core_pct", st->period_ms > 0 ? cost / (st->period_ms * 1e6) * 100 : 0);
  prof__json_kstr(j, "gpu_status", gpu ? gpu : "unknown");
  prof__json_kstr(j, "network_scope", "network namespace: every process in it, loopback included");
  prof__json_kstr(j, "io_scope", "the process and the child processes it has waited for, counted in when reaped");
  json_run(st, j);
  json_in_steps(st, j);
  json_steps(an, st, j);
  json_threads(st, j);
  json_gpus(an, st, j);
  prof__json_obj_end(j);
}

static void text_mib(FILE *out, const char *what, const racc *r) {
  if (r->cover_s <= 0) return;
  fprintf(out, "  %-22s %10.1f MiB  (%.2f MiB/s, peak %.2f MiB/s)\n", what, r->amount / 1048576.0,
          rate_mean(r) / 1048576.0, r->peak / 1048576.0);
}

static void res_text(prof__an *an, void *vst, FILE *out) {
  res_st *st = vst;
  if (!st->seen) return;
  const racc *r = st->rate;
  const char *gpu = prof__an_header(an, "res.gpu");
  fprintf(out, "\nResources (sampled every %.0f ms; %.2f usable cores)\n", st->period_ms, st->cpus);
  fprintf(out, "  %-22s %10.2f cores mean, %.2f peak (system %.2f)", "process CPU", rate_mean(&r[PROF_RES_CPU]),
          r[PROF_RES_CPU].peak, rate_mean(&r[PROF_RES_CPU_SYS]));
  if (an->nsteps) fprintf(out, "; during steps %.2f mean, %.2f peak\n", mean_cores(&st->in_steps), st->in_steps.cpu_peak);
  else fputs("; no steps recorded\n", out);
  fprintf(out, "  %-22s %10.2f mean, %.2f peak\n", "machine load (1 min)", gauge_mean(&st->gauge[PROF_RES_LOAD1]),
          st->gauge[PROF_RES_LOAD1].peak);
  fprintf(out, "  %-22s %10.1f MiB peak; %.0f minor, %.0f major faults; %.0f voluntary, %.0f involuntary switches\n",
          "memory (RSS)", st->gauge[PROF_RES_RSS].peak / 1048576.0, r[PROF_RES_MINFLT].amount, r[PROF_RES_MAJFLT].amount,
          r[PROF_RES_CTX_VOL].amount, r[PROF_RES_CTX_INVOL].amount);
  text_mib(out, "read (syscalls)", &r[PROF_RES_IO_READ]);
  text_mib(out, "written (syscalls)", &r[PROF_RES_IO_WRITE]);
  text_mib(out, "read from storage", &r[PROF_RES_DISK_READ]);
  text_mib(out, "written to storage", &r[PROF_RES_DISK_WRITE]);
  text_mib(out, "network received", &r[PROF_RES_NET_RX]);
  text_mib(out, "network sent", &r[PROF_RES_NET_TX]);
  if (r[PROF_RES_IO_READ].cover_s > 0) /* /proc/self/io: the kernel adds a reaped child's I/O to its parent's */
    fprintf(out, "  (I/O: this process and the child processes it has waited for, counted in when reaped)\n");
  if (r[PROF_RES_NET_RX].cover_s > 0) fprintf(out, "  (network: whole network namespace, loopback included)\n");
  char nm[PROF_TERM_NAME];
  for (int i = 0; i < st->nthreads && i < 3; i++)
    fprintf(out, "  thread %-15s %10.2f cores peak (tid %u)\n", prof__term_name(nm, sizeof nm, st->threads[i].comm),
            st->threads[i].peak, st->threads[i].tid);
  for (int i = 0; i < st->ngpus; i++)
    fprintf(out, "  GPU %d %-16s %10.0f%% util mean, %.0f%% peak; %.0f MiB peak memory; %.0f W mean\n", i, "",
            gauge_mean(&st->gpu[i][0]), st->gpu[i][0].peak, st->gpu[i][2].peak / 1048576.0, gauge_mean(&st->gpu[i][3]));
  if (!st->ngpus) fprintf(out, "  GPU: %s\n", prof__term_name(nm, sizeof nm, gpu ? gpu : "not sampled"));
}

static void res_destroy(prof__an *an, void *vst) {
  (void)an;
  res_st *st = vst;
  free(st->ivs);
  free(st->steps);
}

const prof__section prof__sec_resources = {
    .name = "resources",
    .state_size = sizeof(res_st),
    .record = res_record,
    .finish = res_finish,
    .text = res_text,
    .json = res_json,
    .html = prof__sec_resources_html,
    .destroy = res_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_COUNTER) | PROF_EVMASK(PROF_EV_SAMPLE),
};
