/* sec_model.c — the "model" report section: per-step metrics (prof_scalar)
 * and tensor summaries (prof_histogram) over the run, and the training
 * health findings nan_inf, vanishing_gradient, exploding_gradient,
 * dead_units, overfitting and plateau.
 *
 * One pass keeps, per tag, the scalar points (step, value) and, per tensor
 * tag, one small row per summary (moments, zeros, NaN/Inf) plus the last
 * full summary with its magnitude buckets. Memory grows with the number of
 * points, never with tensor sizes. Thresholds are the THR_* values below;
 * docs/model-health.md states them: keep the two in step.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze.h"
#include "model/hist.h"
#include "sec_model_html.h"

/* Finding thresholds (docs/model-health.md). */
#define THR_VANISH_RMS 1e-7       /* vanishing: median gradient RMS of the last quarter below this */
#define THR_DECAY 1e-3            /* vanishing: late / early RMS below this (3 orders of magnitude) */
#define THR_LAYER_RATIO 1e-3      /* vanishing: smallest / largest layer median RMS below this */
#define THR_EXPLODE_RMS 1e3       /* exploding: any gradient RMS above this */
#define THR_GROWTH 1e3            /* exploding: late / early RMS above this */
#define THR_DEAD_FRAC 0.90        /* dead_units: mean exact-zero share of the last half >= 90% */
#define THR_DEAD_HIGH 0.99        /* ... high severity from 99% */
#define THR_OVERFIT_EVALS 3       /* overfitting: >= 3 evaluations after the best one */
#define THR_OVERFIT_RISE 0.05     /* ... last validation loss >= 5% above the best */
#define THR_OVERFIT_TRAIN 0.02    /* ... while training loss fell >= 2% since then */
#define THR_PLATEAU_REL 0.01      /* plateau: an improvement is >= 1% below the best smoothed loss */
#define THR_PLATEAU_MIN 50        /* ... flat for >= 50 steps */
#define THR_PLATEAU_SHARE 0.25    /* ... and >= 25% of the recorded steps */
#define PLATEAU_EMA 0.1           /* smoothing weight of the loss for the plateau rule */
#define EDGE_SHARE 0.10           /* early / late window: first / last 10% of the records (>= 1) */
#define SERIES_MAX 200            /* points per series in the reports */

typedef struct spoint {
  uint64_t step1;
  double v;
} spoint;

typedef struct stag {
  uint32_t id;
  spoint *p;
  size_t n, cap;
} stag;

typedef struct hrow {
  uint64_t step1, count, zeros, nan, inf;
  double min, max, mean, std, rms;
} hrow;

typedef struct htag {
  uint32_t id;
  int kind;
  hrow *r;
  size_t n, cap;
  prof__hsum last;
} htag;

typedef struct health {
  char id[24];
  char tag[128];
  uint64_t step;
  double value;
} health;

typedef struct model_st {
  stag *s;
  size_t ns, scap;
  htag *h;
  size_t nh, hcap;
  uint64_t bad_chunks;
  health *f;
  size_t nf, fcap;
} model_st;

/* ---- collection ---------------------------------------------------------- */

static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(p, c * elem);
  if (q) *cap = c;
  return q;
}

static stag *stag_get(model_st *st, uint32_t id) {
  for (size_t i = st->ns; i-- > 0;)
    if (st->s[i].id == id) return &st->s[i];
  stag *s = grow(st->s, &st->scap, st->ns + 1, sizeof *s);
  if (!s) return NULL;
  st->s = s;
  memset(&s[st->ns], 0, sizeof *s);
  s[st->ns].id = id;
  return &s[st->ns++];
}

static htag *htag_get(model_st *st, uint32_t id, int kind) {
  for (size_t i = st->nh; i-- > 0;)
    if (st->h[i].id == id && st->h[i].kind == kind) return &st->h[i];
  htag *h = grow(st->h, &st->hcap, st->nh + 1, sizeof *h);
  if (!h) return NULL;
  st->h = h;
  memset(&h[st->nh], 0, sizeof *h);
  h[st->nh].id = id;
  h[st->nh].kind = kind;
  return &h[st->nh++];
}

static void add_scalar(model_st *st, const prof__event *ev) {
  stag *s = stag_get(st, ev->name);
  if (!s) return;
  spoint *p = grow(s->p, &s->cap, s->n + 1, sizeof *p);
  if (!p) return;
  s->p = p;
  p[s->n++] = (spoint){ev->b, prof__bits_f64(ev->a)};
}

static void add_hist(model_st *st, const prof__hrec *r) {
  htag *h = htag_get(st, r->tag, r->kind);
  if (!h) return;
  hrow *row = grow(h->r, &h->cap, h->n + 1, sizeof *row);
  if (!row) return;
  h->r = row;
  const prof__hsum *s = &r->sum;
  row[h->n++] = (hrow){r->step1, s->count, s->zeros, s->nan, s->inf, s->min, s->max, s->mean, s->std,
                       prof__hist_rms(s)};
  h->last = *s;
}

static void model_record(prof__an *an, void *vst, const prof__rec *rec) {
  (void)an;
  model_st *st = vst;
  if (rec->kind == PROF_REC_EVENT && rec->ev.type == PROF_EV_SCALAR) {
    add_scalar(st, &rec->ev);
  } else if (rec->kind == PROF_REC_CHUNK && rec->chunk_type == PROF_CHUNK_HIST) {
    prof__cur c = {rec->data, rec->data + rec->len, 0};
    if (rec->len < 1 || prof__cur_u8(&c) != PROF_HIST_FORMAT) {
      st->bad_chunks++;
      return;
    }
    prof__hrec r;
    int rc;
    while ((rc = prof__hist_decode(&c, &r)) == 1) add_hist(st, &r);
    if (rc < 0) st->bad_chunks++;
  }
}

/* ---- tag conventions ------------------------------------------------------- */

/* Validation tags start with one of MLPROF_VAL_PREFIXES (comma-separated;
 * default "val/,eval/,valid/,validation/"); "train/" or no prefix is
 * training. The metric is the rest of the tag. */
static const char *val_metric(const char *tag) {
  const char *env = getenv("MLPROF_VAL_PREFIXES");
  const char *list = env && *env ? env : "val/,eval/,valid/,validation/";
  while (*list) {
    size_t n = strcspn(list, ",");
    if (n && strncmp(tag, list, n) == 0) return tag + n;
    list += n + (list[n] == ',');
  }
  return NULL;
}

static const char *train_metric(const char *tag) {
  if (val_metric(tag)) return NULL;
  const char *env = getenv("MLPROF_TRAIN_PREFIX");
  const char *pre = env && *env ? env : "train/";
  return strncmp(tag, pre, strlen(pre)) == 0 ? tag + strlen(pre) : tag;
}

static int is_loss(const char *metric) {
  for (const char *p = metric; *p; p++)
    if (strncasecmp(p, "loss", 4) == 0) return 1;
  return 0;
}

/* ---- findings -------------------------------------------------------------- */

static void note(prof__an *an, model_st *st, const char *id, const char *sev, const char *tag, uint64_t step,
                 double value, const char *title, const char *measured, const char *rec) {
  health *f = grow(st->f, &st->fcap, st->nf + 1, sizeof *f);
  if (f) {
    st->f = f;
    health *h = &f[st->nf++];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", id);
    snprintf(h->tag, sizeof h->tag, "%s", tag);
    h->step = step;
    h->value = value;
  }
  prof__an_finding(an, id, sev, value, title, measured, rec);
}

static uint64_t step_of(uint64_t step1) { return step1 ? step1 - 1 : 0; }

static void rule_nan_inf(prof__an *an, model_st *st) {
  const char *tag = NULL;
  uint64_t best = UINT64_MAX, bad = 0;
  double val = 0;
  int is_hist = 0;
  for (size_t i = 0; i < st->ns; i++)
    for (size_t k = 0; k < st->s[i].n; k++)
      if (!isfinite(st->s[i].p[k].v)) {
        bad++;
        if (st->s[i].p[k].step1 < best) {
          best = st->s[i].p[k].step1, tag = prof__an_str(an, st->s[i].id), val = st->s[i].p[k].v, is_hist = 0;
        }
      }
  for (size_t i = 0; i < st->nh; i++)
    for (size_t k = 0; k < st->h[i].n; k++) {
      const hrow *r = &st->h[i].r[k];
      if (!r->nan && !r->inf) continue;
      bad++;
      if (r->step1 < best || (r->step1 == best && !is_hist && tag)) {
        best = r->step1, tag = prof__an_str(an, st->h[i].id), val = (double)(r->nan + r->inf), is_hist = 1;
      }
    }
  if (!tag) return;
  char title[256], measured[512];
  snprintf(title, sizeof title, "NaN/Inf in '%s' from step %llu", tag, (unsigned long long)step_of(best));
  if (is_hist)
    snprintf(measured, sizeof measured,
             "tensor '%s' held %.0f NaN/Inf values at step %llu; %llu records with non-finite values in all",
             tag, val, (unsigned long long)step_of(best), (unsigned long long)bad);
  else
    snprintf(measured, sizeof measured, "metric '%s' was %g at step %llu; %llu non-finite records in all", tag,
             val, (unsigned long long)step_of(best), (unsigned long long)bad);
  note(an, st, "nan_inf", "high", tag, step_of(best), (double)step_of(best), title, measured,
       "Training diverged or computed an invalid value. Lower the learning rate, clip gradients (by norm), "
       "check the data for NaN/Inf and the loss for log(0) or division by zero, and use loss scaling "
       "with mixed precision. Break at the first bad step (MLPROF_BREAK_AT=step:N) to inspect it.");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Mean RMS over rows [a, b) with finite values; -1 when none. */
static double mean_rms(const htag *h, size_t a, size_t b) {
  double s = 0;
  size_t n = 0;
  for (size_t i = a; i < b; i++)
    if (isfinite(h->r[i].rms) && !h->r[i].nan && !h->r[i].inf) s += h->r[i].rms, n++;
  return n ? s / (double)n : -1;
}

/* Median RMS over rows [a, b); -1 when none. */
static double median_rms(const htag *h, size_t a, size_t b) {
  double *v = malloc((b - a + 1) * sizeof *v);
  size_t n = 0;
  if (!v) return -1;
  for (size_t i = a; i < b; i++)
    if (isfinite(h->r[i].rms) && !h->r[i].nan && !h->r[i].inf) v[n++] = h->r[i].rms;
  double m = -1;
  if (n) {
    qsort(v, n, sizeof *v, cmp_double);
    m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  free(v);
  return m;
}

static size_t edge(size_t n) {
  size_t e = (size_t)((double)n * EDGE_SHARE);
  return e ? e : 1;
}

static const char *VANISH_REC =
    "Gradients this small stop the layers from learning. Use a non-saturating activation (ReLU, GELU) "
    "instead of sigmoid/tanh in deep stacks, initialise weights for the activation (He/Xavier), add "
    "normalisation (batch/layer norm) or residual connections, or shorten the network.";
static const char *EXPLODE_REC =
    "Clip gradients by global norm (e.g. 1.0), lower the learning rate or add warm-up, check the weight "
    "initialisation scale, and add normalisation layers.";

/* Per gradient tag: tiny, decayed or exploded. Returns 1 if one fired. */
static void rule_gradient_tag(prof__an *an, model_st *st, const htag *h) {
  const char *tag = prof__an_str(an, h->id);
  size_t n = h->n, e = edge(n);
  double early = mean_rms(h, 0, e), late = mean_rms(h, n - e, n), tail = median_rms(h, n - (n + 3) / 4, n);
  char title[256], measured[512];
  double peak = -1;
  uint64_t peak_step = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(h->r[i].rms) && h->r[i].rms > peak) peak = h->r[i].rms, peak_step = h->r[i].step1;
  if (peak > THR_EXPLODE_RMS || (n >= 4 && early > 0 && late > 0 && late / early > THR_GROWTH)) {
    snprintf(title, sizeof title, "Exploding gradient in '%s'", tag);
    snprintf(measured, sizeof measured,
             "gradient RMS went from %.3g (first %zu records) to %.3g (last %zu); peak %.3g at step %llu "
             "(thresholds: RMS > %g or growth > %gx)",
             early, e, late, e, peak, (unsigned long long)step_of(peak_step), THR_EXPLODE_RMS, THR_GROWTH);
    note(an, st, "exploding_gradient", "high", tag, step_of(peak_step), late > 0 && early > 0 ? late / early : peak,
         title, measured, EXPLODE_REC);
    return;
  }
  int tiny = tail >= 0 && tail < THR_VANISH_RMS;
  int decayed = n >= 4 && early > 0 && late >= 0 && late / early < THR_DECAY;
  if (!tiny && !decayed) return;
  uint64_t first = 0; /* first step where the RMS fell below the tiny / decay mark */
  for (size_t i = 0; i < n; i++)
    if (h->r[i].rms < (tiny ? THR_VANISH_RMS : early * THR_DECAY)) {
      first = step_of(h->r[i].step1);
      break;
    }
  snprintf(title, sizeof title, "Vanishing gradient in '%s'", tag);
  snprintf(measured, sizeof measured,
           "gradient RMS %.3g in the first %zu records, %.3g in the last %zu (median of the last quarter "
           "%.3g); below the mark from step %llu (thresholds: RMS < %g or decay < %gx)",
           early, e, late, e, tail, (unsigned long long)first, THR_VANISH_RMS, THR_DECAY);
  note(an, st, "vanishing_gradient", "high", tag, first, early > 0 ? late / early : tail, title, measured,
       VANISH_REC);
}

/* Across layers: the smallest median gradient RMS far below the largest. */
static void rule_gradient_layers(prof__an *an, model_st *st) {
  const htag *lo = NULL, *hi = NULL;
  double vlo = 0, vhi = 0;
  for (size_t i = 0; i < st->nh; i++) {
    const htag *h = &st->h[i];
    if (h->kind != PROF_HIST_GRADIENT || !h->n) continue;
    double m = median_rms(h, 0, h->n);
    if (m < 0) continue;
    if (!lo || m < vlo) lo = h, vlo = m;
    if (!hi || m > vhi) hi = h, vhi = m;
  }
  if (!lo || lo == hi || vhi <= 0 || vlo / vhi >= THR_LAYER_RATIO) return;
  for (size_t i = 0; i < st->nf; i++) /* already reported for that tag */
    if (strcmp(st->f[i].id, "vanishing_gradient") == 0 && strcmp(st->f[i].tag, prof__an_str(an, lo->id)) == 0)
      return;
  char title[256], measured[512];
  const char *tl = prof__an_str(an, lo->id), *th = prof__an_str(an, hi->id);
  snprintf(title, sizeof title, "Vanishing gradient in '%s' compared with '%s'", tl, th);
  snprintf(measured, sizeof measured,
           "median gradient RMS %.3g in '%s' vs %.3g in '%s' (ratio %.2g; threshold %g)", vlo, tl, vhi, th,
           vlo / vhi, THR_LAYER_RATIO);
  note(an, st, "vanishing_gradient", "medium", tl, step_of(lo->r[0].step1), vlo / vhi, title, measured,
       VANISH_REC);
}

static void rule_dead(prof__an *an, model_st *st, const htag *h) {
  size_t a = h->n / 2;
  double share = 0;
  size_t n = 0;
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < h->n; i++) {
    double z = h->r[i].count ? (double)h->r[i].zeros / (double)h->r[i].count : 0;
    if (i >= a) share += z, n++;
    if (z >= THR_DEAD_FRAC && first == UINT64_MAX) first = step_of(h->r[i].step1);
  }
  if (!n || share / (double)n < THR_DEAD_FRAC) return;
  share /= (double)n;
  const char *tag = prof__an_str(an, h->id);
  char title[256], measured[512];
  snprintf(title, sizeof title, "Dead units: '%s' is %.1f%% exact zeros", tag, share * 100);
  snprintf(measured, sizeof measured,
           "mean share of exact zeros over the last %zu records: %.1f%% (threshold %.0f%%); first above the "
           "threshold at step %llu",
           n, share * 100, THR_DEAD_FRAC * 100, (unsigned long long)(first == UINT64_MAX ? 0 : first));
  note(an, st, "dead_units", share >= THR_DEAD_HIGH ? "high" : "medium", tag, first == UINT64_MAX ? 0 : first,
       share, title, measured,
       "Most units never fire (ReLU stuck at zero). Lower the learning rate, use LeakyReLU/GELU, check the "
       "bias initialisation and the input scale, and add normalisation before the activation.");
}

/* Mean of the training loss points with step1 in [a, b]; NaN when none. */
static double train_mean(const stag *t, uint64_t a, uint64_t b) {
  double s = 0;
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++)
    if (t->p[i].step1 >= a && t->p[i].step1 <= b && isfinite(t->p[i].v)) s += t->p[i].v, n++;
  return n ? s / (double)n : NAN;
}

static const stag *train_for(prof__an *an, model_st *st, const char *metric) {
  for (size_t i = 0; i < st->ns; i++) {
    const char *m = train_metric(prof__an_str(an, st->s[i].id));
    if (m && strcmp(m, metric) == 0) return &st->s[i];
  }
  return NULL;
}

static void rule_overfit_pair(prof__an *an, model_st *st, const stag *v, const stag *t) {
  size_t b = 0;
  for (size_t i = 0; i < v->n; i++)
    if (isfinite(v->p[i].v) && (!isfinite(v->p[b].v) || v->p[i].v < v->p[b].v)) b = i;
  size_t after = v->n - 1 - b;
  double best = v->p[b].v, last = v->p[v->n - 1].v;
  if (after < THR_OVERFIT_EVALS || !isfinite(last) || !(last >= best + fabs(best) * THR_OVERFIT_RISE)) return;
  /* training loss around the best evaluation vs around the last one */
  uint64_t sb = v->p[b].step1, sl = v->p[v->n - 1].step1, w = (sl - sb) / (after + 1) / 2;
  double tb = train_mean(t, sb > w ? sb - w : 0, sb + w), tl = train_mean(t, sl > w ? sl - w : 0, sl + w);
  if (!isfinite(tb) || !isfinite(tl) || !(tl <= tb - fabs(tb) * THR_OVERFIT_TRAIN)) return;
  const char *vt = prof__an_str(an, v->id), *tt = prof__an_str(an, t->id);
  uint64_t saved = step_of(sl) - step_of(sb);
  char title[256], measured[512], rec[512];
  snprintf(title, sizeof title, "Over-fitting: '%s' rises while '%s' falls", vt, tt);
  snprintf(measured, sizeof measured,
           "'%s' was best at step %llu (%.4g) and rose to %.4g (+%.0f%%) over %zu evaluations up to step %llu, "
           "while '%s' fell from %.4g to %.4g",
           vt, (unsigned long long)step_of(sb), best, last, (last - best) / fabs(best ? best : 1) * 100, after,
           (unsigned long long)step_of(sl), tt, tb, tl);
  snprintf(rec, sizeof rec,
           "Stop early at the best validation loss (step %llu: %llu steps would have been saved) and keep that "
           "checkpoint; add regularisation (weight decay, dropout, augmentation) or more data.",
           (unsigned long long)step_of(sb), (unsigned long long)saved);
  note(an, st, "overfitting", "medium", vt, step_of(sb), (double)saved, title, measured, rec);
}

static void rule_overfitting(prof__an *an, model_st *st) {
  for (size_t i = 0; i < st->ns; i++) {
    const char *m = val_metric(prof__an_str(an, st->s[i].id));
    if (!m || !is_loss(m) || st->s[i].n < THR_OVERFIT_EVALS + 1) continue;
    const stag *t = train_for(an, st, m);
    if (t && t->n) rule_overfit_pair(an, st, &st->s[i], t);
  }
}

static void rule_plateau_tag(prof__an *an, model_st *st, const stag *t) {
  double ema = NAN, best = NAN;
  uint64_t last_improve = 0, first = UINT64_MAX, end = 0;
  for (size_t i = 0; i < t->n; i++) {
    double v = t->p[i].v;
    if (!isfinite(v)) continue;
    uint64_t s = step_of(t->p[i].step1);
    if (first == UINT64_MAX) first = s;
    end = s;
    ema = isnan(ema) ? v : ema + PLATEAU_EMA * (v - ema);
    if (isnan(best) || ema < best - fabs(best) * THR_PLATEAU_REL) {
      best = ema;
      last_improve = s;
    }
  }
  if (first == UINT64_MAX) return;
  uint64_t flat = end - last_improve, span = end - first;
  if (flat < THR_PLATEAU_MIN || (double)flat < THR_PLATEAU_SHARE * (double)span) return;
  const char *tag = prof__an_str(an, t->id);
  double ms = an->steady_stats.count ? (double)an->steady_stats.mean_ns / 1e6 : 0;
  char title[256], measured[512], rec[512];
  snprintf(title, sizeof title, "Plateau: '%s' stopped improving after step %llu", tag,
           (unsigned long long)last_improve);
  snprintf(measured, sizeof measured,
           "the smoothed loss (EMA %.2f) last improved by >= %.0f%% at step %llu (%.4g); %llu of %llu steps "
           "after that brought no such improvement",
           PLATEAU_EMA, THR_PLATEAU_REL * 100, (unsigned long long)last_improve, best, (unsigned long long)flat,
           (unsigned long long)span);
  snprintf(rec, sizeof rec,
           "Early stopping (patience of ~%d steps) would have saved about %llu steps (%.0f%% of the run%s%.1f s "
           "at %.2f ms/step); or lower the learning rate on plateau (a schedule such as reduce-on-plateau).",
           THR_PLATEAU_MIN, (unsigned long long)(flat > THR_PLATEAU_MIN ? flat - THR_PLATEAU_MIN : 0),
           span ? 100.0 * (double)flat / (double)span : 0, ", about ",
           ms * (double)(flat > THR_PLATEAU_MIN ? flat - THR_PLATEAU_MIN : 0) / 1e3, ms);
  note(an, st, "plateau", "low", tag, last_improve, (double)flat, title, measured, rec);
}

static void rule_plateau(prof__an *an, model_st *st) {
  for (size_t i = 0; i < st->ns; i++) {
    const char *m = train_metric(prof__an_str(an, st->s[i].id));
    if (m && is_loss(m)) rule_plateau_tag(an, st, &st->s[i]);
  }
}

static void model_finish(prof__an *an, void *vst) {
  model_st *st = vst;
  rule_nan_inf(an, st);
  for (size_t i = 0; i < st->nh; i++) {
    if (st->h[i].kind == PROF_HIST_GRADIENT && st->h[i].n) rule_gradient_tag(an, st, &st->h[i]);
    if (st->h[i].kind == PROF_HIST_ACTIVATION && st->h[i].n) rule_dead(an, st, &st->h[i]);
  }
  rule_gradient_layers(an, st);
  rule_overfitting(an, st);
  rule_plateau(an, st);
}

/* ---- reports ---------------------------------------------------------------- */

static const char *kind_name(int k) {
  static const char *const n[] = {"weight", "gradient", "activation", "other"};
  return k >= 0 && k <= 3 ? n[k] : "other";
}

static const char *split_of(const char *tag) { return val_metric(tag) ? "val" : "train"; }

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
  prof__json_knum(j, "rms", prof__hist_rms(s));
  prof__json_kuint(j, "zeros", s->zeros);
  prof__json_kuint(j, "nan", s->nan);
  prof__json_kuint(j, "inf", s->inf);
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
  prof__json_kstr(j, "kind", kind_name(h->kind));
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

static void model_json(prof__an *an, void *vst, prof__json *j) {
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
    int k = mx > mn ? (int)((v[i] - mn) / (mx - mn) * 7.999) : 0;
    fputs(lv[k], out);
  }
}

static void text_scalar(prof__an *an, FILE *out, const stag *s) {
  const char *tag = prof__an_str(an, s->id);
  enum { W = 48 };
  double v[W];
  size_t n = s->n < W ? s->n : W;
  for (size_t i = 0; i < n; i++) v[i] = s->p[i * s->n / n].v;
  fprintf(out, "  %-24s %-5s %6zu  first %-10.4g last %-10.4g ", tag, split_of(tag), s->n, s->p[0].v,
          s->p[s->n - 1].v);
  sparkline(out, v, n);
  fputc('\n', out);
}

static void text_hist(prof__an *an, FILE *out, const htag *h) {
  const prof__hsum *s = &h->last;
  fprintf(out, "  %-24s %-10s %6zu  rms %-9.3g mean %-9.3g std %-9.3g zeros %5.1f%%  nan/inf %llu\n",
          prof__an_str(an, h->id), kind_name(h->kind), h->n, prof__hist_rms(s), s->mean, s->std,
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

static void model_text(prof__an *an, void *vst, FILE *out) {
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

/* The HTML panel (sec_model_html.c) from plain arrays: steps are the
 * training step of each value (step1 - 1, as in the TensorBoard export). */
static void model_html(prof__an *an, void *vst, FILE *out) {
  model_st *st = vst;
  if (!st->ns && !st->nh) return;
  size_t pts = 0, rows = 0;
  for (size_t i = 0; i < st->ns; i++) pts += st->s[i].n;
  for (size_t i = 0; i < st->nh; i++) rows += st->h[i].n;
  prof__mh_metric *m = calloc(st->ns + 1, sizeof *m);
  prof__mh_tensor *t = calloc(st->nh + 1, sizeof *t);
  uint64_t *steps = malloc((pts + rows + 1) * sizeof *steps);
  double *vals = malloc((pts + 5 * rows + 1) * sizeof *vals);
  if (m && t && steps && vals) {
    uint64_t *sp = steps;
    double *vp = vals;
    for (size_t i = 0; i < st->ns; i++) {
      const stag *g = &st->s[i];
      const char *tag = prof__an_str(an, g->id), *val = val_metric(tag);
      m[i] = (prof__mh_metric){tag, val ? val : train_metric(tag), val != NULL, sp, vp, g->n};
      for (size_t k = 0; k < g->n; k++) *sp++ = g->p[k].step1 ? g->p[k].step1 - 1 : 0, *vp++ = g->p[k].v;
    }
    for (size_t i = 0; i < st->nh; i++) {
      const htag *h = &st->h[i];
      size_t n = h->n;
      t[i] = (prof__mh_tensor){prof__an_str(an, h->id), kind_name(h->kind), sp, vp, vp + n, vp + 2 * n, vp + 3 * n,
                               vp + 4 * n, n};
      for (size_t k = 0; k < n; k++) {
        sp[k] = h->r[k].step1 ? h->r[k].step1 - 1 : 0;
        vp[k] = h->r[k].rms, vp[n + k] = h->r[k].mean, vp[2 * n + k] = h->r[k].std;
        vp[3 * n + k] = h->r[k].min, vp[4 * n + k] = h->r[k].max;
      }
      sp += n;
      vp += 5 * n;
    }
    prof__model_html(out, m, st->ns, t, st->nh);
  }
  free(m);
  free(t);
  free(steps);
  free(vals);
}

static void model_destroy(prof__an *an, void *vst) {
  (void)an;
  model_st *st = vst;
  for (size_t i = 0; i < st->ns; i++) free(st->s[i].p);
  for (size_t i = 0; i < st->nh; i++) free(st->h[i].r);
  free(st->s);
  free(st->h);
  free(st->f);
}

const prof__section prof__sec_model = {
    .name = "model",
    .state_size = sizeof(model_st),
    .record = model_record,
    .finish = model_finish,
    .text = model_text,
    .json = model_json,
    .html = model_html,
    .destroy = model_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_SCALAR),
};
