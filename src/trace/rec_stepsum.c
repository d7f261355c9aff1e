/* rec_stepsum.c — per-step summary records of bounded traces: their codec
 * (rec_stepsum.h, docs/trace-format.md) and the summariser that derives
 * them from the event stream the writer sees.
 */
#include <string.h>

#include "mlprof.h"
#include "event.h"
#include "rec_stepsum.h"

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
  uint64_t q = r->begin_us >> shift;
  prof__buf_u8(&e->b, flags);
  if (flags & 1) prof__buf_varint(&e->b, r->tid);
  prof__buf_svarint(&e->b, (int64_t)(r->number - (e->number + 1)));
  prof__buf_svarint(&e->b, (int64_t)(q - e->qbegin));
  prof__buf_varint(&e->b, round_sig(r->dur_us, sig));
  for (int i = 0; i < PROF_SS_BUCKETS; i++)
    if (bd[i]) prof__buf_varint(&e->b, bd[i]);
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
  if (!p || prof__cur_u8(&it->c) != PROF_SS_VERSION) return -1;
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
  uint8_t flags = prof__cur_u8(&it->c);
  if (flags & 0x80) return -1;
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
  /* Times beyond 2^62 us (146 000 years) are corrupt: sums stay exact. */
  if (it->c.bad || r->begin_us >> 62 || r->dur_us >> 62) return -1;
  it->left--;
  return 1;
}

/* ---- the summariser ------------------------------------------------------ */

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

static void step_end(prof__ss_state *s, prof__ss_thread *t, uint64_t number, uint64_t ts, prof__ss_emit emit,
                     void *arg) {
  prof__ss_thread *o = t && t->open && t->number == number ? t : NULL;
  for (int i = 0; !o && i < s->nt; i++)
    if (s->t[i].open && s->t[i].number == number) o = &s->t[i];
  if (!o) return;
  attribute(o, ts);
  /* Microseconds rounded to the nearest: no bias in sums over many steps. */
  uint64_t b_us = (o->begin + 500) / 1000, e_us = (ts + 500) / 1000;
  prof__ss_rec r = {.number = number, .tid = o->tid, .begin_us = b_us, .dur_us = e_us > b_us ? e_us - b_us : 0};
  for (int i = 0; i < PROF_SS_BUCKETS; i++) r.bd_us[i] = (o->bd[i] + 500) / 1000;
  o->open = 0;
  s->steps++;
  emit(arg, &r);
}

void prof__ss_observe(prof__ss_state *s, uint32_t tid, const prof__event *ev, size_t n, prof__ss_emit emit,
                      void *arg) {
  prof__ss_thread *t = NULL;
  for (size_t i = 0; i < n; i++) {
    const prof__event *e = &ev[i];
    if (e->type < PROF_EV_RANGE_BEGIN || e->type > PROF_EV_STEP_END || e->type == PROF_EV_MARK ||
        e->type == PROF_EV_COUNTER)
      continue;
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
      break;
    case PROF_EV_STEP_END: step_end(s, t, e->a, e->ts, emit, arg); break;
    }
  }
}
