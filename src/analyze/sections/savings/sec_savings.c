/* sec_savings.c — where the step thread waits, and for whom: the
 * `step_wait` finding and the cross-thread attribution of the step thread's
 * waits, with their predicted savings (docs/report-schema.md, "Predicted
 * savings").
 *
 * The step thread waits where a range's time inside steps is mostly
 * off-CPU: its wall time minus the CPU time its CPU samples stand for. What
 * it waits for is the other thread whose innermost range was open (or whose
 * CPU samples fell) while the step thread sat in that range: a prefetch or
 * loader thread, a writer holding a lock, a copy thread.
 *
 * One pass sums, per range name of every thread that runs steps, its time
 * inside steps (the innermost range: from its begin, or the end of a child,
 * to its end or the begin of a child; time outside every range counts as a
 * name of its own), the steps it ran in and the CPU samples that fell in it
 * inside steps: exact, memory by names. For naming what the step thread
 * waits for, it keeps every thread's innermost-range segments and the CPU
 * samples of the other threads with their time, capped (SEG_MAX, SMP_MAX):
 * a longer run is attributed from its beginning, and the finding says so.
 * The finish hook runs after every other section (sections.def lists it
 * last) so it can refine input_bound and skip what periodic_slow_steps
 * already names.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/util/hashmap.h"
#include "trace/hugepage.h"
#include "trace/ev_sample.h"
#include "trace/event.h"

#define SEG_MAX (1u << 16)   /* segments kept for attribution (32 bytes each) */
#define SMP_MAX (1u << 15)   /* other threads' CPU samples kept (24 bytes each) */
#define PEND_MAX (1u << 14)  /* step-thread samples read before their step (24 bytes each) */
#define MAX_DEPTH 256
#define WDENSE 4096          /* range name ids below it: a thread's sums by direct index */
#define THR_WAIT_SHARE 0.05  /* step_wait: off-CPU time >= 5% of step time ... */
#define THR_WAIT_HIGH 0.20   /* ... high from 20% */
#define THR_OFF_CPU 0.5      /* ... the range is >= 50% off-CPU ... */
#define THR_PRESENT 0.5      /* ... in >= 50% of the steps (not a spike: see steptime) */
#define THR_ATTR 0.3         /* a thread is named when it ran during >= 30% of the wait */
#define THR_INPUT_ATTR 0.5   /* input_bound: the loading overlaps on another thread >= 50% */
#define MAX_WAITS 3          /* step_wait findings at most */
#define MAX_ATTR 256         /* (thread, range) pairs tracked per attribution */
#define NONE_NAME 0u         /* outside every range (a sample's range 0 is the same) */

typedef struct seg {
  uint64_t b, e;
  uint32_t tid, name;
  uint8_t cat, in_step;
} seg;

typedef struct smp {
  uint64_t ts, w;
  uint32_t tid, range;
} smp;

typedef struct frame {
  uint32_t name;
  uint8_t cat;
  uint32_t wi; /* its wname's index once looked up (UINT32_MAX before) */
} frame;

/* Per range name of a thread that runs steps: what happened inside steps. */
typedef struct wname {
  uint32_t name;
  uint8_t cat;
  uint64_t ns, steps, last_step;
  uint64_t cpu_w, samples; /* CPU samples (weights in periods) */
} wname;

typedef struct span {
  uint64_t b, e;
} span;

typedef struct wthread {
  uint32_t tid;
  uint32_t depth, overflow;
  int in_step, stepping;
  uint64_t nstep;       /* steps begun on the thread (numbers the steps for wname.last_step) */
  uint64_t since;       /* start of the current segment; 0: none */
  frame *st;            /* open ranges, grown up to MAX_DEPTH */
  uint32_t stcap;
  wname *w;             /* stepping threads: per name */
  size_t nw, wcap;
  prof__map32 wmap;     /* name -> index into w */
  uint32_t none_wi;     /* the wname of time outside every range (UINT32_MAX: not yet) */
  uint32_t *wdense;     /* name id below WDENSE -> index into w + 1 (0: none yet) */
  span *steps;          /* stepping threads: their steps, in order */
  size_t nsteps, scap;
} wthread;

typedef struct sav_st {
  seg *seg;
  size_t nseg, segcap;
  smp *smp, *pend;
  size_t nsmp, smpcap, npend, pendcap;
  int capped;
  int seg_full;         /* no more segments are kept (SEG_MAX or no memory) */
  uint64_t cpu_samples;
  wthread **th;
  size_t nth, thcap;
  prof__map32 tids;     /* tid -> index into th */
  wthread *last;        /* the thread of the previous event */
} sav_st;

static void *grow(void *p, size_t *cap, size_t need, size_t elem, size_t max) {
  if (need <= *cap) return p;
  if (need > max) return NULL;
  size_t c = *cap ? *cap * 2 : 256;
  while (c < need) c *= 2;
  if (c > max) c = max;
  void *q = prof__hugepage_realloc(p, *cap * elem, c * elem);
  if (q) *cap = c;
  return q;
}

__attribute__((noinline)) static wthread *thread_lookup(sav_st *st, uint32_t tid) {
  uint32_t i = prof__map32_get(&st->tids, tid);
  if (i != UINT32_MAX) return st->last = st->th[i];
  wthread **a = grow(st->th, &st->thcap, st->nth + 1, sizeof *a, UINT32_MAX - 1);
  if (!a) return NULL;
  st->th = a;
  wthread *t = calloc(1, sizeof *t);
  if (!t || prof__map32_put(&st->tids, tid, (uint32_t)st->nth)) {
    free(t);
    return NULL;
  }
  t->tid = tid;
  t->none_wi = UINT32_MAX;
  return st->last = a[st->nth++] = t;
}

/* The thread of this event: most often the previous event's. */
static inline wthread *thread_of(sav_st *st, uint32_t tid) {
  return st->last && st->last->tid == tid ? st->last : thread_lookup(st, tid);
}

static int push(wthread *t, uint32_t name, uint8_t cat) {
  if (t->depth == MAX_DEPTH) return -1;
  if (t->depth == t->stcap) {
    uint32_t cap = t->stcap ? t->stcap * 2 : 8;
    frame *f = realloc(t->st, cap * sizeof *f);
    if (!f) return -1;
    t->st = f;
    t->stcap = cap;
  }
  t->st[t->depth++] = (frame){name, cat, UINT32_MAX};
  return 0;
}

static wname *wname_add(wthread *t, uint32_t name, uint8_t cat);

/* The thread's sums of a name, made when new (NULL without memory). */
static inline wname *wname_of(wthread *t, uint32_t name, uint8_t cat) {
  if (name < WDENSE && t->wdense && t->wdense[name]) return &t->w[t->wdense[name] - 1];
  return wname_add(t, name, cat);
}

__attribute__((noinline)) static wname *wname_add(wthread *t, uint32_t name, uint8_t cat) {
  uint32_t i = prof__map32_get(&t->wmap, name);
  if (i != UINT32_MAX) return &t->w[i];
  wname *w = grow(t->w, &t->wcap, t->nw + 1, sizeof *w, UINT32_MAX - 1);
  if (!w) return NULL;
  t->w = w;
  if (prof__map32_put(&t->wmap, name, (uint32_t)t->nw)) return NULL;
  if (name < WDENSE && (t->wdense || (t->wdense = calloc(WDENSE, sizeof *t->wdense))))
    t->wdense[name] = (uint32_t)t->nw + 1;
  w[t->nw] = (wname){name, cat, 0, 0, 0, 0, 0};
  return &w[t->nw++];
}

__attribute__((noinline)) static void keep_seg(sav_st *st, const seg *g) {
  seg *s = grow(st->seg, &st->segcap, st->nseg + 1, sizeof *s, SEG_MAX);
  if (!s) {
    st->capped = st->seg_full = 1;
    return;
  }
  st->seg = s;
  s[st->nseg++] = *g;
}

/* Close the thread's current segment at ts and start the next one there. */
static inline void cut(sav_st *st, wthread *t, uint64_t ts) {
  uint64_t b = t->since;
  t->since = ts;
  if (!b || ts <= b) return;
  frame *f = t->depth ? &t->st[t->depth - 1] : NULL;
  uint32_t name = f ? f->name : NONE_NAME;
  uint8_t cat = f ? f->cat : (uint8_t)PROF_CAT_OTHER;
  if (t->in_step) { /* the exact sums of a thread running steps */
    uint32_t *wi = f ? &f->wi : &t->none_wi; /* the lookup once per open range */
    wname *w = *wi != UINT32_MAX ? &t->w[*wi] : wname_of(t, name, cat);
    if (w) {
      *wi = (uint32_t)(w - t->w);
      w->ns += ts - b;
      if (w->last_step != t->nstep) w->steps++, w->last_step = t->nstep;
    }
  }
  if (st->seg_full || !(t->stepping ? t->in_step : f != NULL)) return; /* other threads: their ranges only */
  seg g = {b, ts, t->tid, name, cat, (uint8_t)t->in_step};
  keep_seg(st, &g);
}

/* Is ts inside a step of t? 1 yes, 0 no, -1 not known yet (its step may come). */
static int in_step_of(const wthread *t, uint64_t ts) {
  if (t->in_step && t->nsteps && ts >= t->steps[t->nsteps - 1].b) return 1;
  size_t lo = 0, hi = t->nsteps; /* first step ending after ts */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->steps[mid].e <= ts) lo = mid + 1;
    else hi = mid;
  }
  if (lo < t->nsteps) return ts >= t->steps[lo].b;
  return -1;
}

static void sample_in_step(wthread *t, uint32_t range, uint64_t w) {
  uint32_t i = prof__map32_get(&t->wmap, range);
  wname *n = i != UINT32_MAX ? &t->w[i] : wname_of(t, range, PROF_CAT_OTHER);
  if (n) n->cpu_w += w, n->samples++;
}

static void on_sample(sav_st *st, uint32_t tid, const prof__event *ev) {
  if (prof__ev_sample_mode(ev) != PROF_SAMPLE_CPU) return;
  st->cpu_samples++;
  wthread *t = thread_of(st, tid);
  if (!t) return;
  smp x = {ev->ts, prof__ev_sample_weight(ev), tid, prof__ev_sample_range(ev)};
  int in = t->stepping ? in_step_of(t, x.ts) : 0;
  if (in == 1) sample_in_step(t, x.range, x.w);
  if (in == 0 && t->stepping) return;
  smp **buf = in < 0 ? &st->pend : &st->smp; /* -1: decided at the end; other threads: attribution */
  size_t *n = in < 0 ? &st->npend : &st->nsmp, *cap = in < 0 ? &st->pendcap : &st->smpcap;
  smp *s = grow(*buf, cap, *n + 1, sizeof *s, in < 0 ? PEND_MAX : SMP_MAX);
  if (!s) {
    st->capped |= in >= 0;
    return;
  }
  *buf = s;
  s[(*n)++] = x;
}

static void step_edge(wthread *t, int begin, uint64_t ts) {
  if (begin) {
    span *s = grow(t->steps, &t->scap, t->nsteps + 1, sizeof *s, SIZE_MAX / sizeof *s);
    if (s) {
      t->steps = s;
      s[t->nsteps++] = (span){ts, UINT64_MAX};
    }
    t->in_step = t->stepping = 1;
    t->nstep++;
    return;
  }
  if (t->in_step && t->nsteps) t->steps[t->nsteps - 1].e = ts;
  t->in_step = 0;
}

#define SAV_EVENTS                                                                                             \
  (PROF_EVMASK(PROF_EV_STEP_BEGIN) | PROF_EVMASK(PROF_EV_STEP_END) | PROF_EVMASK(PROF_EV_RANGE_BEGIN) |            \
   PROF_EVMASK(PROF_EV_RANGE_END) | PROF_EVMASK(PROF_EV_SAMPLE))

static inline void sav_event(sav_st *st, uint32_t tid, const prof__event *ev) {
  if (ev->type == PROF_EV_SAMPLE) {
    on_sample(st, tid, ev);
    return;
  }
  wthread *t = thread_of(st, tid);
  if (!t) return;
  if (ev->ts < t->since) return; /* never backwards */
  cut(st, t, ev->ts);
  switch (ev->type) {
  case PROF_EV_STEP_BEGIN: step_edge(t, 1, ev->ts); break;
  case PROF_EV_STEP_END: step_edge(t, 0, ev->ts); break;
  case PROF_EV_RANGE_BEGIN:
    if (push(t, ev->name ? ev->name : UINT32_MAX - 1, ev->cat)) t->overflow++;
    break;
  case PROF_EV_RANGE_END: {
    if (t->overflow) {
      t->overflow--;
      break;
    }
    uint32_t k = t->depth, name = ev->name ? ev->name : UINT32_MAX - 1;
    while (k > 0 && t->st[k - 1].name != name) k--;
    if (k) t->depth = k - 1;
    break;
  }
  default: break;
  }
}

static void sav_record(prof__an *an, void *vst, const prof__rec *rec) {
  (void)an;
  if (rec->kind == PROF_REC_EVENT) sav_event(vst, rec->tid, &rec->ev);
}

/* The decode thread's batch of events: one call instead of one per event
 * (the call and the record's copy were a fifth of the section's cost). */
static void sav_record_events(prof__an *an, void *vst, const prof__tev *ev, size_t n) {
  (void)an;
  sav_st *st = vst;
  for (size_t i = 0; i < n; i++)
    if (SAV_EVENTS & PROF_EVMASK(ev[i].ev.type & 63)) sav_event(st, ev[i].tid, &ev[i].ev);
}

/* ---- analysis ------------------------------------------------------------- */

static int cmp_seg(const void *a, const void *b) {
  const seg *x = a, *y = b;
  return x->b < y->b ? -1 : x->b > y->b;
}

/* The thread that ran the most steps (among the first 64 seen). */
static uint32_t step_tid(const prof__an *an) {
  uint32_t tid[64];
  size_t cnt[64], n = 0, best = 0;
  for (size_t i = 0; i < an->nsteps; i++) {
    size_t k = 0;
    while (k < n && tid[k] != an->steps[i].tid) k++;
    if (k == n && n < 64) tid[n] = an->steps[i].tid, cnt[n++] = 0;
    if (k < n) cnt[k]++;
  }
  for (size_t k = 1; k < n; k++)
    if (cnt[k] > cnt[best]) best = k;
  return n ? tid[best] : 0;
}

typedef struct waits {
  uint32_t tid;
  wthread *t;       /* the step thread's sums */
  seg *mine;        /* the step thread's kept segments inside steps, by begin */
  size_t nmine;
  seg *other;       /* other threads' kept segments in ranges, by begin */
  size_t nother;
  double period_ns;
} waits;

/* The CPU sampling period in ns when CPU-time sampling ran all along (then
 * a range without samples really was off-CPU), else 0. */
static double sampling_period(const prof__an *an, const sav_st *st) {
  const char *hz = prof__an_header(an, "cpu.sample_hz"), *mode = prof__an_header(an, "cpu.sample_mode");
  double v = hz ? atof(hz) : 0;
  if (!(v > 0) || !mode || strcmp(mode, "cpu") != 0 || prof__an_meta(an, "cpu.stopped")) return 0;
  if (!prof__an_meta(an, "cpu.signal") && !st->cpu_samples) return 0; /* sampling never started */
  return 1e9 / v;
}

static int build(prof__an *an, sav_st *st, waits *x) {
  memset(x, 0, sizeof *x);
  x->tid = step_tid(an);
  x->period_ns = sampling_period(an, st);
  for (size_t i = 0; i < st->nth && !x->t; i++)
    if (st->th[i]->tid == x->tid) x->t = st->th[i];
  if (!x->t) return -1;
  for (size_t i = 0; i < st->npend; i++) { /* samples read before their step */
    const smp *s = &st->pend[i];
    long k = s->tid == x->tid ? prof__an_step_at(an, s->ts) : -1;
    if (k >= 0 && an->steps[k].tid == x->tid) sample_in_step(x->t, s->range, s->w);
  }
  x->mine = malloc((st->nseg + 1) * sizeof *x->mine);
  x->other = malloc((st->nseg + 1) * sizeof *x->other);
  if (!x->mine || !x->other) return -1;
  for (size_t i = 0; i < st->nseg; i++) {
    const seg *s = &st->seg[i];
    if (s->tid != x->tid) {
      if (s->name != NONE_NAME) x->other[x->nother++] = *s;
    } else if (s->in_step) {
      x->mine[x->nmine++] = *s;
    }
  }
  qsort(x->mine, x->nmine, sizeof *x->mine, cmp_seg);
  qsort(x->other, x->nother, sizeof *x->other, cmp_seg);
  return 0;
}

static void waits_free(waits *x) {
  free(x->mine);
  free(x->other);
}

/* ---- attribution ----------------------------------------------------------- */

typedef struct attr {
  uint32_t tid, name; /* name NONE_NAME: CPU samples outside every range */
  double ns;
  int by_samples;
} attr;

typedef struct attribution {
  double wait_ns;     /* the wait segments' total time */
  attr top;           /* the (thread, range) that ran most of it; ns 0: none */
  double share;       /* top.ns / wait_ns */
} attribution;

typedef int (*seg_pred)(const seg *s, const void *arg);

static size_t first_ending_after(const seg *v, size_t n, uint64_t ts) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].e <= ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void attr_add(attr *a, size_t *na, uint32_t tid, uint32_t name, double ns, int by_samples) {
  for (size_t i = 0; i < *na; i++)
    if (a[i].tid == tid && a[i].name == name && a[i].by_samples == by_samples) {
      a[i].ns += ns;
      return;
    }
  if (*na < MAX_ATTR) a[(*na)++] = (attr){tid, name, ns, by_samples};
}

/* Who ran while the step thread was in the segments `pred` selects: other
 * threads' ranges by overlap time; failing a clear one, their CPU samples. */
static attribution attribute(const sav_st *st, const waits *x, seg_pred pred, const void *arg) {
  attribution r = {0};
  seg *w = malloc((x->nmine + 1) * sizeof *w);
  attr *a = malloc(MAX_ATTR * sizeof *a);
  size_t nw = 0, na = 0;
  if (!w || !a) goto out;
  for (size_t i = 0; i < x->nmine; i++)
    if (pred(&x->mine[i], arg)) w[nw++] = x->mine[i], r.wait_ns += (double)(x->mine[i].e - x->mine[i].b);
  if (!nw || r.wait_ns <= 0) goto out;
  for (size_t i = 0; i < x->nother; i++) {
    const seg *o = &x->other[i];
    for (size_t k = first_ending_after(w, nw, o->b); k < nw && w[k].b < o->e; k++) {
      uint64_t b = o->b > w[k].b ? o->b : w[k].b, e = o->e < w[k].e ? o->e : w[k].e;
      if (e > b) attr_add(a, &na, o->tid, o->name, (double)(e - b), 0);
    }
  }
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < na; i++)
    if (best == SIZE_MAX || a[i].ns > a[best].ns) best = i;
  if (best == SIZE_MAX || a[best].ns < THR_ATTR * r.wait_ns) {
    na = 0; /* no range covers it: CPU samples of other threads */
    for (size_t i = 0; x->period_ns > 0 && i < st->nsmp; i++) {
      const smp *s = &st->smp[i];
      if (s->tid == x->tid) continue;
      size_t k = first_ending_after(w, nw, s->ts);
      if (k < nw && w[k].b <= s->ts) attr_add(a, &na, s->tid, s->range, (double)s->w * x->period_ns, 1);
    }
    best = SIZE_MAX;
    for (size_t i = 0; i < na; i++)
      if (best == SIZE_MAX || a[i].ns > a[best].ns) best = i;
  }
  if (best != SIZE_MAX && a[best].ns >= THR_ATTR * r.wait_ns) {
    r.top = a[best];
    r.share = a[best].ns / r.wait_ns;
    if (r.share > 1) r.share = 1;
  }
out:
  free(w);
  free(a);
  return r;
}

static const char *thread_name(const prof__an *an, uint32_t tid, char *buf, size_t n) {
  for (size_t i = 0; i < an->nthreads; i++)
    if (an->threads[i].tid == tid && an->threads[i].name && *an->threads[i].name) {
      snprintf(buf, n, "thread '%s' (tid %u)", an->threads[i].name, tid);
      return buf;
    }
  snprintf(buf, n, "thread %u", tid);
  return buf;
}

static const char *range_name(const prof__an *an, uint32_t name) {
  return name == NONE_NAME ? "outside every range" : prof__an_str(an, name);
}

/* "thread 'loader' (tid 12) in range 'decode' 93% of the time" into buf. */
static const char *attr_text(const prof__an *an, const attribution *r, char *buf, size_t n) {
  char t[160];
  thread_name(an, r->top.tid, t, sizeof t);
  if (r->top.by_samples)
    snprintf(buf, n, "%s ran on a CPU for %.0f%% of it (its CPU samples, innermost range '%s')", t, 100 * r->share,
             range_name(an, r->top.name));
  else snprintf(buf, n, "%s was in range '%s' for %.0f%% of it", t, range_name(an, r->top.name), 100 * r->share);
  return buf;
}

static void add_key_str(prof__finding *f, const char *key, const char *v) {
  if (f->nkeys >= PROF_FINDING_KEYS) return;
  prof__fkey *k = &f->keys[f->nkeys++];
  memset(k, 0, sizeof *k);
  snprintf(k->key, sizeof k->key, "%s", key);
  snprintf(k->str, sizeof k->str, "%.*s", (int)sizeof k->str - 1, v);
}

static void add_key_num(prof__finding *f, const char *key, double v) {
  if (f->nkeys >= PROF_FINDING_KEYS) return;
  prof__fkey *k = &f->keys[f->nkeys++];
  memset(k, 0, sizeof *k);
  snprintf(k->key, sizeof k->key, "%s", key);
  k->is_num = 1;
  k->num = v;
}

static void attr_keys(const prof__an *an, prof__finding *f, const attribution *r) {
  char t[160];
  const char *name = NULL;
  for (size_t i = 0; i < an->nthreads && !name; i++)
    if (an->threads[i].tid == r->top.tid && an->threads[i].name && *an->threads[i].name) name = an->threads[i].name;
  snprintf(t, sizeof t, "%s", name ? name : "");
  add_key_num(f, "waits_for_tid", r->top.tid);
  if (*t) add_key_str(f, "waits_for_thread", t);
  add_key_str(f, "waits_for_range", range_name(an, r->top.name));
  add_key_num(f, "waits_for_share", r->share);
}

/* ---- input_bound: a wait for a loader that already overlaps ------------------ */

static int is_data(const seg *s, const void *arg) {
  (void)arg;
  return s->name != NONE_NAME && s->cat == PROF_CAT_DATA;
}

static void refine_input_bound(prof__an *an, const sav_st *st, const waits *x) {
  prof__finding *f = prof__an_find(an, "input_bound");
  if (!f || !an->nsteps) return;
  attribution r = attribute(st, x, is_data, NULL);
  if (!r.top.ns || r.top.by_samples || r.share < THR_INPUT_ATTR) return;
  double wait = 0, cpu = 0; /* the whole run's data time of the step thread */
  uint64_t samples = 0;
  for (size_t i = 0; i < x->t->nw; i++) {
    const wname *w = &x->t->w[i];
    if (w->cat != PROF_CAT_DATA || w->name == NONE_NAME) continue;
    wait += (double)w->ns, cpu += (double)w->cpu_w * x->period_ns, samples += w->samples;
  }
  double off = wait > cpu ? wait - cpu : 0;
  char a[32], who[320];
  attr_text(an, &r, who, sizeof who);
  prof__an_set_saving(an, f, off / (double)an->nsteps, prof__an_confidence(an->nsteps, 0),
                      "the loading already overlaps on another thread: the step thread's data wait, %s per step "
                      "(%.0f%% off-CPU, %llu CPU samples), while %s; gone when loading keeps up with the step "
                      "(more loader threads or workers)",
                      prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(wait / (double)an->nsteps)),
                      wait > 0 ? 100 * off / wait : 0, (unsigned long long)samples, who);
  attr_keys(an, f, &r);
}

/* ---- step_wait -------------------------------------------------------------- */

static int same_name(const seg *s, const void *arg) { return s->name == *(const uint32_t *)arg; }

static int named_by(const prof__an *an, const char *id, const char *name) {
  for (size_t i = 0; i < an->nfindings; i++) {
    const prof__finding *f = &an->findings[i];
    if (strcmp(f->id, id) != 0) continue;
    for (int k = 0; k < f->nkeys; k++)
      if (!f->keys[k].is_num && !strcmp(f->keys[k].key, "phase") && !strcmp(f->keys[k].str, name)) return 1;
  }
  return 0;
}

/* Wall time minus the CPU time its samples stand for. */
static double off_cpu(const wname *w, double period_ns) {
  double cpu = (double)w->cpu_w * period_ns;
  return (double)w->ns > cpu ? (double)w->ns - cpu : 0;
}

/* Waits of the step thread: a range that is not compute (off-CPU compute is
 * its own work elsewhere: BLAS threads, a GPU) or data (input_bound), nor io
 * when io_bound covers it, present in most steps, mostly off-CPU. */
static int is_candidate(prof__an *an, const waits *x, const wname *w) {
  if (!w->ns) return 0; /* samples only */
  uint64_t total = an->step_stats.total_ns;
  if (!total || (w->cat == PROF_CAT_COMPUTE && w->name != NONE_NAME)) return 0;
  if (w->name != NONE_NAME && w->cat == PROF_CAT_DATA) return 0;
  if (w->name != NONE_NAME && w->cat == PROF_CAT_IO && prof__an_find(an, "io_bound")) return 0;
  if (w->name != NONE_NAME && named_by(an, "periodic_slow_steps", prof__an_str(an, w->name))) return 0;
  if ((double)w->steps < THR_PRESENT * (double)an->nsteps) return 0;
  double off = off_cpu(w, x->period_ns);
  return off >= THR_WAIT_SHARE * (double)total && off >= THR_OFF_CPU * (double)w->ns;
}

static void add_wait(prof__an *an, const sav_st *st, const waits *x, const wname *w) {
  double off = off_cpu(w, x->period_ns), per = off / (double)an->nsteps, share = off / (double)an->step_stats.total_ns;
  attribution r = attribute(st, x, same_name, &w->name);
  char a[32], b[32], who[320] = "", title[400], m[900], rng[200];
  if (w->name == NONE_NAME) snprintf(rng, sizeof rng, "time outside every range");
  else snprintf(rng, sizeof rng, "range '%s' (%s)", prof__an_str(an, w->name), prof__an_cat_name(w->cat));
  if (r.top.ns) attr_text(an, &r, who, sizeof who);
  char wt[320] = " (off-CPU)";
  if (r.top.ns) { /* the thread by name (a tid changes from run to run), and its range */
    const char *tn = NULL;
    for (size_t i = 0; i < an->nthreads && !tn; i++)
      if (an->threads[i].tid == r.top.tid && an->threads[i].name && *an->threads[i].name) tn = an->threads[i].name;
    char who_t[160];
    if (tn) snprintf(who_t, sizeof who_t, "thread '%s'", tn);
    else snprintf(who_t, sizeof who_t, "thread %u", r.top.tid);
    if (r.top.by_samples || r.top.name == NONE_NAME) snprintf(wt, sizeof wt, ", for %s", who_t);
    else snprintf(wt, sizeof wt, ", for %s in range '%s'", who_t, prof__an_str(an, r.top.name));
  }
  snprintf(title, sizeof title, "The step thread waits %s per step in %.160s%.160s",
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(per)), rng, wt); /* bounded: the title is 400 bytes */
  snprintf(m, sizeof m,
           "%s took %s per step on the step thread in %llu of %zu steps; %.0f%% of it off-CPU (%llu CPU samples "
           "there, sampling period %s): %.1f%% of step time%s%s%s",
           rng, prof__an_fmt_ns(b, sizeof b, w->ns / an->nsteps), (unsigned long long)w->steps, an->nsteps,
           w->ns ? 100 * off / (double)w->ns : 0, (unsigned long long)w->samples,
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(x->period_ns)), 100 * share, r.top.ns ? "; meanwhile " : "",
           who, st->capped && r.top.ns ? " (attributed from the run's beginning: the buffer of segments filled)" : "");
  prof__an_finding(an, "step_wait", share >= THR_WAIT_HIGH ? "high" : "medium", share, title, m,
                   "The step thread is blocked here, not computing. If it waits for another thread (named above): "
                   "do not hold a lock across that thread's slow work (copy under the lock, work outside it), or "
                   "hand work over through a queue or double buffer so neither side waits; if it waits for I/O, a "
                   "copy or a device, make the call asynchronous or move it off the step thread and wait only "
                   "where the result is needed.");
  if (w->name != NONE_NAME) {
    prof__an_finding_kstr(an, "phase", prof__an_str(an, w->name));
    prof__an_finding_kstr(an, "category", prof__an_cat_name(w->cat));
  }
  prof__an_finding_saving(an, per, prof__an_confidence(w->steps, 0),
                          "the step thread's off-CPU time in %s, %s per step (wall time minus the CPU time of its "
                          "samples), gone if it no longer waits%s%s",
                          rng, prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(per)), r.top.ns ? ": " : "", who);
  if (r.top.ns && an->nfindings) attr_keys(an, &an->findings[an->nfindings - 1], &r);
}

typedef struct cand {
  const wname *w;
  double off;
} cand;

static int cmp_off(const void *a, const void *b) {
  double x = ((const cand *)a)->off, y = ((const cand *)b)->off;
  return x > y ? -1 : x < y;
}

static void sav_finish(prof__an *an, void *vst) {
  sav_st *st = vst;
  if (!an->nsteps) return;
  uint32_t tid = step_tid(an);
  for (size_t i = 0; i < an->nthreads; i++) /* lost range events would fake waits */
    if (an->threads[i].lost && an->threads[i].tid == tid) return;
  waits x;
  if (build(an, st, &x) == 0) {
    refine_input_bound(an, st, &x);
    cand *c = x.period_ns > 0 ? malloc((x.t->nw + 1) * sizeof *c) : NULL;
    for (size_t i = 0; c && i < x.t->nw; i++) c[i] = (cand){&x.t->w[i], off_cpu(&x.t->w[i], x.period_ns)};
    if (c) qsort(c, x.t->nw, sizeof *c, cmp_off);
    for (size_t i = 0, n = 0; c && i < x.t->nw && n < MAX_WAITS; i++)
      if (is_candidate(an, &x, c[i].w)) add_wait(an, st, &x, c[i].w), n++;
    free(c);
  }
  waits_free(&x);
}

static void sav_destroy(prof__an *an, void *vst) {
  (void)an;
  sav_st *st = vst;
  free(st->seg);
  free(st->smp);
  free(st->pend);
  for (size_t i = 0; i < st->nth; i++) {
    free(st->th[i]->w);
    free(st->th[i]->steps);
    free(st->th[i]->st);
    prof__map32_free(&st->th[i]->wmap);
    free(st->th[i]->wdense);
    free(st->th[i]);
  }
  free(st->th);
  prof__map32_free(&st->tids);
}

const prof__section prof__sec_savings = {
    .name = "savings",
    .state_size = sizeof(sav_st),
    .record = sav_record,
    .finish = sav_finish,
    .destroy = sav_destroy,
    .event_mask = SAV_EVENTS,
    .detached = 1, /* sav_record keeps its own per-thread stacks */
    .record_events = sav_record_events,
};
