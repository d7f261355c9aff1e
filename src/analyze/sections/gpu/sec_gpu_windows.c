/* sec_gpu_windows.c — the GPU section's step-window measurement: each
 * step window is cut out of the merged kernel, copy, set, runtime-call and
 * synchronisation unions and measured (busy time, idle split by host wait,
 * overlap of communication with compute, and the breakdown of the step time
 * into GPU and CPU categories). Called from finish() in sec_gpu.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/sections/gpu/sec_gpu_state.h"

/* First interval of a sorted disjoint list ending after t. */
static size_t first_after(const void *base, size_t n, size_t sz, uint64_t t) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const iv *x = (const iv *)((const char *)base + mid * sz); /* s, e lead every layout */
    if (x->e <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The part of a disjoint list inside [b, e), appended to out (clipped). */
static void slice(gpu_state *g, vec *out, const void *base, size_t n, size_t sz, uint64_t b, uint64_t e) {
  out->n = 0;
  for (size_t i = first_after(base, n, sz, b); i < n; i++) {
    const iv *x = (const iv *)((const char *)base + i * sz);
    if (x->s >= e) break;
    iv *o = prof__sec_gpu_vec_push(g, out, sizeof *o);
    if (o) *o = (iv){x->s > b ? x->s : b, x->e < e ? x->e : e};
  }
}

static uint64_t measure(const iv *v, size_t n) {
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) t += v[i].e - v[i].s;
  return t;
}

/* cover := cover ∪ add (both sorted disjoint); returns the newly covered time. */
static uint64_t cover_add(gpu_state *g, vec *cover, vec *tmp, const iv *add, size_t n) {
  const iv *a = cover->p;
  size_t na = cover->n, i = 0, j = 0;
  uint64_t before = measure(a, na);
  tmp->n = 0;
  while (i < na || j < n) {
    iv x = (j >= n || (i < na && a[i].s <= add[j].s)) ? a[i++] : add[j++];
    iv *last = tmp->n ? (iv *)tmp->p + tmp->n - 1 : NULL;
    if (last && x.s <= last->e) {
      if (x.e > last->e) last->e = x.e;
    } else {
      iv *o = prof__sec_gpu_vec_push(g, tmp, sizeof *o);
      if (o) *o = x;
    }
  }
  vec t = *cover;
  *cover = *tmp;
  *tmp = t;
  uint64_t after = measure(cover->p, cover->n);
  return after - before;
}

/* CPU segments of one bucket of a thread, inside [b, e). */
static void cpu_slice(gpu_state *g, vec *out, const cpu_thread *t, int bucket, uint64_t b, uint64_t e) {
  out->n = 0;
  if (!t) return;
  const seg *s = t->segs.p;
  for (size_t i = first_after(s, t->segs.n, sizeof *s, b); i < t->segs.n && s[i].s < e; i++) {
    if (s[i].bucket != bucket) continue;
    iv *o = prof__sec_gpu_vec_push(g, out, sizeof *o);
    if (o) *o = (iv){s[i].s > b ? s[i].s : b, s[i].e < e ? s[i].e : e};
  }
}

typedef struct scratch {
  vec a, comm, cover, tmp;
} scratch;

/* Idle time of [b, e) outside kernel busy periods, split by whether the
 * kernel that ended each gap was launched after the gap began (host wait). */
static void idle_split(const unions *u, gpu_window *w) {
  size_t i = first_after(u->k, u->nk, sizeof *u->k, w->begin);
  uint64_t gap = w->begin;
  uint64_t prev_end = i > 0 ? u->k[i - 1].e : 0;
  for (;; i++) {
    int have = i < u->nk && u->k[i].s < w->end;
    uint64_t gap_end = have ? (u->k[i].s > w->begin ? u->k[i].s : w->begin) : w->end;
    if (gap_end > gap) {
      const kiv *next = i < u->nk ? &u->k[i] : NULL;
      int host = next && next->launch && prev_end && next->launch >= prev_end;
      if (host) w->idle_host_ns += gap_end - gap;
      else if (next && !next->launch && next->s < w->end) w->idle_unattributed_ns += gap_end - gap;
      else w->idle_other_ns += gap_end - gap;
    }
    if (!have) break;
    prev_end = u->k[i].e;
    gap = u->k[i].e;
    if (gap >= w->end) break;
  }
}

/* Length of the intersection of two sorted disjoint lists. */
static uint64_t intersect(const iv *a, size_t na, const iv *b, size_t nb) {
  uint64_t t = 0;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    uint64_t s = a[i].s > b[j].s ? a[i].s : b[j].s, e = a[i].e < b[j].e ? a[i].e : b[j].e;
    if (e > s) t += e - s;
    if (a[i].e < b[j].e) i++;
    else j++;
  }
  return t;
}

/* Busy time (all kernels), the kernel bucket (compute kernels), the
 * communication kernels and their overlap with compute kernels. */
static uint64_t window_kernels(gpu_state *g, const unions *u, gpu_window *w, scratch *x) {
  uint64_t b = w->begin, e = w->end;
  uint64_t busy = 0;
  size_t ndev = 0;
  for (size_t d = 0; d < 16 && u->dev[d]; d++, ndev++) {
    slice(g, &x->a, u->dev[d], u->ndev[d], sizeof(iv), b, e);
    busy += w->busy_ns_dev[d] = measure(x->a.p, x->a.n);
  }
  slice(g, &x->a, u->k, u->nk, sizeof *u->k, b, e);
  w->busy_ns = ndev ? busy / ndev : measure(x->a.p, x->a.n); /* per device, not one union over all */
  if (!ndev) w->busy_ns_dev[0] = w->busy_ns;
  slice(g, &x->comm, u->m, u->nm, sizeof *u->m, b, e);
  w->comm_kernel_ns = measure(x->comm.p, x->comm.n);
  if (u->kc != u->k) slice(g, &x->a, u->kc, u->nkc, u->kcsz, b, e);
  w->comm_overlap_ns = intersect(x->a.p, x->a.n, x->comm.p, x->comm.n);
  return w->bd[GPU_BD_KERNEL] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
}

/* The intervals of `v` (sorted by start, longest `maxlen`) on thread
 * `tid` (every thread when tid is 0; records of an unknown thread count for
 * every thread) inside [b, e), clipped and merged. */
static void thread_slice(gpu_state *g, vec *out, const tiv *v, size_t n, uint64_t maxlen, uint32_t tid, uint64_t b,
                         uint64_t e) {
  out->n = 0;
  uint64_t from = b > maxlen ? b - maxlen : 0;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].s < from) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i < n && v[i].s < e; i++) {
    if ((tid && v[i].tid && v[i].tid != tid) || v[i].e <= b) continue;
    iv *o = prof__sec_gpu_vec_push(g, out, sizeof *o);
    if (o) *o = (iv){v[i].s > b ? v[i].s : b, v[i].e < e ? v[i].e : e};
  }
  out->n = prof__sec_gpu_merge_iv(out->p, out->n);
}

static void window_breakdown(gpu_state *g, const unions *u, const cpu_thread *t, gpu_window *w, scratch *x) {
  x->cover.n = 0;
  uint64_t b = w->begin, e = w->end, sum = window_kernels(g, u, w, x);
  slice(g, &x->a, u->c, u->nc, sizeof *u->c, b, e);
  w->memcpy_ns = measure(x->a.p, x->a.n);
  sum += w->bd[GPU_BD_MEMCPY] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  slice(g, &x->a, u->s, u->ns, sizeof *u->s, b, e);
  w->memset_ns = measure(x->a.p, x->a.n);
  sum += w->bd[GPU_BD_MEMSET] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  w->bd[GPU_BD_COMM] = cover_add(g, &x->cover, &x->tmp, x->comm.p, x->comm.n);
  cpu_slice(g, &x->a, t, GPU_BD_COMM, b, e);
  sum += w->bd[GPU_BD_COMM] += cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  thread_slice(g, &x->a, u->r, u->nr, u->r_max, t ? t->tid : 0, b, e); /* the step thread's calls only */
  sum += w->bd[GPU_BD_RUNTIME] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  cpu_slice(g, &x->a, t, GPU_BD_DATA, b, e);
  sum += w->bd[GPU_BD_DATA] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  cpu_slice(g, &x->a, t, GPU_BD_COMPUTE, b, e);
  sum += w->bd[GPU_BD_COMPUTE] = cover_add(g, &x->cover, &x->tmp, x->a.p, x->a.n);
  w->bd[GPU_BD_OTHER] = (e - b) - sum;
}

void prof__sec_gpu_measure_windows(gpu_state *g, prof__an *an, const unions *u) {
  scratch x = {{0}, {0}, {0}, {0}};
  for (size_t i = 0; i < g->sum.nwindows; i++) {
    gpu_window *w = &g->sum.windows[i];
    const cpu_thread *t = NULL;
    size_t ti = g->sum.whole_trace ? SIZE_MAX : prof__an_thread_index(an, an->steps[i].tid);
    if (ti < g->nth && g->th[ti].seen) t = &g->th[ti];
    window_breakdown(g, u, t, w, &x);
    idle_split(u, w);
    /* The time the step's thread was blocked: a union, so it never exceeds the step. */
    thread_slice(g, &x.a, u->sync, u->nsync, u->sync_max, g->sum.whole_trace ? 0 : an->steps[i].tid, w->begin, w->end);
    w->sync_ns = measure(x.a.p, x.a.n);
    gpu_window *tot = &g->sum.total;
    tot->busy_ns += w->busy_ns, tot->memcpy_ns += w->memcpy_ns, tot->memset_ns += w->memset_ns;
    for (int d = 0; d < 16; d++) tot->busy_ns_dev[d] += w->busy_ns_dev[d];
    tot->idle_host_ns += w->idle_host_ns, tot->idle_other_ns += w->idle_other_ns;
    tot->idle_unattributed_ns += w->idle_unattributed_ns;
    tot->sync_ns += w->sync_ns;
    tot->comm_kernel_ns += w->comm_kernel_ns, tot->comm_overlap_ns += w->comm_overlap_ns;
    tot->end += w->end - w->begin; /* total.begin = 0: end holds the summed wall time */
    for (int b = 0; b < GPU_BD_COUNT; b++) tot->bd[b] += w->bd[b];
  }
  free(x.a.p);
  free(x.comm.p);
  free(x.cover.p);
  free(x.tmp.p);
}

/* Kernels starting in [b, e) of a list sorted by start. */
uint64_t prof__sec_gpu_count_starts(const kiv *k, size_t n, uint64_t b, uint64_t e) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (k[mid].s < b) lo = mid + 1;
    else hi = mid;
  }
  uint64_t c = 0;
  for (size_t i = lo; i < n && k[i].s < e; i++) c++;
  return c;
}
