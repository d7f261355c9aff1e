/* rec_stepsum.c — per-step summary records of bounded traces: their codec
 * (rec_stepsum.h, docs/trace-format.md) and the summariser that derives
 * them from the event stream the writer sees.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "event.h"
#include "rec_stepsum.h"
#include "ev_cpuctr.h"
#include "ev_mem.h"

static const unsigned level_sig[PROF_SS_LEVELS] = {0, 7, 5, 3};
static const unsigned level_shift[PROF_SS_LEVELS] = {0, 8, 12, 16};

unsigned prof__ss_level_sig(unsigned level) { return level < PROF_SS_LEVELS ? level_sig[level] : 0; }
unsigned prof__ss_level_shift(unsigned level) { return level < PROF_SS_LEVELS ? level_shift[level] : 0; }

/* v rounded to `sig` significant bits (0: unchanged). */
static uint64_t round_sig(uint64_t v, unsigned sig) {
  if (!sig || v >> sig == 0) return v;
  unsigned len = 64 - (unsigned)__builtin_clzll(v), sh = len - sig;
  uint64_t r = (v >> sh) + ((v >> (sh - 1)) & 1);
  return r << sh;
}

void prof__ss_enc_reset(prof__ss_enc *e, unsigned level) {
  e->b.len = 0;
  e->b.oom = 0;
  e->level = level < PROF_SS_LEVELS ? level : PROF_SS_LEVELS - 1;
  e->n = 0;
  e->tid = 0;
  e->number = UINT64_MAX;
  e->qbegin = 0;
  e->rss = e->live = 0;
}

void prof__ss_enc_free(prof__ss_enc *e) {
  prof__buf_free(&e->b);
  memset(e, 0, sizeof *e);
}

void prof__ss_enc_put(prof__ss_enc *e, const prof__ss_rec *r) {
  if (!e->n) prof__ss_enc_reset(e, e->level);
  unsigned sig = level_sig[e->level], shift = level_shift[e->level];
  uint64_t bd[PROF_SS_BUCKETS];
  uint8_t flags = r->tid != e->tid ? 1 : 0;
  for (int i = 0; i < PROF_SS_BUCKETS; i++) {
    bd[i] = round_sig(r->bd_us[i], sig);
    if (bd[i]) flags |= (uint8_t)(2u << i);
  }
  unsigned ext = r->have & PROF_SS_HAS_ALL;
  if (ext) flags |= 0x80;
  uint64_t q = r->begin_us >> shift;
  prof__buf_u8(&e->b, flags);
  if (ext) prof__buf_u8(&e->b, (uint8_t)ext);
  if (flags & 1) prof__buf_varint(&e->b, r->tid);
  prof__buf_svarint(&e->b, (int64_t)(r->number - (e->number + 1)));
  prof__buf_svarint(&e->b, (int64_t)(q - e->qbegin));
  uint64_t dur = round_sig(r->dur_us, sig), cpu = round_sig(r->cpu_us, sig);
  uint64_t cpu_max = dur + (r->cpu_us > r->dur_us ? r->cpu_us - r->dur_us : 0);
  prof__buf_varint(&e->b, dur);
  for (int i = 0; i < PROF_SS_BUCKETS; i++)
    if (bd[i]) prof__buf_varint(&e->b, bd[i]);
  /* version 2: CPU time as a length, no further above the (rounded)
   * length of the step than it was above the length (the counter is read
   * just outside the step; microseconds round): rounded apart, 266 us of
   * CPU in a 265 us step gave 268 in 264. Memory as the change from the
   * previous record that had it (a step's peak is mostly its neighbour's). */
  if (ext & PROF_SS_HAS_CPU) prof__buf_varint(&e->b, cpu < cpu_max ? cpu : cpu_max);
  if (ext & PROF_SS_HAS_RSS) {
    uint64_t v = round_sig(r->rss_bytes, sig);
    prof__buf_svarint(&e->b, (int64_t)(v - e->rss));
    e->rss = v;
  }
  if (ext & PROF_SS_HAS_LIVE) {
    uint64_t v = round_sig(r->live_bytes, sig);
    prof__buf_svarint(&e->b, (int64_t)(v - e->live));
    e->live = v;
  }
  e->tid = r->tid;
  e->number = r->number;
  e->qbegin = q;
  e->n++;
}

void prof__ss_payload(prof__buf *out, const prof__ss_enc *e, const prof__ss_hdr *h) {
  prof__buf_u8(out, PROF_SS_VERSION);
  prof__buf_varint(out, e->level);
  prof__buf_varint(out, h->max_bytes);
  prof__buf_varint(out, h->dropped_bytes);
  prof__buf_varint(out, h->dropped_chunks);
  prof__buf_varint(out, h->compactions);
  prof__buf_varint(out, e->n);
  prof__buf_put(out, e->b.p, e->b.len);
}

int prof__ss_open(prof__ss_iter *it, const uint8_t *p, size_t len) {
  memset(it, 0, sizeof *it);
  it->c = (prof__cur){p, p ? p + len : p, 0};
  if (!p) return -1;
  it->version = prof__cur_u8(&it->c);
  if (it->version < 1 || it->version > PROF_SS_VERSION) return -1;
  uint64_t level = prof__cur_varint(&it->c);
  it->h.max_bytes = prof__cur_varint(&it->c);
  it->h.dropped_bytes = prof__cur_varint(&it->c);
  it->h.dropped_chunks = prof__cur_varint(&it->c);
  it->h.compactions = prof__cur_varint(&it->c);
  it->h.count = prof__cur_varint(&it->c);
  /* A record takes at least 4 bytes: a count beyond that is corrupt. */
  if (it->c.bad || level >= PROF_SS_LEVELS || it->h.count > (uint64_t)(it->c.end - it->c.p) / 4) return -1;
  it->h.level = (unsigned)level;
  it->left = it->h.count;
  it->number = UINT64_MAX;
  return 0;
}

int prof__ss_next(prof__ss_iter *it, prof__ss_rec *r) {
  if (!it->left) return it->c.p == it->c.end && !it->c.bad ? 0 : -1;
  memset(r, 0, sizeof *r);
  uint8_t flags = prof__cur_u8(&it->c), ext = 0;
  if (flags & 0x80) { /* version 2: the optional fields' byte follows */
    if (it->version < 2) return -1;
    ext = prof__cur_u8(&it->c);
    if (ext & ~PROF_SS_HAS_ALL) return -1;
  }
  if (flags & 1) {
    uint64_t tid = prof__cur_varint(&it->c);
    if (tid > UINT32_MAX) return -1;
    it->tid = (uint32_t)tid;
  }
  it->number += 1 + (uint64_t)prof__cur_svarint(&it->c);
  it->qbegin += (uint64_t)prof__cur_svarint(&it->c);
  r->tid = it->tid;
  r->number = it->number;
  unsigned shift = level_shift[it->h.level];
  r->begin_us = it->qbegin << shift;
  if (r->begin_us >> shift != it->qbegin) return -1;
  r->dur_us = prof__cur_varint(&it->c);
  for (int i = 0; i < PROF_SS_BUCKETS; i++)
    if (flags & (2u << i)) r->bd_us[i] = prof__cur_varint(&it->c);
  r->have = ext;
  if (ext & PROF_SS_HAS_CPU) r->cpu_us = prof__cur_varint(&it->c);
  if (ext & PROF_SS_HAS_RSS) r->rss_bytes = it->rss += (uint64_t)prof__cur_svarint(&it->c);
  if (ext & PROF_SS_HAS_LIVE) r->live_bytes = it->live += (uint64_t)prof__cur_svarint(&it->c);
  /* Times beyond 2^62 us (146 000 years) and sizes beyond 2^62 bytes are
   * corrupt: sums stay exact. */
  if (it->c.bad || r->begin_us >> 62 || r->dur_us >> 62 || r->cpu_us >> 62 || r->rss_bytes >> 62 ||
      r->live_bytes >> 62)
    return -1;
  it->left--;
  return 1;
}

/* ---- the summariser ------------------------------------------------------ */

int prof__ss_peak(const uint64_t *ts, const double *v, size_t n, uint64_t b, uint64_t e, double *peak) {
  /* first reading after b */
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ts[mid] <= b) lo = mid + 1;
    else hi = mid;
  }
  int known = 0;
  double m = 0;
  if (lo > 0) {
    m = v[lo - 1];
    known = 1;
  }
  for (size_t i = lo; i < n && ts[i] <= e; i++)
    if (!known || v[i] > m) {
      m = v[i];
      known = 1;
    }
  if (!known && lo < n && lo == 0) { /* a step before the first reading: the first reading */
    m = v[0];
    known = 1;
  }
  if (known) *peak = m;
  return known;
}

void prof__ss_name(prof__ss_state *s, uint32_t id, const char *str, size_t len) {
  static const char *const names[3] = {PROF_CPUCTR_CPU_NS, PROF_MEM_COUNTER_RSS, PROF_MEM_COUNTER_LIVE};
  uint32_t *ids[3] = {&s->id_cpu, &s->id_rss, &s->id_live};
  for (int i = 0; i < 3; i++)
    if (str && len == strlen(names[i]) && memcmp(str, names[i], len) == 0) *ids[i] = id;
}

void prof__ss_free(prof__ss_state *s) {
  free(s->rss.ts);
  free(s->rss.v);
  free(s->live.ts);
  free(s->live.v);
  free(s->held);
  s->rss = s->live = (prof__ss_series){0};
  s->held = NULL;
  s->nheld = s->held_cap = s->held_head = 0;
}

static void series_add(prof__ss_state *s, prof__ss_series *q, uint64_t ts, double v) {
  if (q->n && ts < q->ts[q->n - 1]) ts = q->ts[q->n - 1]; /* one writer thread: in order */
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    uint64_t *t = realloc(q->ts, cap * sizeof *t);
    if (t) q->ts = t;
    double *w = t ? realloc(q->v, cap * sizeof *w) : NULL;
    if (w) q->v = w;
    if (!t || !w) {
      s->oom = 1;
      return;
    }
    q->cap = cap;
  }
  q->ts[q->n] = ts;
  q->v[q->n++] = v;
}

/* Drop readings before `from`, but the one in effect at it and the last
 * few (a step whose STEP_BEGIN is still in its thread's ring may have
 * begun before the newest reading). */
static void series_trim(prof__ss_series *q, uint64_t from) {
  size_t k = 0;
  while (k + 1 < q->n && q->ts[k + 1] <= from && k + 4 < q->n) k++;
  if (!k) return;
  memmove(q->ts, q->ts + k, (q->n - k) * sizeof *q->ts);
  memmove(q->v, q->v + k, (q->n - k) * sizeof *q->v);
  q->n -= k;
}

static prof__ss_held *held_at(prof__ss_state *s, size_t i) { return &s->held[(s->held_head + i) % s->held_cap]; }

static prof__ss_held *hold(prof__ss_state *s) {
  if (s->nheld == s->held_cap) {
    size_t cap = s->held_cap ? s->held_cap * 2 : 256;
    prof__ss_held *h = malloc(cap * sizeof *h);
    if (!h) {
      s->oom = 1;
      return NULL;
    }
    for (size_t i = 0; i < s->nheld; i++) h[i] = *held_at(s, i);
    free(s->held);
    s->held = h;
    s->held_head = 0;
    s->held_cap = cap;
  }
  prof__ss_held *h = held_at(s, s->nheld++);
  memset(h, 0, sizeof *h);
  return h;
}

/* The memory fields of a held step, from the readings in. */
static void mem_fields(prof__ss_state *s, prof__ss_held *h) {
  double v;
  if (prof__ss_peak(s->rss.ts, s->rss.v, s->rss.n, h->begin_ns, h->end_ns, &v) && v >= 0) {
    h->r.have |= PROF_SS_HAS_RSS;
    h->r.rss_bytes = (uint64_t)(v + 0.5);
  }
  if (prof__ss_peak(s->live.ts, s->live.v, s->live.n, h->begin_ns, h->end_ns, &v) && v >= 0) {
    h->r.have |= PROF_SS_HAS_LIVE;
    h->r.live_bytes = (uint64_t)(v + 0.5);
  }
}

/* A series' readings cover a step once one was taken at or after its end. */
static int covered(const prof__ss_series *q, uint64_t end) { return q->n && q->ts[q->n - 1] >= end; }

/* The memory readings of a step are in once the writer's memory hook ran
 * after its end (it writes every series it records at once: one covering
 * it is enough); when none was ever written two writer cycles after it,
 * memory is not recorded (the hook writes in every cycle). */
static int mem_in(const prof__ss_state *s, const prof__ss_held *h) {
  if (covered(&s->rss, h->end_ns) || covered(&s->live, h->end_ns)) return 1;
  return !s->rss.n && !s->live.n && s->cycles >= h->cycle + PROF_SS_NOMEM_CYCLES;
}

void prof__ss_cycle(prof__ss_state *s) { s->cycles++; }

void prof__ss_settle(prof__ss_state *s, int force, prof__ss_emit emit, void *arg) {
  while (s->nheld) {
    prof__ss_held *h = held_at(s, 0);
    /* a series not recorded (or no longer) holds a step PROF_SS_WAIT_NS at most */
    int late = s->cycles ? s->cycles >= h->cycle + PROF_SS_WAIT_CYCLES
                         : s->now > h->end_ns && s->now - h->end_ns > PROF_SS_WAIT_NS;
    int ready = late || (!h->cpu_wait && mem_in(s, h));
    if (!ready && !force && s->nheld <= PROF_SS_PEND_MAX) break;
    mem_fields(s, h);
    for (int i = 0; h->cpu_wait && i < s->nt; i++)
      if (s->t[i].cpu_wait == s->held_seq + 1) s->t[i].cpu_wait = 0; /* its end value is no longer awaited */
    prof__ss_rec r = h->r;
    s->held_head = (s->held_head + 1) % s->held_cap;
    s->nheld--;
    s->held_seq++;
    s->steps++;
    emit(arg, &r);
  }
  /* Readings are kept back to the oldest step still held or open. */
  uint64_t from = UINT64_MAX;
  for (size_t i = 0; i < s->nheld; i++)
    if (held_at(s, i)->begin_ns < from) from = held_at(s, i)->begin_ns;
  for (int i = 0; i < s->nt; i++)
    if (s->t[i].open && s->t[i].begin < from) from = s->t[i].begin;
  series_trim(&s->rss, from);
  series_trim(&s->live, from);
}

static prof__ss_thread *ss_thread(prof__ss_state *s, uint32_t tid) {
  if (s->last < s->nt && s->t[s->last].tid == tid) return &s->t[s->last];
  for (int i = 0; i < s->nt; i++)
    if (s->t[i].tid == tid) return &s->t[s->last = i];
  if (s->nt == PROF_SS_THREADS) return NULL;
  prof__ss_thread *t = &s->t[s->nt];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  s->last = s->nt++;
  return t;
}

/* The step time since t->attr goes to the innermost open range's bucket, or
 * to "untracked" (5) outside ranges: the analyzer's rule. */
static void attribute(prof__ss_thread *t, uint64_t ts) {
  if (!t->open || ts <= t->attr) return;
  t->bd[t->depth ? t->stack[t->depth - 1] : PROF_SS_BUCKETS - 1] += ts - t->attr;
  t->attr = ts;
}

static void step_end(prof__ss_state *s, prof__ss_thread *t, uint64_t number, uint64_t ts) {
  prof__ss_thread *o = t && t->open && t->number == number ? t : NULL;
  for (int i = 0; !o && i < s->nt; i++)
    if (s->t[i].open && s->t[i].number == number) o = &s->t[i];
  if (!o) return;
  attribute(o, ts);
  prof__ss_held *h = hold(s);
  o->open = 0;
  if (!h) return;
  /* Microseconds rounded to the nearest: no bias in sums over many steps. */
  uint64_t b_us = (o->begin + 500) / 1000, e_us = (ts + 500) / 1000;
  h->r = (prof__ss_rec){.number = number, .tid = o->tid, .begin_us = b_us, .dur_us = e_us > b_us ? e_us - b_us : 0};
  for (int i = 0; i < PROF_SS_BUCKETS; i++) h->r.bd_us[i] = (o->bd[i] + 500) / 1000;
  h->begin_ns = o->begin;
  h->end_ns = ts;
  h->cycle = s->cycles;
  /* the CPU clock's end value follows STEP_END on the same thread */
  if (o == t && o->cpu_begun) {
    h->cpu_wait = 1;
    h->cpu_begin = o->cpu_begin;
    o->cpu_wait = s->held_seq + s->nheld; /* this step's sequence number + 1 */
  }
  o->cpu_begun = 0;
}

/* A boundary reading of the thread's CPU clock: the end of the step it
 * waits for, else the begin of its next step. */
static void cpu_reading(prof__ss_state *s, prof__ss_thread *t, double v) {
  if (t->cpu_wait) {
    uint64_t seq = t->cpu_wait - 1;
    t->cpu_wait = 0;
    if (seq >= s->held_seq && seq - s->held_seq < s->nheld) {
      prof__ss_held *h = held_at(s, (size_t)(seq - s->held_seq));
      if (h->cpu_wait && v >= h->cpu_begin) {
        /* at most the step's length: the readings around it also count the
         * profiler's own step hooks */
        double c = v - h->cpu_begin, len = (double)(h->end_ns - h->begin_ns);
        h->r.have |= PROF_SS_HAS_CPU;
        h->r.cpu_us = (uint64_t)((c < len ? c : len) / 1000 + 0.5);
      }
      h->cpu_wait = 0;
    }
    return;
  }
  t->cpu_have = 1;
  t->cpu_v = v;
}

void prof__ss_observe(prof__ss_state *s, uint32_t tid, const prof__event *ev, size_t n, prof__ss_emit emit,
                      void *arg) {
  prof__ss_thread *t = NULL;
  for (size_t i = 0; i < n; i++) {
    const prof__event *e = &ev[i];
    if (e->ts > s->now) s->now = e->ts;
    if (e->type == PROF_EV_COUNTER) {
      if (!e->name) continue;
      if (e->name == s->id_rss) series_add(s, &s->rss, e->ts, prof__bits_f64(e->a));
      else if (e->name == s->id_live) series_add(s, &s->live, e->ts, prof__bits_f64(e->a));
      else if (e->name == s->id_cpu && (e->cat & PROF_CPUCTR_CAT_BOUNDARY)) {
        if (!t) t = ss_thread(s, tid);
        if (t) cpu_reading(s, t, prof__bits_f64(e->a));
      }
      continue;
    }
    if (e->type < PROF_EV_RANGE_BEGIN || e->type > PROF_EV_STEP_END || e->type == PROF_EV_MARK) continue;
    if (!t) t = ss_thread(s, tid);
    if (!t && e->type != PROF_EV_STEP_END) continue;
    switch (e->type) {
    case PROF_EV_RANGE_BEGIN:
      attribute(t, e->ts);
      if (t->depth < PROF_SS_DEPTH) t->stack[t->depth++] = (uint8_t)(e->cat < PROF_CAT_COUNT ? e->cat : PROF_CAT_OTHER);
      else t->over++;
      break;
    case PROF_EV_RANGE_END:
      attribute(t, e->ts);
      if (t->over) t->over--;
      else if (t->depth) t->depth--;
      break;
    case PROF_EV_STEP_BEGIN:
      t->open = 1; /* an open step whose END was lost is dropped, as the analyzer does */
      t->number = e->a;
      t->begin = t->attr = e->ts;
      memset(t->bd, 0, sizeof t->bd);
      t->cpu_begun = t->cpu_have;
      t->cpu_begin = t->cpu_v;
      t->cpu_have = 0;
      t->cpu_wait = 0;
      break;
    case PROF_EV_STEP_END: step_end(s, t, e->a, e->ts); break;
    }
  }
  /* Steps held past the limit go out now (with what is known). */
  if (s->nheld > PROF_SS_PEND_MAX) prof__ss_settle(s, 0, emit, arg);
}
