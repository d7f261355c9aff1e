/* rec_hist.c — the one-pass tensor summary behind prof_histogram(), and the
 * record codec of PROF_CHUNK_HIST chunks (see hist.h).
 *
 * The pass reads each float once: its exponent bits pick the magnitude
 * bucket, and the moments are accumulated around the first value (shifted
 * sums keep the variance accurate when the mean is large). Four independent
 * lanes break the dependency chains. A tensor holding NaN or Inf takes a
 * second, careful pass that leaves the non-finite values out of the
 * moments: that is the rare, broken case, so only it pays.
 */
#include <math.h>
#include <string.h>

#include "rec_hist.h"

#define LANES 4
#define BLOCK (1u << 28) /* elements per block: keeps the u32 lane counts from overflowing */

typedef struct lane_acc {
  double s1[LANES], s2[LANES];
  float mn[LANES], mx[LANES];
  uint64_t zeros;
} lane_acc;

static inline uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The fast pass over one block: exponent counts, zeros, shifted moments,
 * min and max. NaN/Inf values pollute the moments; the caller checks. */
static void block_pass(const float *v, size_t n, double shift, lane_acc *a, uint32_t (*h)[256]) {
  size_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int l = 0; l < LANES; l++) {
      float x = v[i + l];
      uint32_t u = bits_of(x);
      h[l][(u >> 23) & 255]++;
      a->zeros += (u << 1) == 0;
      double d = (double)x - shift;
      a->s1[l] += d;
      a->s2[l] += d * d;
      a->mn[l] = x < a->mn[l] ? x : a->mn[l];
      a->mx[l] = x > a->mx[l] ? x : a->mx[l];
    }
  }
  for (; i < n; i++) {
    float x = v[i];
    uint32_t u = bits_of(x);
    h[0][(u >> 23) & 255]++;
    a->zeros += (u << 1) == 0;
    double d = (double)x - shift;
    a->s1[0] += d;
    a->s2[0] += d * d;
    a->mn[0] = x < a->mn[0] ? x : a->mn[0];
    a->mx[0] = x > a->mx[0] ? x : a->mx[0];
  }
}

/* Moments, min and max over the finite values only (the slow path). */
static void finite_moments(const float *v, size_t n, prof__hsum *o) {
  double shift = 0, s1 = 0, s2 = 0;
  float mn = 0, mx = 0;
  uint64_t fin = 0;
  for (size_t i = 0; i < n; i++) {
    float x = v[i];
    if (isnan(x)) {
      o->nan++;
      continue;
    }
    if (isinf(x)) {
      o->inf++;
      continue;
    }
    if (fin++ == 0) shift = x, mn = mx = x;
    double d = (double)x - shift;
    s1 += d;
    s2 += d * d;
    mn = x < mn ? x : mn;
    mx = x > mx ? x : mx;
  }
  o->min = mn;
  o->max = mx;
  if (!fin) return;
  double m = s1 / (double)fin, var = s2 / (double)fin - m * m;
  o->mean = shift + m;
  o->std = var > 0 ? sqrt(var) : 0;
}

static void fold_exponents(prof__hsum *o, uint64_t *exp_count) {
  /* biased exponent 0: zeros and subnormals; 255: NaN and Inf */
  o->bucket[0] = exp_count[0] - o->zeros;
  for (int e = 1; e < 255; e++) o->bucket[e] = exp_count[e]; /* bucket index e is 2^(e-127) */
}

void prof__rec_hist_summarise(const float *v, size_t n, prof__hsum *o) {
  memset(o, 0, sizeof *o);
  o->count = n;
  if (!v || !n) return;
  uint64_t exp_count[256] = {0};
  lane_acc a;
  memset(&a, 0, sizeof a);
  double shift = v[0];
  for (int l = 0; l < LANES; l++) a.mn[l] = a.mx[l] = v[0];
  for (size_t off = 0; off < n; off += BLOCK) {
    uint32_t h[LANES][256];
    memset(h, 0, sizeof h);
    size_t len = n - off < BLOCK ? n - off : BLOCK;
    block_pass(v + off, len, shift, &a, h);
    for (int e = 0; e < 256; e++)
      for (int l = 0; l < LANES; l++) exp_count[e] += h[l][e];
  }
  o->zeros = a.zeros;
  fold_exponents(o, exp_count);
  if (exp_count[255]) {
    finite_moments(v, n, o);
    return;
  }
  double s1 = 0, s2 = 0;
  float mn = a.mn[0], mx = a.mx[0];
  for (int l = 0; l < LANES; l++) {
    s1 += a.s1[l];
    s2 += a.s2[l];
    mn = a.mn[l] < mn ? a.mn[l] : mn;
    mx = a.mx[l] > mx ? a.mx[l] : mx;
  }
  double m = s1 / (double)n, var = s2 / (double)n - m * m;
  o->mean = shift + m;
  o->std = var > 0 ? sqrt(var) : 0;
  o->min = mn;
  o->max = mx;
}

uint64_t prof__rec_hist_dead_units(const float *v, size_t n, size_t units) {
  if (!v || !units || n % units) return 0;
  size_t rows = n / units;
  uint64_t dead = 0;
  for (size_t j = 0; j < units; j++) {
    size_t i = 0;
    while (i < rows && (bits_of(v[i * units + j]) << 1) == 0) i++;
    dead += i == rows;
  }
  return dead;
}

double prof__rec_hist_rms(const prof__hsum *s) {
  return sqrt(s->mean * s->mean + s->std * s->std);
}

/* ---- codec ---------------------------------------------------------------- */

static void put_f64(prof__buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(u >> (8 * i));
  prof__buf_put(b, le, 8);
}

static double cur_f64(prof__cur *c) {
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u |= (uint64_t)prof__cur_u8(c) << (8 * i);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

void prof__rec_hist_encode(prof__buf *b, const prof__hrec *r) {
  const prof__hsum *s = &r->sum;
  prof__buf_varint(b, r->ts_ns);
  prof__buf_varint(b, r->step1);
  prof__buf_varint(b, r->tid);
  prof__buf_varint(b, r->tag);
  prof__buf_u8(b, (uint8_t)(r->kind | (s->units ? 0x80 : 0)));
  prof__buf_varint(b, s->count);
  prof__buf_varint(b, s->zeros);
  prof__buf_varint(b, s->nan);
  prof__buf_varint(b, s->inf);
  put_f64(b, s->min);
  put_f64(b, s->max);
  put_f64(b, s->mean);
  put_f64(b, s->std);
  unsigned nb = 0;
  for (int i = 0; i < PROF_HIST_NB; i++) nb += s->bucket[i] != 0;
  prof__buf_varint(b, nb);
  int prev = -1;
  for (int i = 0; i < PROF_HIST_NB; i++) {
    if (!s->bucket[i]) continue;
    prof__buf_varint(b, (uint64_t)(i - prev - 1)); /* gap since the previous non-empty bucket */
    prof__buf_varint(b, s->bucket[i]);
    prev = i;
  }
  if (s->units) {
    prof__buf_varint(b, s->units);
    prof__buf_varint(b, s->dead_units);
  }
}

int prof__rec_hist_decode(prof__cur *c, prof__hrec *r) {
  if (c->p >= c->end) return 0;
  memset(r, 0, sizeof *r);
  prof__hsum *s = &r->sum;
  r->ts_ns = prof__cur_varint(c);
  r->step1 = prof__cur_varint(c);
  r->tid = (uint32_t)prof__cur_varint(c);
  r->tag = (uint32_t)prof__cur_varint(c);
  int kb = prof__cur_u8(c);
  r->kind = kb & 0x7f;
  s->count = prof__cur_varint(c);
  s->zeros = prof__cur_varint(c);
  s->nan = prof__cur_varint(c);
  s->inf = prof__cur_varint(c);
  s->min = cur_f64(c);
  s->max = cur_f64(c);
  s->mean = cur_f64(c);
  s->std = cur_f64(c);
  uint64_t nb = prof__cur_varint(c);
  if (nb > PROF_HIST_NB || r->kind > 3) return -1;
  int idx = -1;
  for (uint64_t k = 0; k < nb && !c->bad; k++) {
    uint64_t gap = prof__cur_varint(c);
    if (gap >= PROF_HIST_NB || idx + 1 + (int)gap >= PROF_HIST_NB) return -1;
    idx += 1 + (int)gap;
    s->bucket[idx] = prof__cur_varint(c);
  }
  if (kb & 0x80) {
    s->units = prof__cur_varint(c);
    s->dead_units = prof__cur_varint(c);
    if (s->dead_units > s->units) return -1;
  }
  return c->bad ? -1 : 1;
}
