/* sec_memory.c — the "memory" report section, record pass: replays the
 * ALLOC/FREE events (heap and custom pools) into a table of live blocks,
 * per-site statistics, per-step and per-range allocation counts, the heap
 * peak, and keeps the counter tracks written by the memory module
 * (mem.live_bytes, mem.rss_bytes, mem.alloc_calls, mem.alloc_bytes).
 *
 * Sampled ALLOC events (cat bit 0) carry the weight 1 / (1 - exp(-n / R))
 * for a block of n bytes with mean sampling interval R bytes: the unbiased
 * estimate of what the sample stands for. Memory grows with live blocks
 * and call sites, not with events.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/memory/sec_memory.h"
#include "analyze/util/array.h"

#define ORPHAN_KEEP_NS 2000000000ull /* an orphan FREE older than this never matches */
#define ORPHAN_MAX (1u << 20)

const char *const prof__sec_mem_series_names[MS_COUNT] = {PROF_MEM_COUNTER_LIVE, PROF_MEM_COUNTER_RSS,
                                                      PROF_MEM_COUNTER_CALLS, PROF_MEM_COUNTER_BYTES};

/* ---- block map (open addressing, backward-shift deletion) ------------------ */

static size_t blk_home(const mem_blkmap *m, uintptr_t a, uint16_t pool) {
  uint64_t h = ((uint64_t)a ^ ((uint64_t)pool << 56)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & (m->cap - 1);
}

static mem_blk *blk_find(mem_blkmap *m, uintptr_t a, uint16_t pool) {
  if (!m->cap) return NULL;
  for (size_t i = blk_home(m, a, pool);; i = (i + 1) & (m->cap - 1)) {
    if (!m->s[i].addr) return NULL;
    if (m->s[i].addr == a && m->s[i].pool == pool) return &m->s[i];
  }
}

static int blk_grow(mem_blkmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024;
  mem_blk *s = calloc(cap, sizeof *s);
  if (!s) return -1;
  mem_blkmap n = {s, cap, 0};
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->s[i].addr) continue;
    size_t j = blk_home(&n, m->s[i].addr, m->s[i].pool);
    while (s[j].addr) j = (j + 1) & (cap - 1);
    s[j] = m->s[i];
    n.n++;
  }
  free(m->s);
  *m = n;
  return 0;
}

/* Insert (the key must be absent). Returns the slot or NULL (no memory). */
static mem_blk *blk_put(mem_blkmap *m, const mem_blk *b) {
  if ((m->n + 1) * 4 > m->cap * 3 && blk_grow(m)) return NULL;
  size_t i = blk_home(m, b->addr, b->pool);
  while (m->s[i].addr) i = (i + 1) & (m->cap - 1);
  m->s[i] = *b;
  m->n++;
  return &m->s[i];
}

static void blk_del(mem_blkmap *m, mem_blk *e) {
  size_t i = (size_t)(e - m->s), mask = m->cap - 1;
  m->s[i].addr = 0;
  m->n--;
  for (size_t j = (i + 1) & mask; m->s[j].addr; j = (j + 1) & mask) {
    size_t home = blk_home(m, m->s[j].addr, m->s[j].pool);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->s[i] = m->s[j];
      m->s[j].addr = 0;
      i = j;
    }
  }
}

/* ---- index map ------------------------------------------------------------ */

static size_t idx_home(const mem_idxmap *m, uint64_t k) {
  return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
}

static uint32_t idx_get(const mem_idxmap *m, uint64_t k) {
  if (!m->cap) return UINT32_MAX;
  for (size_t i = idx_home(m, k);; i = (i + 1) & (m->cap - 1)) {
    if (!m->k[i]) return UINT32_MAX;
    if (m->k[i] == k) return m->v[i];
  }
}

static int idx_put(mem_idxmap *m, uint64_t k, uint32_t v) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    mem_idxmap n = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint32_t)), cap, 0};
    if (!n.k || !n.v) {
      free(n.k);
      free(n.v);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->k[i]) idx_put(&n, m->k[i], m->v[i]);
    free(m->k);
    free(m->v);
    *m = n;
  }
  size_t i = idx_home(m, k);
  while (m->k[i]) i = (i + 1) & (m->cap - 1);
  m->k[i] = k;
  m->v[i] = v;
  m->n++;
  return 0;
}

/* ---- growable arrays ------------------------------------------------------ */

#define PUSH(st, arr, n, cap)                                                   \
  (prof__arr_grow((void **)&(st)->arr, &(st)->cap, (st)->n + 1, sizeof *(st)->arr) == 0 \
       ? &(st)->arr[(st)->n++]                                                  \
       : ((st)->oom = 1, (void *)0))

/* ---- set-up --------------------------------------------------------------- */

static void state_init(prof__an *an, mem_state *s) {
  s->init = 1;
  s->mode = prof__ev_mem_mode_parse(prof__an_header(an, PROF_MEM_KEY_MODE));
  const char *sb = prof__an_header(an, PROF_MEM_KEY_SAMPLE_BYTES);
  s->sample_bytes = sb ? strtod(sb, NULL) : 0;
  if (!(s->sample_bytes > 0)) s->sample_bytes = 512.0 * 1024;
  for (int i = 0; i < MS_COUNT; i++) s->counter_id[i] = UINT32_MAX;
  snprintf(s->pools[0].name, sizeof s->pools[0].name, "heap");
}

static mem_thr *thread_of(prof__an *an, mem_state *s, uint32_t tid) {
  size_t ti = prof__an_thread_index(an, tid);
  if (ti == SIZE_MAX) return NULL;
  if (prof__arr_grow((void **)&s->thr, &s->thr_cap, ti + 1, sizeof *s->thr)) {
    s->oom = 1;
    return NULL;
  }
  return &s->thr[ti];
}

static uint32_t site_of(mem_state *s, uint32_t stack, uint16_t pool) {
  uint64_t key = ((uint64_t)stack << 16 | pool) + 1;
  uint32_t i = idx_get(&s->site_idx, key);
  if (i != UINT32_MAX) return i;
  mem_site *site = PUSH(s, sites, nsites, sites_cap);
  if (!site) return UINT32_MAX;
  memset(site, 0, sizeof *site);
  site->stack = stack;
  site->pool = pool;
  i = (uint32_t)(s->nsites - 1);
  if (idx_put(&s->site_idx, key, i)) s->oom = 1;
  return i;
}

/* ---- peak of the heap ------------------------------------------------------ */

/* Per-site live bytes are copied at the first decrease after a new peak;
 * with many sites, only when the peak grew by 1 % since the last copy. */
static void snapshot(mem_state *s) {
  for (size_t i = 0; i < s->nsites; i++) s->sites[i].at_peak = s->sites[i].pool ? 0 : s->sites[i].live;
  for (size_t i = 0; i < s->nranges; i++) s->ranges[i].at_peak = s->ranges[i].live;
  s->norange_at_peak = s->norange_live;
  s->snap_value = s->heap_live;
  s->snapped = 1;
  s->peak_pending = 0;
}

static void heap_change(mem_state *s, double delta, uint64_t ts) {
  if (delta < 0 && s->peak_pending &&
      (s->nsites < 4096 || !s->snapped || s->heap_peak > s->snap_value * 1.01))
    snapshot(s);
  s->heap_live += delta;
  if (s->heap_live > s->heap_peak) {
    s->heap_peak = s->heap_live;
    s->heap_peak_ts = ts;
    s->peak_pending = 1;
    s->heap_peak_range = s->cur_range ? s->cur_range + 1 : 0;
  }
}

static void pool_change(mem_state *s, const mem_blk *b, double sign, uint64_t ts) {
  double d = sign * (double)b->size * b->w;
  if (b->pool == PROF_MEM_POOL_HEAP) heap_change(s, d, ts); /* may copy the sites' state first */
  if (b->site < s->nsites) s->sites[b->site].live += d;
  if (b->pool == PROF_MEM_POOL_HEAP) {
    if (b->range && b->range <= s->nranges) s->ranges[b->range - 1].live += d;
    else s->norange_live += d;
    return;
  }
  mem_pool *p = &s->pools[b->pool % PROF_MEM_POOLS];
  p->seen = 1;
  p->live += d;
  if (p->live > p->peak) p->peak = p->live;
}

/* ---- steps and ranges ------------------------------------------------------ */

static mem_step *step_at(mem_state *s, uint64_t ts) {
  for (size_t k = s->nsteps, seen = 0; k > 0 && seen < 8; k--, seen++) {
    mem_step *st = &s->steps[k - 1];
    if (st->begin <= ts && ts <= st->end) return st;
    if (st->end < ts) return NULL;
  }
  return NULL;
}

static void on_step(mem_state *s, const prof__event *ev) {
  if (ev->type == PROF_EV_STEP_BEGIN) {
    mem_step *st = PUSH(s, steps, nsteps, steps_cap);
    if (st) *st = (mem_step){.number = ev->a, .begin = ev->ts, .end = UINT64_MAX};
    return;
  }
  for (size_t k = s->nsteps; k > 0 && k + 8 > s->nsteps; k--) {
    mem_step *st = &s->steps[k - 1];
    if (st->number == ev->a && !st->ended) {
      st->end = ev->ts;
      st->ended = 1;
      st->live_end = s->heap_live;
      return;
    }
  }
}

/* Count an allocation in the innermost range open on the allocating thread
 * (the engine's context: prof__an_ctx); returns the range's index + 1 (0:
 * none). */
static uint32_t range_count(mem_state *s, double calls, double bytes) {
  uint32_t name = s->cur_range;
  if (!name) return 0;
  uint32_t i = idx_get(&s->range_idx, (uint64_t)name + 1);
  if (i == UINT32_MAX) {
    mem_range *r = PUSH(s, ranges, nranges, ranges_cap);
    if (!r) return 0;
    *r = (mem_range){.name = name};
    i = (uint32_t)(s->nranges - 1);
    if (idx_put(&s->range_idx, (uint64_t)name + 1, i)) s->oom = 1;
  }
  s->ranges[i].allocs += calls;
  s->ranges[i].bytes += bytes;
  return i + 1;
}

/* ---- ALLOC / FREE ---------------------------------------------------------- */

static double weight(const mem_state *s, const prof__event *ev) {
  if (!prof__ev_mem_sampled(ev) || ev->b == 0) return 1.0;
  double p = -expm1(-(double)ev->b / s->sample_bytes);
  return p > 0 ? 1.0 / p : 1.0;
}

static void free_block(mem_state *s, mem_blk *b, uint64_t ts) {
  pool_change(s, b, -1.0, ts);
  blk_del(&s->live, b);
}

/* An orphan FREE of this address after the ALLOC's time frees it now. The
 * same address may have several orphans (freed, reused, freed again): the
 * earliest FREE at or after the ALLOC is the one that belongs to it. */
static int orphan_match(mem_state *s, const prof__event *ev) {
  mem_blkmap *m = &s->orphans;
  mem_blk *best = NULL;
  for (size_t i = blk_home(m, (uintptr_t)ev->a, ev->aux); m->s[i].addr; i = (i + 1) & (m->cap - 1)) {
    mem_blk *o = &m->s[i];
    if (o->addr == (uintptr_t)ev->a && o->pool == ev->aux && o->size >= ev->ts && (!best || o->size < best->size))
      best = o;
  }
  if (!best) return 0;
  blk_del(m, best);
  s->unmatched_frees--;
  return 1;
}

static void on_alloc(mem_state *s, mem_thr *t, const prof__event *ev) {
  double w = weight(s, ev), bytes = (double)ev->b * w;
  s->nalloc_events++;
  uint32_t si = site_of(s, ev->name, ev->aux);
  if (si == UINT32_MAX) return;
  mem_site *site = &s->sites[si];
  site->calls += w;
  site->bytes += bytes;
  if (ev->aux == PROF_MEM_POOL_HEAP) {
    s->allocs += w;
    s->bytes += bytes;
  } else {
    s->pools[ev->aux % PROF_MEM_POOLS].allocs += w;
    s->pools[ev->aux % PROF_MEM_POOLS].bytes += bytes;
  }
  mem_step *st = step_at(s, ev->ts);
  if (st && ev->aux == PROF_MEM_POOL_HEAP) {
    st->allocs += w;
    st->bytes += bytes;
  }
  uint32_t range = ev->aux == PROF_MEM_POOL_HEAP ? range_count(s, w, bytes) : 0;
  if (s->orphans.n && orphan_match(s, ev)) return; /* allocated and already freed */
  mem_blk *old = blk_find(&s->live, (uintptr_t)ev->a, ev->aux);
  if (old) { /* its FREE was lost: forget the old block */
    s->replaced++;
    free_block(s, old, ev->ts);
  }
  mem_blk b = {(uintptr_t)ev->a, ev->b, w, si, ev->aux, s->nsteps == 0, range};
  if (!blk_put(&s->live, &b)) {
    s->oom = 1;
    return;
  }
  pool_change(s, &b, 1.0, ev->ts);
  t->last_addr = b.addr;
  t->last_pool = b.pool;
  t->last_valid = 1;
}

static void purge_orphans(mem_state *s, uint64_t now) {
  for (size_t i = 0; i < s->orphans.cap;) {
    mem_blk *o = &s->orphans.s[i];
    if (o->addr && o->size + ORPHAN_KEEP_NS < now) blk_del(&s->orphans, o); /* slot i refilled */
    else i++;
  }
}

static void on_free(mem_state *s, mem_thr *t, const prof__event *ev) {
  s->nfree_events++;
  mem_blk *b = blk_find(&s->live, (uintptr_t)ev->a, ev->aux);
  if (!b) {
    s->unmatched_frees++;
    if (s->orphans.n < ORPHAN_MAX) {
      mem_blk o = {(uintptr_t)ev->a, ev->ts, 0, 0, ev->aux, 0, 0};
      if (!blk_put(&s->orphans, &o)) s->oom = 1;
    }
    return;
  }
  if (b->pool == PROF_MEM_POOL_HEAP) s->frees += b->w;
  if (t->last_valid && t->last_addr == b->addr && t->last_pool == b->pool && b->site < s->nsites) {
    s->sites[b->site].temp_calls += b->w;
    s->sites[b->site].temp_bytes += (double)b->size * b->w;
  }
  t->last_valid = 0;
  free_block(s, b, ev->ts);
}

/* ---- counters and META ----------------------------------------------------- */

static void on_counter(prof__an *an, mem_state *s, const prof__event *ev) {
  int k = -1;
  for (int i = 0; i < MS_COUNT; i++)
    if (s->counter_id[i] == ev->name) k = i;
  if (k < 0) {
    const char *name = prof__an_str(an, ev->name);
    if (strncmp(name, PROF_MEM_COUNTER_PREFIX, strlen(PROF_MEM_COUNTER_PREFIX)) != 0) return;
    for (int i = 0; i < MS_COUNT; i++)
      if (strcmp(name, prof__sec_mem_series_names[i]) == 0) s->counter_id[k = i] = ev->name;
    if (k < 0) return;
  }
  mem_series *ser = &s->series[k];
  if (ser->n == ser->cap) {
    size_t cap = ser->cap ? ser->cap * 2 : 256;
    uint64_t *ts = realloc(ser->ts, cap * sizeof *ts);
    if (ts) ser->ts = ts;
    double *v = ts ? realloc(ser->v, cap * sizeof *v) : NULL;
    if (v) ser->v = v;
    if (!ts || !v) {
      s->oom = 1;
      return;
    }
    ser->cap = cap;
  }
  ser->ts[ser->n] = ev->ts;
  ser->v[ser->n++] = prof__bits_f64(ev->a);
  if (k == MS_LIVE && (ser->n == 1 || prof__bits_f64(ev->a) > s->live_peak_seen)) {
    s->live_peak_seen = prof__bits_f64(ev->a);
    uint32_t rtid = prof__an_range_tid(an); /* the thread whose ranges a live-memory reading is put in */
    uint32_t r = rtid ? prof__an_thread_range(an, prof__an_thread_index(an, rtid)) : 0;
    s->live_peak_range = r ? r + 1 : 0;
  }
  s->any = 1;
}

static void on_meta(mem_state *s, const prof__rec *rec) {
  double v = strtod(rec->value, NULL);
  if (!(v >= 0 && v < 1e18)) v = 0;
  if (strcmp(rec->key, PROF_MEM_META_START_LIVE) == 0) s->start_live = v, s->start_known = 1;
  else if (strcmp(rec->key, PROF_MEM_META_START_BLOCKS) == 0) s->start_blocks = v;
  else if (strcmp(rec->key, PROF_MEM_META_START_LISTED) == 0) s->start_listed = v;
  else if (strcmp(rec->key, PROF_MEM_META_START_UNLISTED) == 0) s->start_unlisted = v;
  if (strncmp(rec->key, "mem.pool.", 9) != 0) return;
  long id = strtol(rec->key + 9, NULL, 10);
  if (id >= 1 && id < PROF_MEM_POOLS) snprintf(s->pools[id].name, sizeof s->pools[id].name, "%s", rec->value);
}

static void mem_record(prof__an *an, void *stp, const prof__rec *rec) {
  mem_state *s = stp;
  if (!s->init) state_init(an, s);
  if (rec->kind == PROF_REC_META) {
    on_meta(s, rec);
    return;
  }
  if (rec->kind != PROF_REC_EVENT) return;
  const prof__event *ev = &rec->ev;
  switch (ev->type) {
  case PROF_EV_ALLOC:
  case PROF_EV_FREE: {
    mem_thr *t = thread_of(an, s, rec->tid);
    if (!t) return;
    s->any = 1;
    s->cur_range = prof__an_ctx(an)->range;
    if (ev->type == PROF_EV_ALLOC) on_alloc(s, t, ev);
    else on_free(s, t, ev);
    s->cur_range = 0;
    if ((++s->events_seen & 0xffff) == 0 && s->orphans.n) purge_orphans(s, ev->ts);
    break;
  }
  case PROF_EV_COUNTER: on_counter(an, s, ev); break;
  case PROF_EV_STEP_BEGIN:
  case PROF_EV_STEP_END: on_step(s, ev); break;
  default: break;
  }
}

static void mem_destroy(prof__an *an, void *stp) {
  (void)an;
  mem_state *s = stp;
  free(s->live.s);
  free(s->orphans.s);
  free(s->site_idx.k);
  free(s->site_idx.v);
  free(s->range_idx.k);
  free(s->range_idx.v);
  free(s->sites);
  free(s->thr);
  free(s->steps);
  free(s->by_number);
  free(s->ranges);
  free(s->leak_order);
  free(s->kept_order);
  for (int i = 0; i < MS_COUNT; i++) {
    free(s->series[i].ts);
    free(s->series[i].v);
  }
}

const prof__section prof__sec_memory = {
    .name = "memory",
    .state_size = sizeof(mem_state),
    .record = mem_record,
    .finish = prof__sec_mem_finish,
    .text = prof__sec_mem_text,
    .json = prof__sec_mem_json,
    .html = prof__sec_mem_html,
    .destroy = mem_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_ALLOC) | PROF_EVMASK(PROF_EV_FREE) | PROF_EVMASK(PROF_EV_COUNTER) |
                  PROF_EVMASK(PROF_EV_STEP_BEGIN) | PROF_EVMASK(PROF_EV_STEP_END),
};
