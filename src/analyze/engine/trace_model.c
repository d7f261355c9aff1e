/* trace_model.c — the core model of a trace: threads, ranges, steps and the
 * step-time breakdown, built one record at a time.
 *
 * Each thread keeps its own stack of open ranges, so the order in which
 * different threads' blocks arrive does not matter. Self time of a range is
 * its duration minus its direct children's. The breakdown is kept on the
 * thread that began the step: every instant of the step goes to the
 * innermost open range's category, or to "untracked" when none is open.
 * Lookups are by integer id (arrays, hash map for very large ids); nothing
 * allocates per event.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/engine/an_internal.h"
#include "analyze/util/array.h"
#include "trace/ev_cpuctr.h"
#include "trace/ev_mem.h"
#include "trace/rec_stepsum.h"

/* ---- id map ------------------------------------------------------------- */

/* ---- growth helper ------------------------------------------------------ */

/* Make room for `need` items of `size` bytes; 0 or -1 (p->oom set). */
static int grow(an_priv *p, void **arr, size_t *cap, size_t need, size_t size) {
  if (prof__arr_grow(arr, cap, need, size) == 0) return 0;
  p->oom = 1;
  return -1;
}

/* ---- strings ------------------------------------------------------------ */

static void model_string(an_priv *p, uint32_t id, const char *s, size_t len) {
  prof__an *an = &p->pub;
  char *copy = strndup(s ? s : "", s ? len : 0);
  if (!copy) { p->oom = 1; return; }
  /* the counters of the per-step CPU time and memory */
  if (strcmp(copy, PROF_CPUCTR_CPU_NS) == 0) p->id_cpu = id;
  else if (strcmp(copy, PROF_MEM_COUNTER_RSS) == 0) p->id_rss = id;
  else if (strcmp(copy, PROF_MEM_COUNTER_LIVE) == 0) p->id_live = id;
  if (id < AN_DENSE_IDS) {
    if (id >= an->nstrings) {
      size_t cap = an->nstrings;
      if (grow(p, (void **)&an->strings, &cap, (size_t)id + 1, sizeof(char *))) { free(copy); return; }
      memset(an->strings + an->nstrings, 0, (cap - an->nstrings) * sizeof(char *));
      an->nstrings = (uint32_t)cap;
    }
    free(an->strings[id]);
    an->strings[id] = copy;
    return;
  }
  uint32_t at = prof__map32_get(&p->str_big, id);
  if (at != AN_NONE) {
    free(p->big_strs[at]);
    p->big_strs[at] = copy;
    return;
  }
  if (grow(p, (void **)&p->big_strs, &p->big_cap, p->nbig + 1, sizeof(char *)) ||
      prof__map32_put(&p->str_big, id, (uint32_t)p->nbig)) {
    free(copy);
    p->oom = 1;
    return;
  }
  p->big_strs[p->nbig++] = copy;
}

const char *prof__an_str(const prof__an *an, uint32_t id) {
  if (id < an->nstrings && an->strings[id]) return an->strings[id];
  if (id >= AN_DENSE_IDS) {
    const an_priv *p = (const an_priv *)an;
    uint32_t at = prof__map32_get(&p->str_big, id);
    if (at != AN_NONE) return p->big_strs[at];
  }
  return "?";
}

/* ---- threads ------------------------------------------------------------ */

static size_t thread_add(an_priv *p, uint32_t tid) {
  prof__an *an = &p->pub;
  size_t n = an->nthreads;
  if (grow(p, (void **)&an->threads, &p->thcap, n + 1, sizeof *an->threads)) return SIZE_MAX;
  if (grow(p, (void **)&p->ts, &p->tcap, n + 1, sizeof *p->ts)) return SIZE_MAX;
  if (prof__map32_put(&p->tid_map, tid, (uint32_t)n)) { p->oom = 1; return SIZE_MAX; }
  memset(&an->threads[n], 0, sizeof an->threads[n]);
  memset(&p->ts[n], 0, sizeof p->ts[n]);
  an->threads[n].tid = tid;
  p->ts[n].step = -1;
  an->nthreads = n + 1;
  return n;
}

static inline size_t thread_index(an_priv *p, uint32_t tid) {
  if (p->last_ti != SIZE_MAX && p->last_tid == tid) return p->last_ti;
  uint32_t i = prof__map32_get(&p->tid_map, tid);
  size_t ti = i == AN_NONE ? thread_add(p, tid) : i;
  if (ti != SIZE_MAX) {
    p->last_tid = tid;
    p->last_ti = ti;
  }
  return ti;
}

size_t prof__an_thread_index(const prof__an *an, uint32_t tid) {
  const an_priv *p = (const an_priv *)an;
  if (p->last_ti != SIZE_MAX && p->last_tid == tid) return p->last_ti;
  uint32_t i = prof__map32_get(&p->tid_map, tid);
  return i == AN_NONE ? SIZE_MAX : i;
}

static void model_thread(an_priv *p, const prof__rec *r) {
  size_t ti = thread_index(p, r->tid);
  if (ti == SIZE_MAX) return;
  prof__thread_info *t = &p->pub.threads[ti];
  if (r->str && r->str[0]) {
    char *name = strdup(r->str);
    if (name) {
      free(t->name);
      t->name = name;
    }
  }
  t->lost = r->lost;
  t->exited = r->exited;
}

/* ---- ranges ------------------------------------------------------------- */

static int bucket_of(int cat) {
  return cat >= 0 && cat < PROF_BD_OTHER_RANGE ? cat : PROF_BD_OTHER_RANGE;
}

/* Dense names are indexed by name * PROF_CAT_COUNT + cat; larger names go
 * through the map to the first range of that name, chained by category. */
static uint32_t range_head(an_priv *p, uint32_t name) {
  return prof__map32_get(&p->rhead_big, name);
}

static int set_dense(an_priv *p, uint32_t key, uint32_t idx) {
  if (key >= p->rhead_cap) {
    size_t cap = p->rhead_cap, old = cap;
    if (grow(p, (void **)&p->rhead, &cap, (size_t)key + 1, sizeof *p->rhead)) return -1;
    for (size_t i = old; i < cap; i++) p->rhead[i] = AN_NONE;
    p->rhead_cap = (uint32_t)cap;
  }
  p->rhead[key] = idx;
  return 0;
}

static uint32_t range_new(an_priv *p, uint32_t name, int cat, uint32_t next) {
  prof__an *an = &p->pub;
  size_t cap = p->rcap;
  if (grow(p, (void **)&an->ranges, &cap, an->nranges + 1, sizeof *an->ranges)) return AN_NONE;
  if (grow(p, (void **)&p->rnext, &p->rcap, an->nranges + 1, sizeof *p->rnext)) return AN_NONE;
  uint32_t idx = (uint32_t)an->nranges;
  prof__range_stat *rs = &an->ranges[idx];
  memset(rs, 0, sizeof *rs);
  rs->name = name;
  rs->cat = cat;
  rs->min_ns = UINT64_MAX;
  p->rnext[idx] = next;
  int rc = name < AN_DENSE_IDS ? set_dense(p, name * PROF_CAT_COUNT + (uint32_t)cat, idx)
                               : prof__map32_put(&p->rhead_big, name, idx);
  if (rc) {
    p->oom = 1;
    return AN_NONE;
  }
  an->nranges++;
  return idx;
}

static inline uint32_t range_index(an_priv *p, uint32_t name, int cat) {
  if (name < AN_DENSE_IDS) {
    uint32_t key = name * PROF_CAT_COUNT + (uint32_t)cat;
    uint32_t i = key < p->rhead_cap ? p->rhead[key] : AN_NONE;
    return i != AN_NONE ? i : range_new(p, name, cat, AN_NONE);
  }
  uint32_t head = range_head(p, name);
  for (uint32_t i = head; i != AN_NONE; i = p->rnext[i])
    if (p->pub.ranges[i].cat == cat) return i;
  return range_new(p, name, cat, head);
}

/* Attribute the step time since t->attr_ts to what is open now. */
static inline void attribute(an_priv *p, an_thread *t, uint64_t ts) {
  uint64_t d = ts - t->attr_ts;
  t->attr_ts = ts;
  if (!d) return;
  prof__step *s = &p->pub.steps[t->step];
  if (t->depth) {
    an_frame *f = &t->frames[t->depth - 1];
    s->bd_ns[f->bucket] += d;
    p->pub.ranges[f->range].in_step_self_ns += d;
  } else {
    s->bd_ns[PROF_BD_UNTRACKED] += d;
  }
}

static void range_begin(an_priv *p, an_thread *t, const prof__event *ev, uint64_t ts) {
  t->began = 1;
  if (t->step >= 0) attribute(p, t, ts);
  if (t->depth == t->cap) {
    size_t cap = t->cap;
    if (cap >= AN_MAX_DEPTH || grow(p, (void **)&t->frames, &cap, cap + 1, sizeof *t->frames)) {
      t->overflow++;
      p->pub.dropped_ranges++;
      return;
    }
    t->cap = (uint32_t)cap;
  }
  int cat = ev->cat < PROF_CAT_COUNT ? ev->cat : PROF_CAT_OTHER;
  uint32_t ri = range_index(p, ev->name, cat);
  if (ri == AN_NONE) {
    t->overflow++;
    p->pub.dropped_ranges++;
    return;
  }
  an_frame *f = &t->frames[t->depth];
  f->outer = t->depth < PROF_CTX_OUTER_DEPTH;
  for (uint32_t i = 0; i < t->depth && f->outer; i++) f->outer = t->frames[i].name != ev->name;
  t->depth++;
  f->range = ri;
  f->name = ev->name;
  f->bucket = (uint8_t)bucket_of(cat);
  f->cat = (int8_t)cat;
  f->begin = ts;
  f->child = 0;
}

static void frame_close(an_priv *p, an_thread *t, uint64_t ts) {
  an_frame *f = &t->frames[--t->depth];
  uint64_t dur = ts - f->begin;
  prof__range_stat *rs = &p->pub.ranges[f->range];
  rs->count++;
  rs->total_ns += dur;
  rs->self_ns += dur > f->child ? dur - f->child : 0;
  if (dur < rs->min_ns) rs->min_ns = dur;
  if (dur > rs->max_ns) rs->max_ns = dur;
  if (t->depth) t->frames[t->depth - 1].child += dur;
}

static void frame_describe(const an_thread *t, uint32_t level, prof__ctx_frame *out) {
  const an_frame *f = &t->frames[level];
  out->name = f->name;
  out->cat = f->cat;
  out->outer = f->outer;
  out->level = level;
  out->begin_ns = f->begin;
}

static void range_end(an_priv *p, an_thread *t, uint32_t name, uint64_t ts) {
  if (t->step >= 0) attribute(p, t, ts);
  if (t->overflow) {
    t->overflow--;
    return;
  }
  /* The innermost frame normally matches; a lost END leaves extra frames
   * above the match, which are closed here too. */
  uint32_t k = t->depth, stop = t->depth > 8 ? t->depth - 8 : 0;
  while (k > stop && t->frames[k - 1].name != name) k--;
  if (k == stop) {
    /* In a bounded trace that dropped detail, the ends of ranges begun
     * before the kept window have no begin: not a misuse. */
    if (!p->pub.bound_dropped_chunks || t->began) p->pub.unmatched_range_ends++;
    return;
  }
  p->pub.unclosed_ranges += t->depth - k;
  frame_describe(t, k - 1, &p->ctx.closed);
  p->ctx.has_closed = 1;
  while (t->depth >= k) frame_close(p, t, ts);
}

/* ---- steps -------------------------------------------------------------- */

/* Open steps by number -> thread index + 1 (0: none), so that a STEP_END
 * on another thread than its BEGIN finds the step in one lookup. Number
 * UINT64_MAX cannot be a key (the map stores key + 1): such a step ends only
 * on its own thread. Closed steps leave the map: it holds the open ones. */
static void open_step_set(an_priv *p, uint64_t number, uint64_t ti1) {
  if (number == UINT64_MAX) return;
  if (!ti1) {
    prof__u64map_del(&p->open_steps, number);
    return;
  }
  uint64_t old = prof__u64map_get(&p->open_steps, number);
  if (old != ti1 && prof__u64map_add(&p->open_steps, number, ti1 - old)) p->oom = 1;
}

/* The step open on t is no longer open. */
static void step_forget(an_priv *p, an_thread *t) {
  uint64_t number = p->pub.steps[t->step].number;
  if (number != UINT64_MAX && prof__u64map_get(&p->open_steps, number) == (uint64_t)(t - p->ts) + 1)
    open_step_set(p, number, 0);
  t->step = -1;
}

static void step_close(an_priv *p, an_thread *t, uint64_t ts) {
  if (ts < t->attr_ts) ts = t->attr_ts;
  attribute(p, t, ts);
  p->pub.steps[t->step].end_ns = ts;
  step_forget(p, t);
}

static void step_begin(an_priv *p, an_thread *t, uint32_t tid, uint64_t number, uint64_t ts) {
  p->step_begun = 1;
  prof__an *an = &p->pub;
  if (t->step >= 0) { /* END lost: the step stays unfinished */
    attribute(p, t, ts);
    step_forget(p, t);
  }
  if (grow(p, (void **)&an->steps, &p->scap, an->nsteps + 1, sizeof *an->steps)) return;
  prof__step *s = &an->steps[an->nsteps];
  memset(s, 0, sizeof *s);
  s->number = number;
  s->tid = tid;
  s->begin_ns = ts;
  s->end_ns = UINT64_MAX; /* open until its END */
  t->step = (long)an->nsteps++;
  t->step_no = number;
  t->attr_ts = ts;
  open_step_set(p, number, (uint64_t)(t - p->ts) + 1);
  /* the thread's CPU clock read right before this STEP_BEGIN, if it was */
  if (grow(p, (void **)&p->step_cpu0, &p->cpu0cap, an->nsteps, sizeof *p->step_cpu0)) return;
  p->step_cpu0[t->step] = t->cpu_have ? t->cpu_v : NAN;
  t->cpu_have = 0;
  t->cpu_wait = 0;
}

static void step_end(an_priv *p, an_thread *t, uint64_t number, uint64_t ts) {
  if (t->step >= 0 && p->pub.steps[t->step].number == number) {
    /* its CPU clock's end value is the thread's next boundary reading */
    size_t i = (size_t)t->step;
    t->cpu_wait = i < p->cpu0cap && isfinite(p->step_cpu0[i]) ? i + 1 : 0;
    step_close(p, t, ts);
    return;
  }
  uint64_t ti1 = number == UINT64_MAX ? 0 : prof__u64map_get(&p->open_steps, number);
  if (ti1) { /* ended on another thread */
    step_close(p, &p->ts[ti1 - 1], ts);
    return;
  }
  if (!p->pub.bound_dropped_chunks || p->step_begun) p->pub.unmatched_step_ends++; /* as for ranges */
}

/* ---- per-step CPU time and memory --------------------------------------- */

static void series_add(an_priv *p, an_series *q, uint64_t ts, double v) {
  if (grow(p, (void **)&q->ts, &q->cap, q->n + 1, sizeof *q->ts)) return;
  if (grow(p, (void **)&q->v, &q->vcap, q->n + 1, sizeof *q->v)) return;
  q->ts[q->n] = ts;
  q->v[q->n++] = v;
}

/* COUNTER events the step model reads: boundary readings of a thread's CPU
 * clock (the end of the step waiting for one, else the begin of its next
 * step) and the process's RSS and live heap (rec_stepsum.c's rules). */
static void model_counter(an_priv *p, an_thread *t, const prof__event *ev, uint64_t ts) {
  if (!ev->name) return;
  double v = prof__bits_f64(ev->a);
  if (ev->name == p->id_rss) {
    series_add(p, &p->rss, ts, v);
  } else if (ev->name == p->id_live) {
    series_add(p, &p->live, ts, v);
  } else if (ev->name == p->id_cpu && (ev->cat & PROF_CPUCTR_CAT_BOUNDARY)) {
    if (t->cpu_wait) {
      size_t i = t->cpu_wait - 1;
      t->cpu_wait = 0;
      if (i < p->pub.nsteps && v >= p->step_cpu0[i]) {
        /* at most the step's length (rec_stepsum.c) */
        double c = v - p->step_cpu0[i], len = (double)(p->pub.steps[i].end_ns - p->pub.steps[i].begin_ns);
        p->pub.steps[i].cpu_ns = (uint64_t)((c < len ? c : len) + 0.5);
        p->pub.steps[i].have |= PROF_STEP_HAS_CPU;
      }
      return;
    }
    t->cpu_have = 1;
    t->cpu_v = v;
  }
}

static int cmp_reading(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The series by time (one writer thread writes it in order: rarely sorted). */
static void series_sort(an_priv *p, an_series *q) {
  size_t i = 1;
  while (i < q->n && q->ts[i - 1] <= q->ts[i]) i++;
  if (i >= q->n) return;
  struct rd { uint64_t ts; double v; } *r = malloc(q->n * sizeof *r);
  if (!r) {
    p->oom = 1;
    return;
  }
  for (size_t k = 0; k < q->n; k++) r[k] = (struct rd){q->ts[k], q->v[k]};
  qsort(r, q->n, sizeof *r, cmp_reading);
  for (size_t k = 0; k < q->n; k++) q->ts[k] = r[k].ts, q->v[k] = r[k].v;
  free(r);
}

/* Each detail step's peak RSS and live heap. */
static void step_memory(an_priv *p) {
  prof__an *an = &p->pub;
  series_sort(p, &p->rss);
  series_sort(p, &p->live);
  for (size_t i = 0; i < an->nsteps; i++) {
    prof__step *s = &an->steps[i];
    double v;
    if (prof__ss_peak(p->rss.ts, p->rss.v, p->rss.n, s->begin_ns, s->end_ns, &v) && v >= 0) {
      s->rss_peak_bytes = (uint64_t)(v + 0.5);
      s->have |= PROF_STEP_HAS_RSS;
    }
    if (prof__ss_peak(p->live.ts, p->live.v, p->live.n, s->begin_ns, s->end_ns, &v) && v >= 0) {
      s->live_peak_bytes = (uint64_t)(v + 0.5);
      s->have |= PROF_STEP_HAS_LIVE;
    }
  }
}

void prof__an_step_res(const prof__an *an, prof__step_res *r) {
  memset(r, 0, sizeof *r);
  size_t n;
  const prof__step *steps = prof__an_all_steps(an, &n);
  for (size_t i = 0; i < n; i++) {
    const prof__step *s = &steps[i];
    if (s->have & PROF_STEP_HAS_CPU) {
      r->cpu_steps++;
      r->cpu_ns += s->cpu_ns;
      r->cpu_wall_ns += s->end_ns - s->begin_ns;
    }
    if ((s->have & PROF_STEP_HAS_RSS) && (!r->rss_steps++ || s->rss_peak_bytes > r->rss_peak_bytes)) {
      r->rss_peak_bytes = s->rss_peak_bytes;
      r->rss_peak_step = s->number;
    }
    if ((s->have & PROF_STEP_HAS_LIVE) && (!r->live_steps++ || s->live_peak_bytes > r->live_peak_bytes)) {
      r->live_peak_bytes = s->live_peak_bytes;
      r->live_peak_step = s->number;
    }
  }
}

/* ---- events ------------------------------------------------------------- */

/* The context handed to the sections with this event (prof__an_ctx). */
static void ctx_set(an_priv *p, size_t ti) {
  const an_thread *t = &p->ts[ti];
  prof__ctx *c = &p->ctx;
  c->thread = ti;
  c->depth = t->depth;
  const an_frame *f = t->depth ? &t->frames[t->depth - 1] : NULL;
  c->range = f ? f->name : 0;
  c->cat = f ? f->cat : -1;
  c->in_step = t->step >= 0;
  c->step = t->step >= 0 ? t->step_no : 0;
}

const prof__ctx *prof__an_ctx(const prof__an *an) { return &((const an_priv *)an)->ctx; }

uint32_t prof__an_ctx_range_at(const prof__an *an, uint32_t level) {
  const an_priv *p = (const an_priv *)an;
  if (p->ctx.thread >= an->nthreads || level >= p->ctx.depth) return 0;
  const an_thread *t = &p->ts[p->ctx.thread];
  return level < t->depth ? t->frames[level].name : 0;
}

int prof__an_ctx_frame(const prof__an *an, uint32_t level, prof__ctx_frame *f) {
  const an_priv *p = (const an_priv *)an;
  if (p->ctx.thread >= an->nthreads || level >= p->ctx.depth) return -1;
  const an_thread *t = &p->ts[p->ctx.thread];
  if (level >= t->depth) return -1;
  frame_describe(t, level, f);
  return 0;
}

uint32_t prof__an_range_tid(const prof__an *an) { return ((const an_priv *)an)->range_tid; }

uint32_t prof__an_thread_range(const prof__an *an, size_t ti) {
  const an_priv *p = (const an_priv *)an;
  if (ti >= an->nthreads || !p->ts[ti].depth) return 0;
  return p->ts[ti].frames[p->ts[ti].depth - 1].name;
}

static void model_event(an_priv *p, uint32_t tid, const prof__event *ev) {
  size_t ti = thread_index(p, tid);
  p->ctx.thread = SIZE_MAX;
  p->ctx.has_closed = 0;
  if (ti == SIZE_MAX) return;
  an_thread *t = &p->ts[ti];
  uint64_t ts = prof__an_event_time(&t->last_ts, ev);
  p->pub.threads[ti].events++;
  p->pub.events++;
  if (ts < p->pub.first_ns) p->pub.first_ns = ts;
  if (ts > p->pub.last_ns) p->pub.last_ns = ts;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN: range_begin(p, t, ev, ts); break;
  case PROF_EV_RANGE_END: range_end(p, t, ev->name, ts); break;
  case PROF_EV_STEP_BEGIN: step_begin(p, t, tid, ev->a, ts); break;
  case PROF_EV_STEP_END: step_end(p, t, ev->a, ts); break;
  case PROF_EV_COUNTER: model_counter(p, t, ev, ts); break;
  default: break;
  }
  ctx_set(p, ti);
}

/* ---- key/value records -------------------------------------------------- */

static void kv_add(an_priv *p, prof__kv **arr, size_t *n, size_t *cap, const prof__rec *r) {
  if (grow(p, (void **)arr, cap, *n + 1, sizeof **arr)) return;
  char *k = strdup(r->key ? r->key : ""), *v = strdup(r->value ? r->value : "");
  if (!k || !v) {
    free(k);
    free(v);
    p->oom = 1;
    return;
  }
  (*arr)[*n].key = k;
  (*arr)[*n].value = v;
  (*n)++;
}

/* ---- step summaries (bounded traces) ------------------------------------ */

/* A STEPSUM chunk: its steps join p->sums, its totals the bound's fields.
 * A chunk that does not decode is ignored whole and counted. */
static void model_stepsum(an_priv *p, const uint8_t *data, size_t len) {
  prof__an *an = &p->pub;
  prof__ss_iter it;
  prof__ss_rec r;
  size_t n0 = p->nsums;
  int k = prof__ss_open(&it, data, len);
  while (k >= 0 && (k = prof__ss_next(&it, &r)) == 1) {
    if (grow(p, (void **)&p->sums, &p->sumcap, p->nsums + 1, sizeof *p->sums)) return;
    prof__step *s = &p->sums[p->nsums++];
    memset(s, 0, sizeof *s);
    s->number = r.number;
    s->tid = r.tid;
    s->begin_ns = r.begin_us * 1000;
    s->end_ns = s->begin_ns + r.dur_us * 1000;
    for (int i = 0; i < PROF_BD_COUNT && i < PROF_SS_BUCKETS; i++) s->bd_ns[i] = r.bd_us[i] * 1000;
    s->have = r.have & (PROF_STEP_HAS_CPU | PROF_STEP_HAS_RSS | PROF_STEP_HAS_LIVE);
    s->cpu_ns = r.cpu_us * 1000;
    s->rss_peak_bytes = r.rss_bytes;
    s->live_peak_bytes = r.live_bytes;
    s->warmup_outlier = (int)it.h.level; /* kept here until the merge */
  }
  if (k < 0) {
    p->nsums = n0;
    an->summary_bad_chunks++;
    return;
  }
  if (it.h.max_bytes) an->bound_max_bytes = it.h.max_bytes;
  if (it.h.dropped_bytes > an->bound_dropped_bytes) an->bound_dropped_bytes = it.h.dropped_bytes;
  if (it.h.dropped_chunks > an->bound_dropped_chunks) an->bound_dropped_chunks = it.h.dropped_chunks;
  if (it.h.compactions > an->bound_compactions) an->bound_compactions = it.h.compactions;
}

static int cmp_u64(const void *a, const void *b);
static int cmp_step(const void *a, const void *b);

/* A step kept in detail whose readings fell in dropped chunks (the RSS in
 * effect at its begin, say) takes the missing fields from its summary. */
static void fill_from_summary(prof__step *d, const prof__step *s) {
  unsigned miss = s->have & ~d->have;
  if (miss & PROF_STEP_HAS_CPU) d->cpu_ns = s->cpu_ns;
  if (miss & PROF_STEP_HAS_RSS) d->rss_peak_bytes = s->rss_peak_bytes;
  if (miss & PROF_STEP_HAS_LIVE) d->live_peak_bytes = s->live_peak_bytes;
  d->have |= miss;
}

static int cmp_step_number(const void *a, const void *b) {
  const prof__step *x = a, *y = b;
  return x->number < y->number ? -1 : x->number > y->number;
}

/* run_steps: the window's steps and the summarised steps whose number no
 * step of the window has (a summary of a step kept in detail is a copy). */
static void merge_summaries(an_priv *p) {
  prof__an *an = &p->pub;
  if (!p->nsums) return;
  uint64_t *nums = malloc((an->nsteps + 1) * sizeof *nums);
  an->run_steps = malloc((an->nsteps + p->nsums) * sizeof *an->run_steps);
  if (!nums || !an->run_steps) {
    free(nums);
    free(an->run_steps);
    an->run_steps = NULL;
    p->oom = 1;
    return;
  }
  for (size_t i = 0; i < an->nsteps; i++) nums[i] = an->steps[i].number;
  qsort(nums, an->nsteps, sizeof *nums, cmp_u64);
  size_t n = 0;
  for (size_t i = 0; i < an->nsteps; i++) an->run_steps[n++] = an->steps[i];
  qsort(p->sums, p->nsums, sizeof *p->sums, cmp_step);
  /* the detail steps by number, to complete them from their copies */
  qsort(an->run_steps, n, sizeof *an->run_steps, cmp_step_number);
  for (size_t i = 0; i < p->nsums; i++) {
    prof__step s = p->sums[i];
    if (bsearch(&s.number, nums, an->nsteps, sizeof *nums, cmp_u64)) {
      prof__step *d = bsearch(&s, an->run_steps, an->nsteps, sizeof *an->run_steps, cmp_step_number);
      if (d && d->tid == s.tid) fill_from_summary(d, &s);
      continue;
    }
    if (i && p->sums[i - 1].number == s.number && p->sums[i - 1].begin_ns == s.begin_ns) continue; /* a copy */
    if ((unsigned)s.warmup_outlier > an->summary_level) an->summary_level = (unsigned)s.warmup_outlier;
    s.warmup_outlier = 0;
    an->run_steps[n++] = s;
    an->summary_only_steps++;
  }
  free(nums);
  an->nrun_steps = n;
  qsort(an->run_steps, n, sizeof *an->run_steps, cmp_step);
}

void prof__an_model_record(an_priv *p, const prof__rec *r) {
  prof__an *an = &p->pub;
  if (r->kind != PROF_REC_EVENT) {
    p->ctx.thread = SIZE_MAX;
    p->ctx.has_closed = 0;
  }
  switch (r->kind) {
  case PROF_REC_EVENT:
    if (r->ev.type == PROF_EV_RANGE_BEGIN || r->ev.type == PROF_EV_RANGE_END) p->range_tid = r->tid;
    model_event(p, r->tid, &r->ev);
    break;
  case PROF_REC_STRING: model_string(p, r->id, r->str, r->len); break;
  case PROF_REC_THREAD: model_thread(p, r); break;
  case PROF_REC_META:
    kv_add(p, &p->meta, &an->meta_count, &p->meta_cap, r);
    an->meta = p->meta;
    break;
  case PROF_REC_FOOTER:
    kv_add(p, &p->footer, &an->footer_count, &p->footer_cap, r);
    an->footer = p->footer;
    break;
  case PROF_REC_CHUNK:
    if (r->chunk_type == PROF_CHUNK_STEPSUM) model_stepsum(p, r->data, r->len);
    break;
  default: break;
  }
}

void prof__an_model_events(an_priv *p, const prof__tev *ev, size_t n, const prof__an_dispatch *d) {
  prof__rec rec = {.kind = PROF_REC_EVENT};
  for (size_t i = 0; i < n; i++) {
    rec.tid = ev[i].tid, rec.ev = ev[i].ev;
    if (rec.ev.type == PROF_EV_RANGE_BEGIN || rec.ev.type == PROF_EV_RANGE_END) p->range_tid = rec.tid;
    model_event(p, rec.tid, &rec.ev);
    const prof__an_hooks *l = &d->by_type[rec.ev.type & 63];
    for (unsigned k = 0; k < l->n; k++) d->fn[l->idx[k]](&p->pub, d->st[l->idx[k]], &rec);
  }
}

/* ---- finish ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_step(const void *a, const void *b) {
  const prof__step *x = a, *y = b;
  if (x->begin_ns != y->begin_ns) return x->begin_ns < y->begin_ns ? -1 : 1;
  return x->number < y->number ? -1 : x->number > y->number;
}

static void close_open_state(an_priv *p) {
  for (size_t i = 0; i < p->pub.nthreads; i++) {
    an_thread *t = &p->ts[i];
    if (t->step >= 0) { /* never ended: dropped below */
      attribute(p, t, t->last_ts);
      t->step = -1;
    }
    p->pub.unclosed_ranges += t->depth;
    while (t->depth) frame_close(p, t, t->last_ts);
  }
}

void prof__an_model_finish(an_priv *p) {
  prof__an *an = &p->pub;
  close_open_state(p);
  size_t n = 0;
  for (size_t i = 0; i < an->nsteps; i++) {
    if (an->steps[i].end_ns == UINT64_MAX) {
      an->unfinished_steps++;
      if (an->unfinished_steps == 1 || an->steps[i].begin_ns >= an->unfinished_last_open_ns) {
        an->unfinished_last_number = an->steps[i].number;
        an->unfinished_last_open_ns = an->steps[i].begin_ns; /* made a duration below */
      }
    } else {
      an->steps[n++] = an->steps[i];
    }
  }
  an->nsteps = n;
  if (an->unfinished_steps) {
    uint64_t b = an->unfinished_last_open_ns;
    an->unfinished_last_open_ns = an->last_ns > b ? an->last_ns - b : 0;
  }
  int sorted = 1; /* usually already in order: skip the sort */
  for (size_t i = 1; i < n && sorted; i++) sorted = cmp_step(&an->steps[i - 1], &an->steps[i]) <= 0;
  if (!sorted) qsort(an->steps, n, sizeof *an->steps, cmp_step);
  for (size_t i = 0; i < an->nranges; i++)
    if (!an->ranges[i].count) an->ranges[i].min_ns = 0;
  if (an->first_ns == UINT64_MAX) an->first_ns = 0;
  for (size_t i = 0; i < n; i++) {
    size_t ti = prof__an_thread_index(an, an->steps[i].tid);
    if (ti != SIZE_MAX) an->threads[ti].steps++;
  }
  uint64_t lost = 0;
  for (size_t i = 0; i < an->nthreads; i++) lost += an->threads[i].lost;
  uint64_t flost = prof__an_footer_u64(an, "events_lost");
  an->lost_events = lost > flost ? lost : flost;
  an->misuse = prof__an_footer_u64(an, "misuse");
  step_memory(p);
  merge_summaries(p);
  prof__an_flag_warmup(p);
  size_t ns;
  const prof__step *steps = prof__an_all_steps(an, &ns);
  prof__an_step_stats(p, &an->step_stats, SIZE_MAX);
  prof__an_step_stats(p, &an->steady_stats, ns && steps[0].warmup_outlier ? 0 : SIZE_MAX);
}

void prof__an_model_free(an_priv *p) {
  prof__an *an = &p->pub;
  for (uint32_t i = 0; i < an->nstrings; i++) free(an->strings[i]);
  free(an->strings);
  for (size_t i = 0; i < p->nbig; i++) free(p->big_strs[i]);
  free(p->big_strs);
  for (size_t i = 0; i < an->nthreads; i++) {
    free(an->threads[i].name);
    free(p->ts[i].frames);
  }
  free(an->threads);
  free(p->ts);
  free(an->steps);
  free(an->run_steps);
  free(p->sums);
  free(p->step_cpu0);
  free(p->rss.ts);
  free(p->rss.v);
  free(p->live.ts);
  free(p->live.v);
  free(an->ranges);
  free(p->rnext);
  free(p->rhead);
  prof__map32_free(&p->rhead_big);
  prof__map32_free(&p->str_big);
  prof__map32_free(&p->tid_map);
  prof__u64map_free(&p->open_steps);
  for (size_t i = 0; i < an->footer_count; i++) {
    free((char *)p->footer[i].key);
    free((char *)p->footer[i].value);
  }
  for (size_t i = 0; i < an->meta_count; i++) {
    free((char *)p->meta[i].key);
    free((char *)p->meta[i].value);
  }
  free(p->footer);
  free(p->meta);
}
