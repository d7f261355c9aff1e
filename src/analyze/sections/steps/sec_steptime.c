/* sec_steptime.c — step-time patterns: the findings step_time_drift,
 * periodic_slow_steps and slow_step_outliers, each naming the range that
 * causes it.
 *
 * One pass keeps, per step, the time of each range name that ran inside it
 * on the step's thread (the outermost instance of a name, clipped to the
 * step). Memory grows with steps x distinct range names per step, never with
 * the number of events. The finish hook reads the step table of the core
 * model and compares the steps. Thresholds are the THR_* values below;
 * docs/report-schema.md states them: keep the two in step. The section
 * writes no report part of its own: its findings are the output.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/util/array.h"
#include "analyze/util/hashmap.h"
#include "trace/hugepage.h"
#include "trace/ev_sample.h"
#include "trace/event.h"

#define THR_MIN_STEPS 20        /* patterns need >= 20 steady steps */
#define THR_SLOW 1.5            /* a slow step: >= 1.5x the median step */
#define THR_PERIOD_SHARE 0.8    /* periodic: >= 80% of the gaps between slow steps equal */
#define THR_PERIOD_MIN_SLOW 3   /* ... and >= 3 slow steps */
#define THR_OUTLIER 2.0         /* outlier: >= 2x the median step */
#define THR_OUTLIER_SHARE 0.05  /* ... and fewer than 5% of the steps */
#define THR_DRIFT_R2 0.5        /* drift: the straight line explains >= 50% of the variance */
#define THR_DRIFT_RISE 0.25     /* ... and the fitted rise over the run is >= 25% of the median */
#define THR_DRIFT_HIGH 1.0      /* ... medium severity from a rise of 100% */
#define MAX_LISTED 10

typedef struct cell {
  uint32_t name;
  uint8_t cat;
  uint64_t ns;
} cell;

typedef struct srec {
  uint32_t tid;
  uint64_t number, begin;
  cell *c;              /* the open step: its thread's scratch; a closed one: in the pool */
  uint32_t n;
} srec;

typedef struct sthread {
  int used;
  long open;            /* index into recs of the open step, or -1 */
  prof__map32 cells;    /* name -> cell of the open step, once it has many */
  cell *scr;            /* the open step's cells, grown as needed, kept from step to step */
  size_t scap;
} sthread;

/* Closed steps' cells, packed one step after the other in blocks that never
 * move: one allocation per block instead of one per step, and blocks large
 * enough for huge pages (a page fault per 4 KiB was a good part of a short
 * trace's analysis). */
#define POOL_BLOCK ((size_t)4 << 20)

typedef struct cpool {
  cell **blk;
  size_t nblk, blkcap;
  size_t used, cap;     /* cells used and held in the newest block */
} cpool;

typedef struct steptime_st {
  srec *recs;
  size_t nrecs, rcap;
  sthread *th;          /* by thread index (prof__an_thread_index) */
  size_t thcap;
  cpool pool;
} steptime_st;

/* The event's thread, by the index the model gave it (the context's). */
static sthread *thread_of(steptime_st *st, size_t ti) {
  if (ti == SIZE_MAX || prof__arr_grow((void **)&st->th, &st->thcap, ti + 1, sizeof *st->th)) return NULL;
  sthread *t = &st->th[ti];
  if (!t->used) {
    t->used = 1;
    t->open = -1;
  }
  return t;
}

/* The cells of the open step: a scan while there are few, then the thread's
 * map from name to cell (a step with thousands of names would otherwise
 * take names x names). */
#define CELL_SCAN 16

static cell *find_cell(sthread *t, srec *r, uint32_t name) {
  if (r->n <= CELL_SCAN) {
    for (uint32_t i = 0; i < r->n; i++)
      if (r->c[i].name == name) return &r->c[i];
    return NULL;
  }
  if (!t->cells.count)
    for (uint32_t i = 0; i < r->n; i++)
      if (prof__map32_put(&t->cells, r->c[i].name, i)) return NULL;
  uint32_t i = prof__map32_get(&t->cells, name);
  return i == UINT32_MAX ? NULL : &r->c[i];
}

static void add_cell(sthread *t, srec *r, uint32_t name, uint8_t cat, uint64_t ns) {
  cell *c = find_cell(t, r, name);
  if (c) {
    c->ns += ns;
    return;
  }
  if (prof__arr_grow((void **)&t->scr, &t->scap, (size_t)r->n + 1, sizeof *t->scr)) return;
  r->c = t->scr;
  if (t->cells.count && prof__map32_put(&t->cells, name, r->n)) return;
  r->c[r->n++] = (cell){name, cat, ns};
}

/* Room for n cells in the pool (n > 0), or NULL without memory. */
static cell *pool_take(cpool *p, size_t n) {
  if (p->used + n > p->cap) {
    size_t cap = POOL_BLOCK / sizeof(cell);
    if (cap < n) cap = n;
    if (prof__arr_grow((void **)&p->blk, &p->blkcap, p->nblk + 1, sizeof *p->blk)) return NULL;
    cell *b = prof__hugepage_alloc(cap * sizeof *b);
    if (!b) return NULL;
    p->blk[p->nblk++] = b;
    p->used = 0, p->cap = cap;
  }
  cell *c = p->blk[p->nblk - 1] + p->used;
  p->used += n;
  return c;
}

/* The thread's open step is over: its cells move from the thread's scratch
 * into the pool (or are dropped without memory: the step then reads as one
 * without ranges). */
static void close_open(steptime_st *st, sthread *t) {
  if (t->open < 0) return;
  srec *r = &st->recs[t->open];
  cell *c = r->n ? pool_take(&st->pool, r->n) : NULL;
  if (c) memcpy(c, r->c, r->n * sizeof *c);
  else r->n = 0;
  r->c = c;
}

/* The thread's open step changes: its cell map starts again (its table
 * kept when small: freeing and allocating it at every step costs more than
 * the rest of the section). */
static void set_open(steptime_st *st, sthread *t, long open) {
  close_open(st, t);
  prof__map32_clear(&t->cells, 1024);
  t->open = open;
}

/* A range of the step's thread counts for the open step from its begin
 * (or the step's) to `end`; only its name's outermost instance counts
 * (the engine's context says which), so recursion is not counted twice. */
static void count_range(sthread *t, steptime_st *st, const prof__ctx_frame *f, uint64_t end) {
  if (t->open < 0 || !f->outer) return;
  srec *r = &st->recs[t->open];
  uint64_t b = f->begin_ns > r->begin ? f->begin_ns : r->begin;
  if (end > b) add_cell(t, r, f->name, (uint8_t)f->cat, end - b);
}

static void steptime_record(prof__an *an, void *vst, const prof__rec *rec) {
  steptime_st *st = vst;
  if (rec->kind != PROF_REC_EVENT) return;
  const prof__event *ev = &rec->ev;
  const prof__ctx *cx = prof__an_ctx(an);
  if (ev->type == PROF_EV_RANGE_END && !cx->has_closed) return; /* most ends: nothing to count */
  sthread *t = thread_of(st, cx->thread);
  if (!t) return;
  switch (ev->type) {
  case PROF_EV_STEP_BEGIN: {
    if (prof__arr_grow((void **)&st->recs, &st->rcap, st->nrecs + 1, sizeof *st->recs)) return;
    srec *r = &st->recs[st->nrecs];
    memset(r, 0, sizeof *r);
    r->tid = rec->tid;
    r->number = ev->a;
    r->begin = ev->ts;
    r->c = t->scr;
    set_open(st, t, (long)st->nrecs++);
    break;
  }
  case PROF_EV_STEP_END: {
    /* ranges still open at the step's end count up to it */
    prof__ctx_frame f;
    for (uint32_t i = 0; t->open >= 0 && i < cx->depth && prof__an_ctx_frame(an, i, &f) == 0; i++)
      count_range(t, st, &f, ev->ts);
    set_open(st, t, -1);
    break;
  }
  case PROF_EV_RANGE_END:
    if (cx->has_closed) count_range(t, st, &cx->closed, ev->ts);
    break;
  default: break;
  }
}

/* ---- analysis ------------------------------------------------------------- */

typedef struct sstep {
  uint64_t number, dur;
  const srec *r; /* NULL when the step has no range record */
} sstep;

static int cmp_rec(const void *a, const void *b) {
  const srec *x = a, *y = b;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return x->number < y->number ? -1 : x->number > y->number;
}

static const srec *rec_of(const steptime_st *st, uint32_t tid, uint64_t number) {
  srec key = {.tid = tid, .number = number};
  return bsearch(&key, st->recs, st->nrecs, sizeof key, cmp_rec);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Every distinct range name of the steps, with its category. */
typedef struct rname {
  uint32_t name;
  uint8_t cat;
  double score, total;
} rname;

static int cmp_rname(const void *a, const void *b) {
  const rname *x = a, *y = b;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* Every distinct range name of the steps, sorted by name id, each with the
 * category of its first cell in step order. Only the distinct names are
 * sorted (a set finds them), not every cell of every step. */
static size_t names_of(const sstep *s, size_t n, rname **out) {
  size_t all = 0;
  for (size_t i = 0; i < n; i++) all += s[i].r ? s[i].r->n : 0;
  rname *v = malloc((all + 1) * sizeof *v);
  *out = v;
  if (!v) return 0;
  prof__u64map seen = {0};
  size_t u = 0;
  int oom = 0;
  for (size_t i = 0; i < n && !oom; i++)
    for (uint32_t c = 0; s[i].r && c < s[i].r->n && !oom; c++) {
      uint32_t name = s[i].r->c[c].name;
      if (prof__u64map_get(&seen, name)) continue;
      if (prof__u64map_add(&seen, name, 1)) oom = 1; /* no memory: sort every cell instead */
      else v[u++] = (rname){name, s[i].r->c[c].cat, 0, 0};
    }
  if (oom) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      for (uint32_t c = 0; s[i].r && c < s[i].r->n; c++) v[k++] = (rname){s[i].r->c[c].name, s[i].r->c[c].cat, 0, 0};
    qsort(v, k, sizeof *v, cmp_rname);
    u = 0;
    for (size_t i = 0; i < k; i++)
      if (!u || v[u - 1].name != v[i].name) v[u++] = v[i];
  } else {
    qsort(v, u, sizeof *v, cmp_rname); /* the names are distinct: one order */
  }
  prof__u64map_free(&seen);
  return u;
}

static rname *name_at(rname *v, size_t nv, uint32_t name) {
  rname key = {.name = name};
  return bsearch(&key, v, nv, sizeof key, cmp_rname);
}

/* The name with the largest score; among those within 10% of it, the one
 * with the least total time (the innermost range that carries the effect). */
static const rname *best_name(const rname *v, size_t n) {
  const rname *top = NULL;
  for (size_t i = 0; i < n; i++)
    if (v[i].score > 0 && (!top || v[i].score > top->score)) top = &v[i];
  if (!top) return NULL;
  const rname *pick = top;
  for (size_t i = 0; i < n; i++)
    if (v[i].score >= 0.9 * top->score && v[i].total < pick->total) pick = &v[i];
  return pick;
}

/* Least-squares line of y over x; returns the slope and sets r2. */
static double fit(const double *x, const double *y, size_t n, double *r2) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= (double)n, my /= (double)n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  *r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : 0;
  return sxx > 0 ? sxy / sxx : 0;
}

static const char *phase_text(prof__an *an, const rname *p, char *buf, size_t n) {
  if (!p) snprintf(buf, n, "no annotated range");
  else snprintf(buf, n, "range '%s' (%s)", prof__an_str(an, p->name), prof__an_cat_name(p->cat));
  return buf;
}

/* Slope per step of every range name over the steps not skipped: one pass
 * of sums (a step without the range counts as 0 for it). */
static const rname *drift_phase(const sstep *s, size_t n, const int *skip, rname *v, size_t nv) {
  double *sy = calloc(nv + 1, sizeof *sy), *sxy = calloc(nv + 1, sizeof *sxy), m = 0, sx = 0, sxx = 0;
  if (!sy || !sxy) {
    free(sy);
    free(sxy);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (skip[i]) continue;
    double x = (double)s[i].number;
    m++, sx += x, sxx += x * x;
    for (uint32_t c = 0; s[i].r && c < s[i].r->n; c++) {
      rname *p = name_at(v, nv, s[i].r->c[c].name);
      if (p) sy[p - v] += (double)s[i].r->c[c].ns, sxy[p - v] += x * (double)s[i].r->c[c].ns;
    }
  }
  double den = m * sxx - sx * sx;
  for (size_t k = 0; k < nv; k++) {
    v[k].score = m > 2 && den > 0 ? (m * sxy[k] - sx * sy[k]) / den : 0;
    v[k].total = sy[k];
  }
  free(sy);
  free(sxy);
  return best_name(v, nv);
}

static void find_drift(prof__an *an, const sstep *s, size_t n, uint64_t median, rname *v, size_t nv) {
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  int *spike = calloc(n, sizeof *spike);
  size_t m = 0;
  if (!x || !y || !spike) goto out;
  /* Fit all steps, leave out the spikes far above that line, fit again. */
  for (size_t i = 0; i < n; i++) x[i] = (double)s[i].number, y[i] = (double)s[i].dur;
  double r2, slope = fit(x, y, n, &r2), mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= (double)n, my /= (double)n;
  for (size_t i = 0; i < n; i++) {
    spike[i] = y[i] - (my + slope * (x[i] - mx)) > (THR_SLOW - 1) * (double)median;
    if (!spike[i]) x[m] = x[i], y[m++] = y[i];
  }
  if (m < THR_MIN_STEPS) goto out;
  slope = fit(x, y, m, &r2);
  double span = x[m - 1] - x[0], rise = slope * span;
  if (r2 < THR_DRIFT_R2 || rise < THR_DRIFT_RISE * (double)median) goto out;
  const rname *ph = drift_phase(s, n, spike, v, nv);
  char a[32], b[32], c[32], p[200], title[320], measured[640], rec[640];
  double per100 = slope * 100;
  snprintf(title, sizeof title, "Steps get steadily slower: +%s per 100 steps, mostly in %s",
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(per100)), phase_text(an, ph, p, sizeof p));
  snprintf(measured, sizeof measured,
           "a straight line through %zu step times rises %s per 100 steps (R^2 %.2f), %s over steps %llu-%llu, "
           "%.0f%% of the median step %s; %s grows by %s per 100 steps",
           m, a, r2, prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(rise)), (unsigned long long)prof__an_d2ns(x[0]),
           (unsigned long long)prof__an_d2ns(x[m - 1]), 100 * rise / (double)median, prof__an_fmt_ns(c, sizeof c, median), p,
           prof__an_fmt_ns(c, sizeof c, prof__an_d2ns(ph ? ph->score * 100 : 0)));
  snprintf(rec, sizeof rec,
           "Something accumulates from step to step in %s: look for growing Python lists or histories "
           "(keeping tensors that hold the graph, e.g. summing a loss without .item()), caches or queues that "
           "are never trimmed, a data set or log that grows, or memory fragmentation. Compare the memory "
           "section for a matching growth.",
           ph ? prof__an_str(an, ph->name) : "the step");
  prof__an_finding(an, "step_time_drift", rise >= THR_DRIFT_HIGH * (double)median ? "medium" : "low", per100,
                   title, measured, rec);
  /* back at the fitted time of the first step: the mean of the fitted rise */
  double mean_x = 0;
  for (size_t i = 0; i < m; i++) mean_x += x[i];
  mean_x /= (double)m;
  prof__an_finding_saving(an, slope * (mean_x - x[0]), prof__an_confidence(m, 0),
                          "every step back at the fitted time of step %llu: the fitted rise averaged over %zu steps "
                          "(slope x (mean step number - first))",
                          (unsigned long long)prof__an_d2ns(x[0]), m);
  prof__an_finding_knum(an, "slope_ns_per_100_steps", per100);
  prof__an_finding_knum(an, "r2", r2);
  prof__an_finding_knum(an, "first_step", x[0]);
  if (ph) prof__an_finding_kstr(an, "phase", prof__an_str(an, ph->name));
  if (ph) prof__an_finding_kstr(an, "category", prof__an_cat_name(ph->cat));
out:
  free(x);
  free(y);
  free(spike);
}

/* The range whose mean time in the slow steps most exceeds its mean in
 * the other steps: one pass of sums. */
static const rname *slow_phase(const sstep *s, size_t n, const int *slow, rname *v, size_t nv, double *extra) {
  double *in = calloc(nv + 1, sizeof *in), *out = calloc(nv + 1, sizeof *out);
  size_t ni = 0, no = 0;
  if (!in || !out) {
    free(in);
    free(out);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (slow[i]) ni++;
    else no++;
    for (uint32_t c = 0; s[i].r && c < s[i].r->n; c++) {
      rname *p = name_at(v, nv, s[i].r->c[c].name);
      if (p) (slow[i] ? in : out)[p - v] += (double)s[i].r->c[c].ns;
    }
  }
  for (size_t k = 0; k < nv; k++) {
    v[k].score = (ni ? in[k] / (double)ni : 0) - (no ? out[k] / (double)no : 0);
    v[k].total = in[k] + out[k];
  }
  free(in);
  free(out);
  const rname *p = best_name(v, nv);
  if (extra) *extra = p ? p->score : 0;
  return p;
}

/* For one outlier step: the range of that step whose time most exceeds
 * its mean over the other steps (mean_out). */
static const rname *outlier_phase(const sstep *st, rname *v, size_t nv, const double *mean_out) {
  const rname *best = NULL;
  double bs = 0;
  for (uint32_t c = 0; st->r && c < st->r->n; c++) {
    rname *p = name_at(v, nv, st->r->c[c].name);
    double sc = p ? (double)st->r->c[c].ns - mean_out[p - v] : 0;
    if (p && sc > bs) bs = sc, best = p;
  }
  uint64_t least = UINT64_MAX; /* among ranges within 10% of it, the innermost (least time) */
  for (uint32_t c = 0; best && st->r && c < st->r->n; c++) {
    rname *p = name_at(v, nv, st->r->c[c].name);
    if (p && (double)st->r->c[c].ns - mean_out[p - v] >= 0.9 * bs && st->r->c[c].ns < least)
      least = st->r->c[c].ns, best = p;
  }
  return best;
}

/* Period of the slow steps, robust to stray slow steps (a busy machine):
 * the period P and phase r such that the steps numbered r, r+P, r+2P, ...
 * from the first to the last slow one on that lattice are slow for at
 * least THR_PERIOD_SHARE of them, at least THR_PERIOD_MIN_SLOW of them,
 * and the lattice holds at least half of all slow steps. Candidates for P
 * are the differences between a slow step and the next three (a stray slow
 * step splits a gap in two); the lattice with the most slow steps wins.
 * Without stray steps this is the most common gap between slow steps. */
#define PERIOD_CANDIDATES 8

typedef struct lat {
  uint64_t r, num;
} lat;

static int cmp_lat(const void *a, const void *b) {
  const lat *x = a, *y = b;
  if (x->r != y->r) return x->r < y->r ? -1 : 1;
  return x->num < y->num ? -1 : x->num > y->num;
}

static uint64_t period_of(const sstep *s, size_t n, const int *slow, size_t nslow, uint64_t *phase) {
  if (nslow < THR_PERIOD_MIN_SLOW) return 0;
  uint64_t *num = malloc(nslow * sizeof *num), *gap = malloc(3 * nslow * sizeof *gap);
  size_t m = 0, ng = 0;
  if (!num || !gap) goto fail;
  for (size_t i = 0; i < n; i++)
    if (slow[i]) num[m++] = s[i].number;
  for (size_t i = 0; i < m; i++)
    for (size_t k = i + 1; k < m && k <= i + 3; k++)
      if (num[k] - num[i] >= 2) gap[ng++] = num[k] - num[i];
  qsort(gap, ng, sizeof *gap, cmp_u64);
  uint64_t cand[PERIOD_CANDIDATES];
  size_t cn[PERIOD_CANDIDATES], nc = 0; /* the most common differences */
  for (size_t i = 0; i < ng;) {
    size_t j = i;
    while (j < ng && gap[j] == gap[i]) j++;
    size_t at = nc < PERIOD_CANDIDATES ? nc++ : PERIOD_CANDIDATES;
    if (at == PERIOD_CANDIDATES) {
      size_t least = 0;
      for (size_t k = 1; k < nc; k++)
        if (cn[k] < cn[least]) least = k;
      if (cn[least] < j - i) at = least;
    }
    if (at < PERIOD_CANDIDATES) cand[at] = gap[i], cn[at] = j - i;
    i = j;
  }
  uint64_t best = 0, best_r = 0;
  size_t best_c = 0;
  lat *l = malloc(m * sizeof *l);
  if (!l) goto fail;
  for (size_t k = 0; k < nc; k++) { /* each residue class of each candidate, by sorting */
    uint64_t p = cand[k];
    for (size_t i = 0; i < m; i++) l[i] = (lat){num[i] % p, num[i]};
    qsort(l, m, sizeof *l, cmp_lat);
    for (size_t i = 0; i < m;) {
      size_t j = i;
      while (j < m && l[j].r == l[i].r) j++;
      size_t c = j - i;
      double points = (double)((l[j - 1].num - l[i].num) / p + 1);
      if (c >= THR_PERIOD_MIN_SLOW && (double)c >= THR_PERIOD_SHARE * points && 2 * c >= m &&
          (c > best_c || (c == best_c && p < best)))
        best = p, best_r = l[i].r, best_c = c;
      i = j;
    }
  }
  free(l);
  free(num);
  free(gap);
  *phase = best_r;
  return best;
fail:
  free(num);
  free(gap);
  return 0;
}

/* Forked DataLoader workers of the run: META cpu.workers (src/cpu/workers.c),
 * or the threads it names "forked worker"; 0 when none. */
static int workers_of(const prof__an *an) {
  const char *w = prof__an_meta(an, PROF_META_WORKERS);
  int n = w ? atoi(w) : 0, threads = 0;
  for (size_t i = 0; i < an->nthreads; i++)
    threads += an->threads[i].name && strcmp(an->threads[i].name, PROF_WORKER_THREAD) == 0;
  return n > threads ? n : threads;
}

/* A period that divides the number of workers: the workers hand out the
 * batches in turn (a DataLoader's round robin), so a slower worker makes
 * every period-th step wait. Title and advice about the workers. */
static void periodic_workers_text(prof__an *an, const rname *ph, uint64_t period, int workers, const char *extra,
                                  char *title, size_t tn, char *rec, size_t rn) {
  snprintf(title, tn, "Every %llu steps a step is slow: +%s, as the %d DataLoader workers take turns",
           (unsigned long long)period, extra, workers);
  snprintf(rec, rn,
           "The %d forked workers hand out batches in turn, and the period (%llu steps) matches them: one worker "
           "(or one share of the samples) is slower, or the workers restart. Keep them alive across epochs "
           "(persistent_workers=True), let each prefetch more (prefetch_factor), balance the cost of __getitem__ "
           "across samples (sort or shuffle expensive items, cache decoded data), and see the workers' hot lines "
           "in the functions section%s%s.",
           workers, (unsigned long long)period, ph ? "; the wait shows in " : "", ph ? prof__an_str(an, ph->name) : "");
}

static int find_periodic(prof__an *an, const sstep *s, size_t n, int *slow, size_t nslow, uint64_t median,
                         rname *v, size_t nv) {
  uint64_t phase = 0, period = period_of(s, n, slow, nslow, &phase);
  if (!period) return 0;
  nslow = 0; /* from here on, the slow steps of the lattice only */
  for (size_t i = 0; i < n; i++) nslow += slow[i] = slow[i] && s[i].number % period == phase;
  double sum = 0, first = -1;
  for (size_t i = 0; i < n; i++)
    if (slow[i]) {
      sum += (double)s[i].dur;
      if (first < 0) first = (double)s[i].number;
    }
  double extra = sum / (double)nslow - (double)median, range_extra;
  const rname *ph = slow_phase(s, n, slow, v, nv, &range_extra);
  char a[32], b[32], c[32], p[200], title[320], measured[640], rec[640];
  phase_text(an, ph, p, sizeof p);
  snprintf(title, sizeof title, "Every %llu steps a step is slow: +%s, from %s", (unsigned long long)period,
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(extra)), p);
  snprintf(measured, sizeof measured,
           "%zu of %zu steps took >= %.1fx the median %s, every %llu steps from step %.0f; they take %s more "
           "on average, of which %s adds %s",
           nslow, n, THR_SLOW, prof__an_fmt_ns(b, sizeof b, median), (unsigned long long)period, first, a, p,
           prof__an_fmt_ns(c, sizeof c, prof__an_d2ns(range_extra)));
  snprintf(rec, sizeof rec,
           "Periodic work on the training thread (%s) stalls every %llu-th step: checkpoint, evaluate or log "
           "asynchronously (a background thread or process, non-blocking saves), less often, or spread it "
           "across steps; for garbage collection, collect at a quiet moment yourself (gc.freeze()/gc.collect() "
           "between epochs).",
           ph ? prof__an_str(an, ph->name) : "not annotated: wrap it in a range to name it",
           (unsigned long long)period);
  int workers = workers_of(an), round_robin = workers > 0 && (uint64_t)workers % period == 0;
  if (round_robin) periodic_workers_text(an, ph, period, workers, a, title, sizeof title, rec, sizeof rec);
  prof__an_finding(an, "periodic_slow_steps", extra >= (double)median ? "medium" : "low", (double)period, title,
                   measured, rec);
  /* the slow steps' extra time over the median, spread over all steps */
  prof__an_finding_saving(an, (sum - (double)nslow * (double)median) / (double)n, prof__an_confidence(n, nslow),
                          "the %zu slow steps' extra time over the median (%s each) spread over all %zu steps "
                          "(one in %llu)",
                          nslow, a, n, (unsigned long long)period);
  prof__an_finding_knum(an, "period", (double)period);
  prof__an_finding_knum(an, "extra_ns", extra);
  prof__an_finding_knum(an, "first_step", first);
  if (ph) prof__an_finding_kstr(an, "phase", prof__an_str(an, ph->name));
  if (round_robin) prof__an_finding_kstr(an, "cause", "worker_round_robin");
  if (round_robin) prof__an_finding_knum(an, "workers", workers);
  return 1;
}

static void find_outliers(prof__an *an, const sstep *s, size_t n, uint64_t median, rname *v, size_t nv) {
  int *out = calloc(n, sizeof *out);
  double *mean_out = calloc(nv + 1, sizeof *mean_out);
  size_t nout = 0;
  if (!out || !mean_out) goto done;
  for (size_t i = 0; i < n; i++) nout += out[i] = (double)s[i].dur >= THR_OUTLIER * (double)median;
  if (!nout || (double)nout >= THR_OUTLIER_SHARE * (double)n) goto done;
  for (size_t i = 0; i < n; i++) /* mean time of each range over the other steps */
    for (uint32_t c = 0; !out[i] && s[i].r && c < s[i].r->n; c++) {
      rname *p = name_at(v, nv, s[i].r->c[c].name);
      if (p) mean_out[p - v] += (double)s[i].r->c[c].ns / (double)(n - nout);
    }
  char list[600], a[32], b[32], p[200], title[256], measured[1024];
  size_t len = 0, listed = 0;
  uint64_t worst = 0, first = 0;
  list[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if ((double)s[i].dur < THR_OUTLIER * (double)median) continue;
    if (!listed) first = s[i].number;
    if (s[i].dur > worst) worst = s[i].dur;
    if (listed++ >= MAX_LISTED) continue;
    const rname *ph = outlier_phase(&s[i], v, nv, mean_out);
    int w = snprintf(list + len, sizeof list - len, "%sstep %llu %s (%s)", listed > 1 ? ", " : "",
                     (unsigned long long)s[i].number, prof__an_fmt_ns(a, sizeof a, s[i].dur),
                     ph ? prof__an_str(an, ph->name) : "no annotated range");
    if (w > 0 && (size_t)w < sizeof list - len) len += (size_t)w;
  }
  snprintf(title, sizeof title, "%zu rare slow step%s (>= %.0fx the median)", nout, nout > 1 ? "s" : "",
           THR_OUTLIER);
  snprintf(measured, sizeof measured, "%zu of %zu steps took >= %.0fx the median %s (slowest %s): %s%s", nout, n,
           THR_OUTLIER, prof__an_fmt_ns(b, sizeof b, median), prof__an_fmt_ns(p, sizeof p, worst), list,
           nout > MAX_LISTED ? ", ..." : "");
  prof__an_finding(an, "slow_step_outliers", "low", (double)nout, title, measured,
                   "Look at what the named range did in those steps: a one-off stall (disk or network I/O, "
                   "a checkpoint, a recompilation, a garbage collection, another process taking the CPU). "
                   "Break at one of them (MLPROF_BREAK_AT=step:N) to inspect it.");
  double excess = 0; /* their excess over the median, spread over all steps */
  for (size_t i = 0; i < n; i++)
    if (out[i]) excess += (double)(s[i].dur - median);
  prof__an_finding_saving(an, excess / (double)n, prof__an_confidence(n, nout),
                          "the %zu outliers' excess over the median (%s in all) spread over all %zu steps", nout,
                          prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(excess)), n);
  prof__an_finding_knum(an, "first_step", (double)first);
  prof__an_finding_knum(an, "count", (double)nout);
done:
  free(out);
  free(mean_out);
}

static int step_thread_lost(const prof__an *an) {
  for (size_t i = 0; i < an->nthreads; i++)
    if (an->threads[i].lost && an->threads[i].steps) return 1;
  return 0;
}

static void steptime_finish(prof__an *an, void *vst) {
  steptime_st *st = vst;
  if (an->nsteps < THR_MIN_STEPS || step_thread_lost(an)) return; /* lost ranges would mislead */
  qsort(st->recs, st->nrecs, sizeof *st->recs, cmp_rec);
  size_t skip = an->steps[0].warmup_outlier ? 1 : 0, n = an->nsteps - skip;
  sstep *s = calloc(n, sizeof *s);
  uint64_t *d = calloc(n, sizeof *d);
  int *slow = calloc(n, sizeof *slow);
  rname *v = NULL;
  if (!s || !d || !slow) goto out;
  for (size_t i = 0; i < n; i++) {
    const prof__step *p = &an->steps[i + skip];
    s[i] = (sstep){p->number, p->end_ns - p->begin_ns, rec_of(st, p->tid, p->number)};
    d[i] = s[i].dur;
  }
  qsort(d, n, sizeof *d, cmp_u64);
  uint64_t median = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
  if (!median) goto out;
  size_t nslow = 0;
  for (size_t i = 0; i < n; i++) nslow += slow[i] = (double)s[i].dur >= THR_SLOW * (double)median;
  size_t nv = names_of(s, n, &v);
  int periodic = nslow * 2 < n && find_periodic(an, s, n, slow, nslow, median, v, nv);
  if (!periodic) find_outliers(an, s, n, median, v, nv);
  find_drift(an, s, n, median, v, nv);
out:
  free(s);
  free(d);
  free(slow);
  free(v);
}

static void steptime_destroy(prof__an *an, void *vst) {
  (void)an;
  steptime_st *st = vst;
  free(st->recs);
  for (size_t i = 0; i < st->thcap; i++) {
    prof__map32_free(&st->th[i].cells);
    free(st->th[i].scr);
  }
  free(st->th);
  for (size_t i = 0; i < st->pool.nblk; i++) free(st->pool.blk[i]);
  free(st->pool.blk);
}

const prof__section prof__sec_steptime = {
    .name = "steptime",
    .state_size = sizeof(steptime_st),
    .record = steptime_record,
    .finish = steptime_finish,
    .destroy = steptime_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_STEP_BEGIN) | PROF_EVMASK(PROF_EV_STEP_END) | PROF_EVMASK(PROF_EV_RANGE_END),
};
