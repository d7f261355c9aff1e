/* sec_gpu.c — the GPU section of the report (JSON key "gpu"): how busy the
 * GPU was in each step, why it was idle, where the step time went with GPU
 * categories, which kernels, ranges and copies cost most, and findings.
 *
 * Pass 1 keeps compact intervals of kernels, copies, sets and runtime calls
 * (32 bytes per kernel, 16 per other record), per-name aggregates, and the
 * innermost range category of each step-running thread while inside a
 * step. finish() sorts the intervals, splits kernels into compute and
 * communication (NCCL/RCCL, by name: the names are known only once the
 * whole trace was read), merges them into unions and measures every step
 * window against them (sec_gpu_windows.c); the findings are in
 * sec_gpu_findings.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/sections/gpu/sec_gpu_state.h"
#include "analyze/util/array.h"

void *prof__sec_gpu_vec_push(gpu_state *g, vec *v, size_t sz) {
  if (prof__arr_grow(&v->p, &v->cap, v->n + 1, sz)) {
    g->oom = 1;
    return NULL;
  }
  return (char *)v->p + sz * v->n++;
}

/* ---- pass 1: GPU records ------------------------------------------------- */

static gpu_kstat *kstat_of(gpu_state *g, uint32_t name) {
  uint32_t i = prof__map32_get(&g->kmap, name);
  if (i != UINT32_MAX) return (gpu_kstat *)g->kst.p + i;
  gpu_kstat *k = prof__sec_gpu_vec_push(g, &g->kst, sizeof *k);
  if (!k) return NULL;
  memset(k, 0, sizeof *k);
  k->name = name;
  k->min_ns = UINT64_MAX;
  if (prof__map32_put(&g->kmap, name, (uint32_t)(g->kst.n - 1))) g->oom = 1;
  return k;
}

static gpu_rstat *rstat_of(gpu_state *g, uint32_t range) {
  uint32_t i = prof__map32_get(&g->rmap, range);
  if (i != UINT32_MAX) return (gpu_rstat *)g->rst.p + i;
  gpu_rstat *r = prof__sec_gpu_vec_push(g, &g->rst, sizeof *r);
  if (!r) return NULL;
  memset(r, 0, sizeof *r);
  r->range = range;
  if (prof__map32_put(&g->rmap, range, (uint32_t)(g->rst.n - 1))) g->oom = 1;
  return r;
}

static void on_kernel(gpu_state *g, const prof__gpu_rec *r) {
  uint64_t d = r->end - r->start;
  kiv *x = prof__sec_gpu_vec_push(g, &g->k, sizeof *x);
  if (x) *x = (kiv){r->start, r->end, r->launch, r->name, r->device};
  g->sum.kernels++;
  if (!r->launch) g->sum.kernels_unattributed++;
  size_t di = 0;
  while (di < g->sum.nbusy_devices && g->sum.busy_devices[di] != r->device) di++;
  if (di == g->sum.nbusy_devices && di < 16) g->sum.busy_devices[g->sum.nbusy_devices++] = r->device;
  g->sum.kernel_ns += d;
  gpu_kstat *k = kstat_of(g, r->name);
  if (k) {
    k->calls++;
    k->total_ns += d;
    if (d < k->min_ns) k->min_ns = d;
    if (d >= k->max_ns) {
      k->max_ns = d;
      memcpy(k->grid, r->grid, sizeof k->grid);
      memcpy(k->block, r->block, sizeof k->block);
      k->regs = r->regs;
      k->smem = r->smem_static + r->smem_dynamic;
      k->device = r->device;
    }
  }
  gpu_rstat *rs = rstat_of(g, r->range);
  if (rs) {
    rs->kernels++;
    rs->kernel_ns += d;
  }
}

static void on_copy(gpu_state *g, const prof__gpu_rec *r) {
  iv *x = prof__sec_gpu_vec_push(g, r->kind == PROF_GPU_MEMCPY ? &g->c : &g->s, sizeof *x);
  if (x) *x = (iv){r->start, r->end};
  gpu_rstat *rs = rstat_of(g, r->range);
  if (rs) {
    rs->copies++;
    rs->copy_ns += r->end - r->start;
  }
  if (r->kind == PROF_GPU_MEMSET) {
    g->sum.sets++;
    return;
  }
  g->sum.copies++;
  gpu_copy *c = &g->sum.copy[r->sub < PROF_GPU_COPY_COUNT ? r->sub : 0];
  c->count++;
  c->bytes += r->bytes;
  c->ns += r->end - r->start;
  int host = r->sub == PROF_GPU_COPY_H2D ? r->src_mem : r->sub == PROF_GPU_COPY_D2H ? r->dst_mem : 0;
  if (host == PROF_GPU_MEM_PAGEABLE) c->pageable++;
  if (host == PROF_GPU_MEM_PINNED) c->pinned++;
}

static void on_device(gpu_state *g, const prof__gpu_rec *r) {
  gpu_device *d = NULL;
  for (size_t i = 0; i < g->sum.ndevices && !d; i++)
    if (g->sum.devices[i].id == r->device) d = &g->sum.devices[i];
  if (!d && g->sum.ndevices < 16) d = &g->sum.devices[g->sum.ndevices++];
  if (!d) return;
  *d = (gpu_device){r->device, r->name, r->cc_major, r->cc_minor, r->sm_count, r->max_threads_per_sm,
                    r->max_warps_per_sm, r->max_blocks_per_sm, r->max_regs_per_sm, r->max_smem_per_sm,
                    r->mem_bytes, 0};
}

static void on_gpu_rec(gpu_state *g, const prof__gpu_rec *r) {
  g->sum.records++;
  if (r->kind != PROF_GPU_DEVICE && r->kind != PROF_GPU_DROPPED && r->start) {
    if (r->start < g->first) g->first = r->start;
    if (r->end > g->last) g->last = r->end;
  }
  switch (r->kind) {
  case PROF_GPU_KERNEL: on_kernel(g, r); break;
  case PROF_GPU_MEMCPY:
  case PROF_GPU_MEMSET: on_copy(g, r); break;
  case PROF_GPU_SYNC: {
    tiv *x = prof__sec_gpu_vec_push(g, &g->sync, sizeof *x);
    if (x) *x = (tiv){r->start, r->end, r->tid};
    if (r->end - r->start > g->sync_max) g->sync_max = r->end - r->start;
    g->sum.syncs++;
    g->sum.sync_by_type[r->sub < 5 ? r->sub : 0] += r->end - r->start;
    break;
  }
  case PROF_GPU_API: {
    g->sum.api_calls++;
    g->sum.api_ns += r->end - r->start;
    tiv *x = r->sub == PROF_GPU_API_RUNTIME ? prof__sec_gpu_vec_push(g, &g->r, sizeof *x) : NULL;
    if (x) *x = (tiv){r->start, r->end, r->tid};
    if (x && r->end - r->start > g->r_max) g->r_max = r->end - r->start;
    break;
  }
  case PROF_GPU_MEMORY: {
    memev *m = prof__sec_gpu_vec_push(g, &g->mem, sizeof *m);
    if (m) *m = (memev){r->start, r->bytes, r->device, r->sub == PROF_GPU_MEMOP_ALLOC, r->src_mem};
    break;
  }
  case PROF_GPU_OVERHEAD:
    g->sum.overheads++;
    g->sum.overhead_ns += r->end - r->start;
    break;
  case PROF_GPU_DEVICE: on_device(g, r); break;
  case PROF_GPU_DROPPED:
    if (r->bytes > g->sum.dropped) g->sum.dropped = r->bytes;
    break;
  default: break;
  }
}

static void on_chunk(gpu_state *g, const prof__rec *rec) {
  prof__gpu_dec d;
  prof__gpu_rec r;
  int rc = prof__rec_gpu_dec_init(&d, rec->data, rec->len);
  while (rc == 0 && (rc = prof__rec_gpu_dec_next(&d, &r)) == 1) {
    on_gpu_rec(g, &r);
    rc = 0;
  }
  if (rc < 0) g->sum.bad_chunks++;
}

/* ---- pass 1: CPU categories of step-running threads ----------------------- */

static int cat_bucket(int cat) {
  switch (cat) {
  case PROF_CAT_COMPUTE: return GPU_BD_COMPUTE;
  case PROF_CAT_DATA: return GPU_BD_DATA;
  case PROF_CAT_COMM: return GPU_BD_COMM;
  default: return GPU_BD_OTHER;
  }
}

static cpu_thread *thread_of(prof__an *an, gpu_state *g, uint32_t tid) {
  size_t ti = prof__an_thread_index(an, tid);
  if (ti == SIZE_MAX) return NULL;
  if (prof__arr_grow((void **)&g->th, &g->nth, ti + 1, sizeof *g->th)) {
    g->oom = 1;
    return NULL;
  }
  cpu_thread *t = &g->th[ti];
  t->tid = tid;
  t->seen = 1;
  return t;
}

/* The bucket of what the thread runs now: its innermost open range's
 * category, from the engine's context (prof__an_ctx) of the event read. */
static int cur_bucket(const cpu_thread *t) { return t->cur_cat >= 0 ? cat_bucket(t->cur_cat) : GPU_BD_OTHER; }

static void seg_close(gpu_state *g, cpu_thread *t, uint64_t ts) {
  if (!t->in_step || ts <= t->seg_start) return;
  seg *s = prof__sec_gpu_vec_push(g, &t->segs, sizeof *s);
  if (s) *s = (seg){t->seg_start, ts, (uint8_t)t->seg_bucket};
}

static void seg_switch(gpu_state *g, cpu_thread *t, uint64_t ts) {
  int b = cur_bucket(t);
  if (t->in_step && b == t->seg_bucket) return;
  seg_close(g, t, ts);
  t->seg_start = ts;
  t->seg_bucket = b;
}

static void on_event(prof__an *an, gpu_state *g, uint32_t tid, const prof__event *ev) {
  if (ev->type < PROF_EV_RANGE_BEGIN || ev->type > PROF_EV_STEP_END || ev->type == PROF_EV_MARK ||
      ev->type == PROF_EV_COUNTER)
    return;
  cpu_thread *t = thread_of(an, g, tid);
  if (!t) return;
  t->cur_cat = prof__an_ctx(an)->cat;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN:
  case PROF_EV_RANGE_END: seg_switch(g, t, ev->ts); break;
  case PROF_EV_STEP_BEGIN:
    seg_close(g, t, ev->ts);
    t->in_step = 1;
    t->seg_start = ev->ts;
    t->seg_bucket = cur_bucket(t);
    break;
  case PROF_EV_STEP_END:
    seg_close(g, t, ev->ts);
    t->in_step = 0;
    break;
  default: break;
  }
}

/* The trace's header says CUPTI recorded the GPU. */
static int capture_in_header(const prof__an *an) {
  const char *cap = prof__an_header(an, "gpu.capture");
  return cap && strcmp(cap, "cupti") == 0;
}

/* No event reaches the section before a GPU capture is known (the
 * header's, or a first GPU chunk): a trace without a GPU costs nothing
 * per event here. */
static uint64_t gpu_events_now(const prof__an *an, void *st) {
  const gpu_state *g = st;
  return g->capture || capture_in_header(an) ? ~0ull : 0;
}

static void gpu_record(prof__an *an, void *st, const prof__rec *rec) {
  gpu_state *g = st;
  if (!g->inited) {
    g->inited = 1;
    g->capture = capture_in_header(an);
    g->first = UINT64_MAX;
  }
  if (rec->kind == PROF_REC_CHUNK && rec->chunk_type == PROF_CHUNK_GPU) {
    if (!g->capture) prof__an_dispatch_again(an); /* its events from now on (gpu_events_now) */
    g->capture = 1;
    on_chunk(g, rec);
  } else if (rec->kind == PROF_REC_EVENT && g->capture) {
    on_event(an, g, rec->tid, &rec->ev);
  }
}

/* ---- finish: unions ------------------------------------------------------ */

static int cmp_iv(const void *a, const void *b) {
  const iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : 0;
}

static int cmp_tiv(const void *a, const void *b) {
  const tiv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : 0;
}

static int cmp_kiv(const void *a, const void *b) {
  const kiv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : 0;
}

/* Sort and merge in place into disjoint intervals; returns the count. */
size_t prof__sec_gpu_merge_iv(iv *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_iv);
  size_t o = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[o].e) {
      if (v[i].e > v[o].e) v[o].e = v[i].e;
    } else {
      v[++o] = v[i];
    }
  }
  return o + 1;
}

/* Kernels (already sorted): the union keeps the launch time of each busy
 * period's first kernel. */
static size_t merge_kiv(kiv *v, size_t n) {
  if (!n) return 0;
  size_t o = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[o].e) {
      if (v[i].e > v[o].e) v[o].e = v[i].e;
    } else {
      v[++o] = v[i];
    }
  }
  return o + 1;
}

/* ---- finish: aggregates -------------------------------------------------- */

static int cmp_kstat(const void *a, const void *b) {
  const gpu_kstat *x = a, *y = b;
  return x->total_ns > y->total_ns ? -1 : x->total_ns < y->total_ns ? 1 : (x->name > y->name) - (x->name < y->name);
}

static int cmp_rstat(const void *a, const void *b) {
  const gpu_rstat *x = a, *y = b;
  uint64_t tx = x->kernel_ns + x->copy_ns, ty = y->kernel_ns + y->copy_ns;
  return tx > ty ? -1 : tx < ty ? 1 : (x->range > y->range) - (x->range < y->range);
}

static int cmp_mem(const void *a, const void *b) {
  const memev *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : y->alloc - x->alloc;
}

static const gpu_device *device_by_id(const gpu_summary *s, uint32_t id) {
  for (size_t i = 0; i < s->ndevices; i++)
    if (s->devices[i].id == id) return &s->devices[i];
  return NULL;
}

static void memory_peak(gpu_state *g) {
  memev *m = g->mem.p;
  if (g->mem.n) qsort(m, g->mem.n, sizeof *m, cmp_mem);
  for (size_t d = 0; d < g->sum.ndevices; d++) {
    gpu_device *dev = &g->sum.devices[d];
    int64_t cur = 0, peak = 0;
    for (size_t i = 0; i < g->mem.n; i++) {
      if (m[i].device != dev->id || m[i].mem == PROF_GPU_MEM_PINNED || m[i].mem == PROF_GPU_MEM_PAGEABLE) continue;
      cur += m[i].alloc ? (int64_t)m[i].bytes : -(int64_t)m[i].bytes;
      if (cur > peak) peak = cur;
    }
    dev->mem_peak = (uint64_t)peak;
  }
}

static void kernel_stats(gpu_state *g, prof__an *an) {
  gpu_summary *s = &g->sum;
  s->kstats = g->kst.p;
  s->nkstats = g->kst.n;
  s->rstats = g->rst.p;
  s->nrstats = g->rst.n;
  if (s->nkstats) qsort(s->kstats, s->nkstats, sizeof *s->kstats, cmp_kstat);
  if (s->nrstats) qsort(s->rstats, s->nrstats, sizeof *s->rstats, cmp_rstat);
  uint64_t fp32 = 0;
  int tc_capable = 0;
  for (size_t i = 0; i < s->ndevices; i++) tc_capable |= s->devices[i].cc_major >= 7;
  for (size_t i = 0; i < s->nkstats; i++) {
    gpu_kstat *k = &s->kstats[i];
    if (k->min_ns == UINT64_MAX) k->min_ns = 0;
    k->occupancy = prof__sec_gpu_occupancy(device_by_id(s, k->device), k->block, k->regs, k->smem);
    if (prof__sec_gpu_fp32_matmul_name(prof__an_str(an, k->name))) fp32 += k->total_ns;
  }
  s->fp32_share = tc_capable && s->kernel_ns ? (double)fp32 / (double)s->kernel_ns : 0.0;
}

/* ---- finish: compute and communication kernels --------------------------- */

/* Is kernel name `id` a communication kernel? Each name is looked at once:
 * cls[id] is 0 until then, 1 for compute, 2 for communication. */
static int is_comm(prof__an *an, uint8_t *cls, uint32_t id) {
  if (!cls || id >= an->nstrings) return 0;
  if (!cls[id]) cls[id] = prof__sec_gpu_comm_kernel_name(an->strings[id]) ? 2 : 1;
  return cls[id] == 2;
}

/* With the kernels sorted by start: when any kernel communicates, fill
 * u->kc/u->m with the merged compute and communication kernels (the caller
 * frees both); otherwise the compute kernels are all of them (u->kc = k,
 * set later) and u->m is empty. Returns -1 when out of memory. */
static int split_kernels(gpu_state *g, prof__an *an, unions *u) {
  const kiv *k = g->k.p;
  uint8_t *cls = calloc(an->nstrings ? an->nstrings : 1, 1);
  if (!cls) return -1;
  size_t ncomm = 0;
  for (size_t i = 0; i < g->k.n; i++) ncomm += (size_t)is_comm(an, cls, k[i].name);
  iv *c = ncomm ? malloc((g->k.n - ncomm + 1) * sizeof *c) : NULL, *m = ncomm ? malloc(ncomm * sizeof *m) : NULL;
  if (!c || !m) {
    free(cls), free(c), free(m);
    return ncomm ? -1 : 0;
  }
  g->sum.comm_kernels = ncomm;
  size_t nc = 0, nm = 0;
  for (size_t i = 0; i < g->k.n; i++) {
    if (is_comm(an, cls, k[i].name)) m[nm++] = (iv){k[i].s, k[i].e};
    else c[nc++] = (iv){k[i].s, k[i].e};
  }
  free(cls);
  u->kc = c, u->nkc = prof__sec_gpu_merge_iv(c, nc), u->kcsz = sizeof *c;
  u->m = m, u->nm = prof__sec_gpu_merge_iv(m, nm);
  return 0;
}

/* With kernels on several devices: each device's kernels, merged (sorted
 * input). One device needs none: its busy time is the union of all. */
static int per_device_kernels(gpu_state *g, unions *u) {
  const kiv *k = g->k.p;
  for (size_t d = 0; d < g->sum.nbusy_devices; d++) {
    size_t n = 0;
    for (size_t i = 0; i < g->k.n; i++) n += k[i].device == g->sum.busy_devices[d];
    iv *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return -1;
    n = 0;
    for (size_t i = 0; i < g->k.n; i++)
      if (k[i].device == g->sum.busy_devices[d]) v[n++] = (iv){k[i].s, k[i].e};
    u->dev[d] = v;
    u->ndev[d] = prof__sec_gpu_merge_iv(v, n);
  }
  return 0;
}

/* ---- finish -------------------------------------------------------------- */

static void meta_status(gpu_state *g, prof__an *an) {
  const char *st = prof__an_meta(an, "gpu.status"), *detail = prof__an_meta(an, "gpu.status_detail");
  if (st) g->sum.status = st;
  if (detail) g->sum.status_detail = detail;
}

static int make_windows(gpu_state *g, prof__an *an) {
  gpu_summary *s = &g->sum;
  s->whole_trace = an->nsteps == 0;
  s->nwindows = s->whole_trace ? 1 : an->nsteps;
  s->windows = calloc(s->nwindows, sizeof *s->windows);
  if (!s->windows) return -1;
  if (s->whole_trace) {
    uint64_t b = an->first_ns < g->first ? an->first_ns : g->first;
    uint64_t e = an->last_ns > g->last ? an->last_ns : g->last;
    s->windows[0].begin = b;
    s->windows[0].end = e > b ? e : b;
    return 0;
  }
  for (size_t i = 0; i < an->nsteps; i++) {
    s->windows[i].number = an->steps[i].number;
    s->windows[i].begin = an->steps[i].begin_ns;
    s->windows[i].end = an->steps[i].end_ns;
  }
  return 0;
}

static void gpu_finish(prof__an *an, void *st) {
  gpu_state *g = st;
  meta_status(g, an);
  gpu_summary *s = &g->sum;
  s->have_data = s->records > 0 || s->status != NULL;
  if (!s->records) return;
  kernel_stats(g, an);
  memory_peak(g);
  if (make_windows(g, an)) {
    g->oom = 1;
    return;
  }
  /* Count kernel starts per window on the sorted list before merging it. */
  if (g->k.n) qsort(g->k.p, g->k.n, sizeof(kiv), cmp_kiv);
  for (size_t i = 0; i < s->nwindows; i++) {
    s->windows[i].kernels = prof__sec_gpu_count_starts(g->k.p, g->k.n, s->windows[i].begin, s->windows[i].end);
    s->total.kernels += s->windows[i].kernels;
  }
  unions u = {0};
  if (split_kernels(g, an, &u)) g->oom = 1; /* then every kernel counts as compute */
  if (s->nbusy_devices > 1 && per_device_kernels(g, &u)) g->oom = 1;
  u.k = g->k.p, u.nk = merge_kiv(g->k.p, g->k.n);
  if (!u.kc) u.kc = u.k, u.nkc = u.nk, u.kcsz = sizeof *u.k;
  u.c = g->c.p, u.nc = prof__sec_gpu_merge_iv(g->c.p, g->c.n);
  u.s = g->s.p, u.ns = prof__sec_gpu_merge_iv(g->s.p, g->s.n);
  if (g->r.n) qsort(g->r.p, g->r.n, sizeof(tiv), cmp_tiv);
  if (g->sync.n) qsort(g->sync.p, g->sync.n, sizeof(tiv), cmp_tiv);
  u.r = g->r.p, u.nr = g->r.n, u.r_max = g->r_max;
  u.sync = g->sync.p, u.nsync = g->sync.n, u.sync_max = g->sync_max;
  prof__sec_gpu_measure_windows(g, an, &u);
  if (u.kc != u.k) free((void *)u.kc);
  free(u.m);
  for (int d = 0; d < 16; d++) free(u.dev[d]);
  uint64_t wall = s->total.end;
  prof__sec_gpu_findings(an, s, wall);
}

static void gpu_destroy(prof__an *an, void *st) {
  (void)an;
  gpu_state *g = st;
  free(g->k.p), free(g->c.p), free(g->s.p), free(g->r.p), free(g->sync.p), free(g->mem.p);
  free(g->kst.p), free(g->rst.p), free(g->kmap.slots), free(g->rmap.slots);
  for (size_t i = 0; i < g->nth; i++) free(g->th[i].segs.p);
  free(g->th);
  free(g->sum.windows);
}

const gpu_summary *prof__sec_gpu_summary(prof__an *an) {
  gpu_state *g = prof__an_section(an, "gpu");
  return g ? &g->sum : NULL;
}

const char *prof__sec_gpu_bd_name(int b) {
  static const char *const n[GPU_BD_COUNT] = {"kernel", "memcpy", "memset", "communication",
                                              "runtime_api", "data_loading", "cpu_compute", "other"};
  return b >= 0 && b < GPU_BD_COUNT ? n[b] : "?";
}

const prof__section prof__sec_gpu = {
    .name = "gpu",
    .state_size = sizeof(gpu_state),
    .record = gpu_record,
    .finish = gpu_finish,
    .text = prof__sec_gpu_text,
    .json = prof__sec_gpu_json,
    .html = prof__sec_gpu_html,
    .destroy = gpu_destroy,
    .chrome = prof__sec_gpu_chrome_hook,
    .event_mask = PROF_EVMASK(PROF_EV_RANGE_BEGIN) | PROF_EVMASK(PROF_EV_RANGE_END) |
                  PROF_EVMASK(PROF_EV_STEP_BEGIN) | PROF_EVMASK(PROF_EV_STEP_END),
    .event_mask_now = gpu_events_now,
};
