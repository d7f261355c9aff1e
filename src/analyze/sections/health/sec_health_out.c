/* sec_health_out.c — the "model" section's JSON ("model": scalars and
 * tensor summaries over the run, thinned to SERIES_MAX points) and text
 * output (a sparkline per metric, the last summary per tensor).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/health/sec_health.h"
#include "analyze/util/termsafe.h"

/* ---- reports ---------------------------------------------------------------- */

const char *prof__sec_health_kind_name(int k) {
  static const char *const n[] = {"weight", "gradient", "activation", "other"};
  return k >= 0 && k <= 3 ? n[k] : "other";
}

static const char *split_of(const char *tag) { return prof__sec_health_val_metric(tag) ? "val" : "train"; }

/* A stride so that a series of n points prints at most SERIES_MAX. */
static size_t stride(size_t n) { return n <= SERIES_MAX ? 1 : (n + SERIES_MAX - 1) / SERIES_MAX; }

static void json_scalar(prof__an *an, prof__json *j, const stag *s) {
  double mn = INFINITY, mx = -INFINITY;
  uint64_t bad = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!isfinite(s->p[i].v)) {
      bad++;
      continue;
    }
    mn = s->p[i].v < mn ? s->p[i].v : mn;
    mx = s->p[i].v > mx ? s->p[i].v : mx;
  }
  const char *tag = prof__an_str(an, s->id);
  prof__json_obj_begin(j);
  prof__json_kstr(j, "tag", tag);
  prof__json_kstr(j, "split", split_of(tag));
  prof__json_kuint(j, "count", s->n);
  prof__json_kuint(j, "non_finite", bad);
  prof__json_knum(j, "first", s->p[0].v);
  prof__json_knum(j, "last", s->p[s->n - 1].v);
  prof__json_knum(j, "min", mn);
  prof__json_knum(j, "max", mx);
  prof__json_key(j, "points"); /* [step, value]; value null when not finite */
  prof__json_arr_begin(j);
  size_t k = stride(s->n);
  for (size_t i = 0; i < s->n; i += k) {
    prof__json_arr_begin(j);
    prof__json_int(j, s->p[i].step1 ? (int64_t)(s->p[i].step1 - 1) : -1);
    prof__json_num(j, s->p[i].v);
    prof__json_arr_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void json_summary(prof__json *j, const prof__hsum *s) {
  prof__json_obj_begin(j);
  prof__json_kuint(j, "count", s->count);
  prof__json_knum(j, "min", s->min);
  prof__json_knum(j, "max", s->max);
  prof__json_knum(j, "mean", s->mean);
  prof__json_knum(j, "std", s->std);
  prof__json_knum(j, "rms", prof__rec_hist_rms(s));
  prof__json_kuint(j, "zeros", s->zeros);
  prof__json_kuint(j, "nan", s->nan);
  prof__json_kuint(j, "inf", s->inf);
  if (s->units) { /* prof_histogram_units() */
    prof__json_kuint(j, "units", s->units);
    prof__json_kuint(j, "dead_units", s->dead_units);
  }
  prof__json_key(j, "buckets"); /* [e, count]: |x| in [2^e, 2^(e+1)) */
  prof__json_arr_begin(j);
  for (int i = 0; i < PROF_HIST_NB; i++) {
    if (!s->bucket[i]) continue;
    prof__json_arr_begin(j);
    prof__json_int(j, i + PROF_HIST_EMIN);
    prof__json_uint(j, s->bucket[i]);
    prof__json_arr_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void json_hist(prof__an *an, prof__json *j, const htag *h) {
  prof__json_obj_begin(j);
  prof__json_kstr(j, "tag", prof__an_str(an, h->id));
  prof__json_kstr(j, "kind", prof__sec_health_kind_name(h->kind));
  prof__json_kuint(j, "records", h->n);
  prof__json_key(j, "last");
  json_summary(j, &h->last);
  prof__json_key(j, "series"); /* [step, rms, zero_share, min, max, mean, std, nan+inf] */
  prof__json_arr_begin(j);
  size_t k = stride(h->n);
  for (size_t i = 0; i < h->n; i += k) {
    const hrow *r = &h->r[i];
    prof__json_arr_begin(j);
    prof__json_int(j, r->step1 ? (int64_t)(r->step1 - 1) : -1);
    prof__json_num(j, r->rms);
    prof__json_num(j, r->count ? (double)r->zeros / (double)r->count : 0);
    prof__json_num(j, r->min);
    prof__json_num(j, r->max);
    prof__json_num(j, r->mean);
    prof__json_num(j, r->std);
    prof__json_uint(j, r->nan + r->inf);
    prof__json_arr_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

void prof__sec_health_json(prof__an *an, void *vst, prof__json *j) {
  model_st *st = vst;
  if (!st->ns && !st->nh) return;
  prof__json_key(j, "model");
  prof__json_obj_begin(j);
  prof__json_key(j, "health");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < st->nf; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "id", st->f[i].id);
    prof__json_kstr(j, "tag", st->f[i].tag);
    prof__json_kstr(j, "tensor", st->f[i].tag);
    prof__json_kuint(j, "first_step", st->f[i].step);
    prof__json_knum(j, "value", st->f[i].value);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_key(j, "scalars");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < st->ns; i++)
    if (st->s[i].n) json_scalar(an, j, &st->s[i]);
  prof__json_arr_end(j);
  prof__json_key(j, "histograms");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < st->nh; i++)
    if (st->h[i].n) json_hist(an, j, &st->h[i]);
  prof__json_arr_end(j);
  prof__json_kuint(j, "bad_chunks", st->bad_chunks);
  prof__json_obj_end(j);
}

/* A one-line sparkline of a series, min..max mapped to 8 levels. */
static void sparkline(FILE *out, const double *v, size_t n) {
  static const char *const lv[] = {"_", ".", "-", "~", "=", "+", "*", "#"};
  double mn = INFINITY, mx = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) mn = v[i] < mn ? v[i] : mn, mx = v[i] > mx ? v[i] : mx;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) {
      fputc('!', out);
      continue;
    }
    /* halves: the span of two finite values may overflow to infinity; a
     * span of subnormals may round to 0 (0 / 0 is NaN: the lowest level) */
    double span = mx / 2 - mn / 2, r = span > 0 ? (v[i] / 2 - mn / 2) / span : 0;
    int k = r > 0 ? (r < 1 ? (int)(r * 7.999) : 7) : 0;
    fputs(lv[k], out);
  }
}

static void text_scalar(prof__an *an, FILE *out, const stag *s) {
  const char *tag = prof__an_str(an, s->id);
  enum { W = 48 };
  double v[W];
  size_t n = s->n < W ? s->n : W;
  for (size_t i = 0; i < n; i++) v[i] = s->p[i * s->n / n].v;
  char nm[PROF_TERM_NAME];
  fprintf(out, "  %-24s %-5s %6zu  first %-10.4g last %-10.4g ", prof__term_name(nm, sizeof nm, tag), split_of(tag),
          s->n, s->p[0].v, s->p[s->n - 1].v);
  sparkline(out, v, n);
  fputc('\n', out);
}

static void text_hist(prof__an *an, FILE *out, const htag *h) {
  const prof__hsum *s = &h->last;
  char nm[PROF_TERM_NAME];
  fprintf(out, "  %-24s %-10s %6zu  rms %-9.3g mean %-9.3g std %-9.3g zeros %5.1f%%  nan/inf %llu\n",
          prof__term_name(nm, sizeof nm, prof__an_str(an, h->id)), prof__sec_health_kind_name(h->kind), h->n, prof__rec_hist_rms(s), s->mean, s->std,
          s->count ? 100.0 * (double)s->zeros / (double)s->count : 0, (unsigned long long)(s->nan + s->inf));
  if (h->kind != PROF_HIST_GRADIENT || h->n < 2) return;
  enum { W = 48 };
  double v[W];
  size_t n = h->n < W ? h->n : W;
  for (size_t i = 0; i < n; i++) {
    double r = h->r[i * h->n / n].rms;
    v[i] = r > 0 ? log10(r) : -INFINITY;
  }
  fprintf(out, "  %-24s log10 rms over the run: ", "");
  sparkline(out, v, n);
  fputc('\n', out);
}

void prof__sec_health_text(prof__an *an, void *vst, FILE *out) {
  model_st *st = vst;
  if (!st->ns && !st->nh) return;
  fprintf(out, "\nModel health (%zu metrics, %zu tensors; findings above)\n", st->ns, st->nh);
  if (st->ns) fprintf(out, "  %-24s %-5s %6s\n", "metric", "split", "points");
  for (size_t i = 0; i < st->ns; i++)
    if (st->s[i].n) text_scalar(an, out, &st->s[i]);
  if (st->nh) fprintf(out, "  %-24s %-10s %6s  (last summary)\n", "tensor", "kind", "records");
  for (size_t i = 0; i < st->nh; i++)
    if (st->h[i].n) text_hist(an, out, &st->h[i]);
  if (st->bad_chunks) fprintf(out, "  %llu malformed histogram chunks skipped\n", (unsigned long long)st->bad_chunks);
}

