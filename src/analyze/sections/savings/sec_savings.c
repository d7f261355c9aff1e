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
 * One pass keeps, per thread, the innermost-range segments (a range's self
 * time: from its begin, or the end of a child, to its end or the begin of a
 * child; time outside every range only inside steps) and the CPU samples
 * with their time. Both are capped (SEG_MAX, SMP_MAX): a longer run is
 * attributed from its beginning, and the finding says so. The finish hook
 * runs after every other section (sections.def lists it last) so it can
 * refine input_bound and skip what periodic_slow_steps already names.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "trace/ev_sample.h"
#include "trace/event.h"

#define SEG_MAX (1u << 19)   /* segments kept (32 bytes each) */
#define SMP_MAX (1u << 18)   /* CPU samples kept (24 bytes each) */
#define MAX_DEPTH 256
#define THR_WAIT_SHARE 0.05  /* step_wait: off-CPU time >= 5% of step time ... */
#define THR_WAIT_HIGH 0.20   /* ... high from 20% */
#define THR_OFF_CPU 0.5      /* ... the range is >= 50% off-CPU ... */
#define THR_PRESENT 0.5      /* ... in >= 50% of the steps (not a spike: see steptime) */
#define THR_ATTR 0.3         /* a thread is named when it ran during >= 30% of the wait */
#define THR_INPUT_ATTR 0.5   /* input_bound: the loading overlaps on another thread >= 50% */
#define MAX_WAITS 3          /* step_wait findings at most */
#define MAX_ATTR 256         /* (thread, range) pairs tracked per attribution */
#define NONE_NAME UINT32_MAX /* a segment outside every range */

typedef struct seg {
  uint64_t b, e;
  uint32_t tid, name;
  uint8_t cat;
} seg;

typedef struct smp {
  uint64_t ts, w;
  uint32_t tid, range;
} smp;

typedef struct frame {
  uint32_t name;
  uint8_t cat;
} frame;

typedef struct wthread {
  uint32_t tid;
  uint32_t depth, overflow;
  int in_step, stepping;
  uint64_t since; /* start of the current segment; 0: none */
  frame st[MAX_DEPTH];
} wthread;

typedef struct sav_st {
  seg *seg;
  size_t nseg, segcap;
  smp *smp;
  size_t nsmp, smpcap;
  int capped;
  uint64_t cpu_samples;
  wthread **th;
  size_t nth, thcap;
} sav_st;

static void *grow(void *p, size_t *cap, size_t need, size_t elem, size_t max) {
  if (need <= *cap) return p;
  if (need > max) return NULL;
  size_t c = *cap ? *cap * 2 : 1024;
  while (c < need) c *= 2;
  if (c > max) c = max;
  void *q = realloc(p, c * elem);
  if (q) *cap = c;
  return q;
}

static wthread *thread_of(sav_st *st, uint32_t tid) {
  for (size_t i = 0; i < st->nth; i++)
    if (st->th[i]->tid == tid) return st->th[i];
  wthread **a = grow(st->th, &st->thcap, st->nth + 1, sizeof *a, SIZE_MAX / sizeof *a);
  if (!a) return NULL;
  st->th = a;
  wthread *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->tid = tid;
  return a[st->nth++] = t;
}

/* Close the thread's current segment at ts and start the next one there. */
static void cut(sav_st *st, wthread *t, uint64_t ts) {
  uint64_t b = t->since;
  t->since = ts;
  if (!b || ts <= b) return;
  if (!t->depth && !t->in_step) return; /* outside every range: only inside steps */
  if (t->stepping && !t->in_step) return; /* the step thread between steps: not needed */
  seg *s = grow(st->seg, &st->segcap, st->nseg + 1, sizeof *s, SEG_MAX);
  if (!s) {
    st->capped = 1;
    return;
  }
  st->seg = s;
  const frame *f = t->depth ? &t->st[t->depth - 1] : NULL;
  s[st->nseg++] = (seg){b, ts, t->tid, f ? f->name : NONE_NAME, f ? f->cat : (uint8_t)PROF_CAT_OTHER};
}

static void on_sample(sav_st *st, uint32_t tid, const prof__event *ev) {
  if (prof__ev_sample_mode(ev) != PROF_SAMPLE_CPU) return;
  st->cpu_samples++;
  smp *s = grow(st->smp, &st->smpcap, st->nsmp + 1, sizeof *s, SMP_MAX);
  if (!s) {
    st->capped = 1;
    return;
  }
  st->smp = s;
  uint32_t r = prof__ev_sample_range(ev);
  s[st->nsmp++] = (smp){ev->ts, prof__ev_sample_weight(ev), tid, r ? r : NONE_NAME};
}

static void sav_record(prof__an *an, void *vst, const prof__rec *rec) {
  (void)an;
  sav_st *st = vst;
  if (rec->kind != PROF_REC_EVENT) return;
  const prof__event *ev = &rec->ev;
  if (ev->type == PROF_EV_SAMPLE) {
    on_sample(st, rec->tid, ev);
    return;
  }
  wthread *t = thread_of(st, rec->tid);
  if (!t) return;
  if (ev->ts < t->since) return; /* never backwards */
  cut(st, t, ev->ts);
  switch (ev->type) {
  case PROF_EV_STEP_BEGIN: t->in_step = t->stepping = 1; break;
  case PROF_EV_STEP_END: t->in_step = 0; break;
  case PROF_EV_RANGE_BEGIN:
    if (t->depth == MAX_DEPTH) t->overflow++;
    else t->st[t->depth++] = (frame){ev->name, ev->cat};
    break;
  case PROF_EV_RANGE_END: {
    if (t->overflow) {
      t->overflow--;
      break;
    }
    uint32_t k = t->depth;
    while (k > 0 && t->st[k - 1].name != ev->name) k--;
    if (k) t->depth = k - 1;
    break;
  }
  default: break;
  }
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

/* Index of the step of thread tid containing ts, or -1. */
static long step_of(const prof__an *an, uint32_t tid, uint64_t ts) {
  long k = prof__an_step_at(an, ts);
  return k >= 0 && an->steps[k].tid == tid ? k : -1;
}

/* Per range name of the step thread: its time inside steps, the CPU time
 * its samples stand for, and in how many steps it ran. */
typedef struct wname {
  uint32_t name;
  uint8_t cat;
  uint64_t ns, steps;
  long last_step;
  double cpu_ns;
  uint64_t samples;
} wname;

typedef struct waits {
  uint32_t tid;
  seg *mine;        /* the step thread's segments inside steps, by begin */
  size_t nmine;
  seg *other;       /* other threads' segments in ranges, by begin */
  size_t nother;
  wname *w;
  size_t nw;
  double period_ns;
} waits;

static wname *wname_of(waits *x, uint32_t name, uint8_t cat) {
  for (size_t i = 0; i < x->nw; i++)
    if (x->w[i].name == name) return &x->w[i];
  wname *p = realloc(x->w, (x->nw + 1) * sizeof *p);
  if (!p) return NULL;
  x->w = p;
  p[x->nw] = (wname){name, cat, 0, 0, -1, 0, 0};
  return &p[x->nw++];
}

static const char *meta_of(const prof__an *an, const char *key) {
  for (size_t i = an->meta_count; i > 0; i--)
    if (an->meta[i - 1].key && strcmp(an->meta[i - 1].key, key) == 0) return an->meta[i - 1].value;
  return NULL;
}

/* The CPU sampling period in ns when CPU-time sampling ran all along (then
 * a range without samples really was off-CPU), else 0. */
static double sampling_period(const prof__an *an, const sav_st *st) {
  const char *hz = prof__an_header(an, "cpu.sample_hz"), *mode = prof__an_header(an, "cpu.sample_mode");
  double v = hz ? atof(hz) : 0;
  if (!(v > 0) || !mode || strcmp(mode, "cpu") != 0 || meta_of(an, "cpu.stopped")) return 0;
  if (!meta_of(an, "cpu.signal") && !st->cpu_samples) return 0; /* sampling never started */
  return 1e9 / v;
}

static int build(prof__an *an, sav_st *st, waits *x) {
  memset(x, 0, sizeof *x);
  x->tid = step_tid(an);
  x->period_ns = sampling_period(an, st);
  x->mine = malloc((st->nseg + 1) * sizeof *x->mine);
  x->other = malloc((st->nseg + 1) * sizeof *x->other);
  if (!x->mine || !x->other) return -1;
  for (size_t i = 0; i < st->nseg; i++) {
    const seg *s = &st->seg[i];
    if (s->tid != x->tid) {
      if (s->name != NONE_NAME) x->other[x->nother++] = *s;
      continue;
    }
    long k = step_of(an, x->tid, s->b);
    if (k < 0) continue;
    seg c = *s;
    if (c.e > an->steps[k].end_ns) c.e = an->steps[k].end_ns;
    if (c.e <= c.b) continue;
    x->mine[x->nmine++] = c;
    wname *w = wname_of(x, c.name, c.cat);
    if (!w) return -1;
    w->ns += c.e - c.b;
    if (w->last_step != k) w->steps++, w->last_step = k;
  }
  qsort(x->mine, x->nmine, sizeof *x->mine, cmp_seg);
  qsort(x->other, x->nother, sizeof *x->other, cmp_seg);
  for (size_t i = 0; x->period_ns > 0 && i < st->nsmp; i++) {
    const smp *s = &st->smp[i];
    if (s->tid != x->tid || step_of(an, x->tid, s->ts) < 0) continue;
    for (size_t k = 0; k < x->nw; k++)
      if (x->w[k].name == s->range) {
        x->w[k].cpu_ns += (double)s->w * x->period_ns;
        x->w[k].samples++;
        break;
      }
  }
  return 0;
}

static void waits_free(waits *x) {
  free(x->mine);
  free(x->other);
  free(x->w);
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
  double cpu = 0;
  uint64_t samples = 0;
  for (size_t i = 0; i < x->nw; i++)
    if (x->w[i].cat == PROF_CAT_DATA && x->w[i].name != NONE_NAME) cpu += x->w[i].cpu_ns, samples += x->w[i].samples;
  double off = r.wait_ns > cpu ? r.wait_ns - cpu : 0;
  char a[32], who[320];
  attr_text(an, &r, who, sizeof who);
  prof__an_set_saving(an, f, off / (double)an->nsteps, prof__an_confidence(an->nsteps, 0),
                      "the loading already overlaps on another thread: the step thread's data wait, %s per step "
                      "(%.0f%% off-CPU, %llu CPU samples), while %s; gone when loading keeps up with the step "
                      "(more loader threads or workers)",
                      prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(r.wait_ns / (double)an->nsteps)),
                      r.wait_ns > 0 ? 100 * off / r.wait_ns : 0, (unsigned long long)samples, who);
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

static double off_cpu(const wname *w) { return (double)w->ns > w->cpu_ns ? (double)w->ns - w->cpu_ns : 0; }

/* Waits of the step thread: a range that is not compute (off-CPU compute is
 * its own work elsewhere: BLAS threads, a GPU) or data (input_bound), nor io
 * when io_bound covers it, present in most steps, mostly off-CPU. */
static int is_candidate(prof__an *an, const waits *x, const wname *w) {
  uint64_t total = an->step_stats.total_ns;
  if (!total || (w->cat == PROF_CAT_COMPUTE && w->name != NONE_NAME)) return 0;
  if (w->name != NONE_NAME && w->cat == PROF_CAT_DATA) return 0;
  if (w->name != NONE_NAME && w->cat == PROF_CAT_IO && prof__an_find(an, "io_bound")) return 0;
  if (w->name != NONE_NAME && named_by(an, "periodic_slow_steps", prof__an_str(an, w->name))) return 0;
  if ((double)w->steps < THR_PRESENT * (double)an->nsteps) return 0;
  double off = off_cpu(w);
  (void)x;
  return off >= THR_WAIT_SHARE * (double)total && off >= THR_OFF_CPU * (double)w->ns;
}

static void add_wait(prof__an *an, const sav_st *st, const waits *x, const wname *w) {
  double off = off_cpu(w), per = off / (double)an->nsteps, share = off / (double)an->step_stats.total_ns;
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
  snprintf(title, sizeof title, "The step thread waits %s per step in %s%s",
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(per)), rng, wt);
  snprintf(m, sizeof m,
           "%s took %s per step on the step thread in %llu of %zu steps; %.0f%% of it off-CPU (%llu CPU samples "
           "there, sampling period %s): %.1f%% of step time%s%s%s",
           rng, prof__an_fmt_ns(b, sizeof b, w->ns / an->nsteps), (unsigned long long)w->steps, an->nsteps,
           w->ns ? 100 * off / (double)w->ns : 0, (unsigned long long)w->samples,
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(x->period_ns)), 100 * share, r.top.ns ? "; meanwhile " : "",
           who, st->capped ? " (the run is attributed from its beginning: segment buffer full)" : "");
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

static int cmp_off(const void *a, const void *b) {
  double x = off_cpu(a), y = off_cpu(b);
  return x > y ? -1 : x < y;
}

static void sav_finish(prof__an *an, void *vst) {
  sav_st *st = vst;
  if (!an->nsteps || !st->nseg) return;
  uint32_t tid = step_tid(an);
  for (size_t i = 0; i < an->nthreads; i++) /* lost range events would fake waits */
    if (an->threads[i].lost && an->threads[i].tid == tid) return;
  waits x;
  if (build(an, st, &x) == 0) {
    refine_input_bound(an, st, &x);
    if (x.period_ns > 0) {
      qsort(x.w, x.nw, sizeof *x.w, cmp_off);
      for (size_t i = 0, n = 0; i < x.nw && n < MAX_WAITS; i++)
        if (is_candidate(an, &x, &x.w[i])) add_wait(an, st, &x, &x.w[i]), n++;
    }
  }
  waits_free(&x);
}

static void sav_destroy(prof__an *an, void *vst) {
  (void)an;
  sav_st *st = vst;
  free(st->seg);
  free(st->smp);
  for (size_t i = 0; i < st->nth; i++) free(st->th[i]);
  free(st->th);
}

const prof__section prof__sec_savings = {
    .name = "savings",
    .state_size = sizeof(sav_st),
    .record = sav_record,
    .finish = sav_finish,
    .destroy = sav_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_STEP_BEGIN) | PROF_EVMASK(PROF_EV_STEP_END) |
                  PROF_EVMASK(PROF_EV_RANGE_BEGIN) | PROF_EVMASK(PROF_EV_RANGE_END) | PROF_EVMASK(PROF_EV_SAMPLE),
};
