/* sec_health.c — the training-health report section ("model" in the JSON): per-step metrics (prof_scalar)
 * and tensor summaries (prof_histogram) over the run, and the training
 * health findings nan_inf, vanishing_gradient, exploding_gradient,
 * dead_units, overfitting, plateau and underfitting. Every one of them
 * carries the keys "tensor" (the tensor or metric tag) and "first_step".
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
#include "analyze/analyze.h"
#include "analyze/util/array.h"
#include "trace/rec_hist.h"
#include "analyze/sections/health/sec_health.h"
#include "analyze/sections/health/sec_health_html.h"
#include "trace/ev_health.h"

/* Finding thresholds (docs/model-health.md). */
#define THR_VANISH_RMS 1e-7       /* vanishing: median gradient RMS of the last quarter below this */
#define THR_DECAY 1e-3            /* vanishing: late / early RMS below this (3 orders of magnitude) */
#define THR_LAYER_RATIO 1e-3      /* vanishing: smallest / largest layer median RMS below this */
#define THR_EXPLODE_RMS 1e3       /* exploding: any gradient RMS above this */
#define THR_GROWTH 1e3            /* exploding: late / early RMS above this */
#define THR_DEAD_FRAC 0.90        /* dead_units: mean exact-zero share of the last half >= 90% */
#define THR_DEAD_HIGH 0.99        /* ... high severity from 99% */
#define THR_DEAD_UNITS 0.50       /* dead_units per unit (prof_histogram_units): mean dead-unit share of the last half >= 50% */
#define THR_DEAD_UNITS_HIGH 0.90  /* ... high severity from 90% */
#define THR_UNDERFIT_MIN 50       /* underfitting: >= 50 training-loss / accuracy records */
#define THR_UNDERFIT_DROP 0.10    /* ... loss: the last 10% of the records is < 10% below the first 10% */
#define THR_UNDERFIT_ACC 0.02     /* ... accuracy: rose < 2 points (of 1.0, or of 100 for percentages) */
#define THR_OVERFIT_EVALS 3       /* overfitting: >= 3 evaluations after the best one */
#define THR_OVERFIT_RISE 0.05     /* ... last validation loss >= 5% above the best */
#define THR_OVERFIT_TRAIN 0.02    /* ... while training loss fell >= 2% since then */
#define THR_PLATEAU_REL 0.01      /* plateau: an improvement is >= 1% below the best smoothed loss */
#define THR_PLATEAU_MIN 50        /* ... flat for >= 50 steps */
#define THR_PLATEAU_SHARE 0.25    /* ... and >= 25% of the recorded steps */
#define PLATEAU_EMA 0.1           /* smoothing weight of the loss for the plateau rule */
#define EDGE_SHARE 0.10           /* early / late window: first / last 10% of the records (>= 1) */

/* ---- collection ---------------------------------------------------------- */

static stag *stag_get(model_st *st, uint32_t id) {
  for (size_t i = st->ns; i-- > 0;)
    if (st->s[i].id == id) return &st->s[i];
  stag *s = prof__arr_room(st->s, &st->scap, st->ns + 1, sizeof *s);
  if (!s) return NULL;
  st->s = s;
  memset(&s[st->ns], 0, sizeof *s);
  s[st->ns].id = id;
  return &s[st->ns++];
}

static htag *htag_get(model_st *st, uint32_t id, int kind) {
  for (size_t i = st->nh; i-- > 0;)
    if (st->h[i].id == id && st->h[i].kind == kind) return &st->h[i];
  htag *h = prof__arr_room(st->h, &st->hcap, st->nh + 1, sizeof *h);
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
  spoint *p = prof__arr_room(s->p, &s->cap, s->n + 1, sizeof *p);
  if (!p) return;
  s->p = p;
  p[s->n++] = (spoint){prof__ev_scalar_step(ev), prof__ev_scalar_value(ev)};
}

static void add_hist(model_st *st, const prof__hrec *r) {
  htag *h = htag_get(st, r->tag, r->kind);
  if (!h) return;
  hrow *row = prof__arr_room(h->r, &h->cap, h->n + 1, sizeof *row);
  if (!row) return;
  h->r = row;
  const prof__hsum *s = &r->sum;
  row[h->n++] = (hrow){r->step1, s->count, s->zeros, s->nan, s->inf, s->units, s->dead_units, s->min, s->max,
                       s->mean, s->std, prof__rec_hist_rms(s)};
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
    while ((rc = prof__rec_hist_decode(&c, &r)) == 1) add_hist(st, &r);
    if (rc < 0) st->bad_chunks++;
  }
}

/* ---- tag conventions ------------------------------------------------------- */

/* Validation tags start with one of MLPROF_VAL_PREFIXES (comma-separated;
 * default "val/,eval/,valid/,validation/"); "train/" or no prefix is
 * training. The metric is the rest of the tag. */
const char *prof__sec_health_val_metric(const char *tag) {
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
  if (prof__sec_health_val_metric(tag)) return NULL;
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

/* Findings about one tensor that are grouped per problem: one finding per
 * id names every tensor it concerns, instead of a card per layer. */
static int per_tensor(const char *id) {
  return !strcmp(id, "vanishing_gradient") || !strcmp(id, "exploding_gradient") || !strcmp(id, "dead_units") ||
         !strcmp(id, "nan_inf");
}

static void note(prof__an *an, model_st *st, const char *id, const char *sev, const char *tag, uint64_t step,
                 double value, const char *title, const char *measured, const char *rec) {
  health *f = prof__arr_room(st->f, &st->fcap, st->nf + 1, sizeof *f);
  if (f) {
    st->f = f;
    health *h = &f[st->nf++];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", id);
    snprintf(h->tag, sizeof h->tag, "%s", tag);
    h->step = step;
    h->value = value;
    snprintf(h->sev, sizeof h->sev, "%s", sev);
    snprintf(h->title, sizeof h->title, "%s", title);
    snprintf(h->measured, sizeof h->measured, "%s", measured);
    h->rec = rec;
    if (per_tensor(id)) return; /* written by emit_grouped() */
  } else if (per_tensor(id)) {
    return; /* out of memory: the finding is lost with its row */
  }
  prof__an_finding(an, id, sev, value, title, measured, rec);
  prof__an_finding_kstr(an, "tensor", tag);
  prof__an_finding_knum(an, "first_step", (double)step);
}

/* One finding for the rows i0 .. (same id): alone as written; several as
 * "<problem> in N tensors: 'a', 'b', ...", the worst severity, the earliest
 * step, the first tensor's measurement and every tensor in "tensors". */
static void emit_group(prof__an *an, const model_st *st, size_t i0) {
  const health *h0 = &st->f[i0];
  size_t n = 0, worst = i0;
  uint64_t first = UINT64_MAX;
  char names[1024] = "", list[1024] = "";
  size_t used = 0, lused = 0;
  for (size_t i = i0; i < st->nf; i++) {
    const health *h = &st->f[i];
    if (strcmp(h->id, h0->id) != 0) continue;
    if (!strcmp(h->sev, "high") && strcmp(st->f[worst].sev, "high")) worst = i;
    if (h->step < first) first = h->step;
    if (used < sizeof names)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", n ? ", " : "", h->tag);
    if (lused < sizeof list) lused += (size_t)snprintf(list + lused, sizeof list - lused, "%s%s", n ? "," : "", h->tag);
    n++;
  }
  if (n == 1) {
    prof__an_finding(an, h0->id, h0->sev, h0->value, h0->title, h0->measured, h0->rec);
    prof__an_finding_kstr(an, "tensor", h0->tag);
    prof__an_finding_knum(an, "first_step", (double)h0->step);
    return;
  }
  const health *w = &st->f[worst];
  char title[1200], measured[600], problem[128];
  const char *in = strstr(w->title, " in '"); /* "Vanishing gradient in 'x'" -> "Vanishing gradient" */
  const char *colon = strchr(w->title, ':');
  size_t plen = in ? (size_t)(in - w->title) : colon ? (size_t)(colon - w->title) : strlen(w->title);
  snprintf(problem, sizeof problem, "%.*s", (int)plen, w->title);
  snprintf(title, sizeof title, "%.127s in %zu tensors: %.1023s", problem, n, names);
  snprintf(measured, sizeof measured, "%.511s (first of the %zu; the section lists each)", w->measured, n);
  prof__an_finding(an, w->id, w->sev, w->value, title, measured, w->rec);
  prof__an_finding_kstr(an, "tensor", w->tag);
  prof__an_finding_kstr(an, "tensors", list); /* comma-separated */
  prof__an_finding_knum(an, "first_step", (double)first);
}

static void emit_grouped(prof__an *an, const model_st *st) {
  for (size_t i = 0; i < st->nf; i++) {
    if (!per_tensor(st->f[i].id)) continue;
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(st->f[k].id, st->f[i].id) == 0;
    if (!seen) emit_group(an, st, i);
  }
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

/* The exploding rule: any RMS above THR_EXPLODE_RMS, or growth above THR_GROWTH. */
static int exploding(const htag *h) {
  size_t n = h->n, e = edge(n);
  double early = mean_rms(h, 0, e), late = mean_rms(h, n - e, n);
  for (size_t i = 0; i < n; i++)
    if (isfinite(h->r[i].rms) && h->r[i].rms > THR_EXPLODE_RMS) return 1;
  return n >= 4 && early > 0 && late > 0 && late / early > THR_GROWTH;
}

/* Per gradient tag: tiny, decayed or exploded. */
static void rule_gradient_tag(prof__an *an, model_st *st, const htag *h) {
  const char *tag = prof__an_str(an, h->id);
  size_t n = h->n, e = edge(n);
  double early = mean_rms(h, 0, e), late = mean_rms(h, n - e, n), tail = median_rms(h, n - (n + 3) / 4, n);
  char title[256], measured[512];
  double peak = -1;
  uint64_t peak_step = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(h->r[i].rms) && h->r[i].rms > peak) peak = h->r[i].rms, peak_step = h->r[i].step1;
  if (exploding(h)) {
    /* date the first crossing of the mark that fired, not the peak */
    int by_rms = peak > THR_EXPLODE_RMS;
    double mark = by_rms ? THR_EXPLODE_RMS : early * THR_GROWTH;
    uint64_t cross = peak_step;
    for (size_t i = 0; i < n; i++)
      if (isfinite(h->r[i].rms) && h->r[i].rms > mark) {
        cross = h->r[i].step1;
        break;
      }
    snprintf(title, sizeof title, "Exploding gradient in '%s' from step %llu", tag, (unsigned long long)step_of(cross));
    snprintf(measured, sizeof measured,
             "gradient RMS went from %.3g (first %zu records) to %.3g (last %zu); it first crossed %.3g at step "
             "%llu and peaked at %.3g at step %llu (thresholds: RMS > %g or growth > %gx)",
             early, e, late, e, mark, (unsigned long long)step_of(cross), peak, (unsigned long long)step_of(peak_step),
             THR_EXPLODE_RMS, THR_GROWTH);
    note(an, st, "exploding_gradient", "high", tag, step_of(cross), late > 0 && early > 0 ? late / early : peak,
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
    /* an exploding layer is no reference: beside it a healthy one looks small */
    if (h->kind != PROF_HIST_GRADIENT || !h->n || exploding(h)) continue;
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

/* Per unit: the share of units dead in every row, where the layout was given. */
static int rule_dead_units(prof__an *an, model_st *st, const htag *h) {
  size_t a = h->n / 2, n = 0;
  double share = 0;
  uint64_t first = UINT64_MAX, units = 0;
  for (size_t i = 0; i < h->n; i++) {
    if (!h->r[i].units) continue;
    double z = (double)h->r[i].dead / (double)h->r[i].units;
    if (i >= a) share += z, n++, units = h->r[i].units;
    if (z >= THR_DEAD_UNITS && first == UINT64_MAX) first = step_of(h->r[i].step1);
  }
  if (!n) return 0; /* no unit counts: judge by the zero share */
  share /= (double)n;
  if (share < THR_DEAD_UNITS) return 1;
  const char *tag = prof__an_str(an, h->id);
  char title[256], measured[512];
  snprintf(title, sizeof title, "Dead units: %.0f%% of the %llu units of '%s' never fire", share * 100,
           (unsigned long long)units, tag);
  snprintf(measured, sizeof measured,
           "mean share of units that were exactly zero in every row, over the last %zu records: %.1f%% of %llu "
           "(threshold %.0f%%); first above the threshold at step %llu",
           n, share * 100, (unsigned long long)units, THR_DEAD_UNITS * 100,
           (unsigned long long)(first == UINT64_MAX ? 0 : first));
  note(an, st, "dead_units", share >= THR_DEAD_UNITS_HIGH ? "high" : "medium", tag,
       first == UINT64_MAX ? 0 : first, share, title, measured,
       "These units output zero for every input (ReLU stuck at zero): they no longer learn. Lower the "
       "learning rate, use LeakyReLU/GELU, check the bias initialisation and the input scale, and add "
       "normalisation before the activation.");
  return 1;
}

static void rule_dead(prof__an *an, model_st *st, const htag *h) {
  if (rule_dead_units(an, st, h)) return;
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
    const char *m = prof__sec_health_val_metric(prof__an_str(an, st->s[i].id));
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
  char saved[32];
  prof__an_fmt_ns(saved, sizeof saved,
                  prof__an_d2ns(ms * 1e6 * (double)(flat > THR_PLATEAU_MIN ? flat - THR_PLATEAU_MIN : 0)));
  snprintf(rec, sizeof rec,
           "Early stopping (patience of ~%d steps) would have saved about %llu steps (%.0f%% of the run, about %s "
           "at %.2f ms/step); or lower the learning rate on plateau (a schedule such as reduce-on-plateau).",
           THR_PLATEAU_MIN, (unsigned long long)(flat > THR_PLATEAU_MIN ? flat - THR_PLATEAU_MIN : 0),
           span ? 100.0 * (double)flat / (double)span : 0, saved, ms);
  note(an, st, "plateau", "low", tag, last_improve, (double)flat, title, measured, rec);
}

static void rule_plateau(prof__an *an, model_st *st, const int *skip) {
  for (size_t i = 0; i < st->ns; i++) {
    if (skip && skip[i]) continue;
    const char *m = train_metric(prof__an_str(an, st->s[i].id));
    if (m && is_loss(m)) rule_plateau_tag(an, st, &st->s[i]);
  }
}

static int is_accuracy(const char *metric) {
  for (const char *p = metric; *p; p++)
    if (strncasecmp(p, "acc", 3) == 0) return 1;
  return 0;
}

/* Mean of the finite points [a, b); NaN when none. */
static double point_mean(const stag *t, size_t a, size_t b) {
  double s = 0;
  size_t n = 0;
  for (size_t i = a; i < b; i++)
    if (isfinite(t->p[i].v)) s += t->p[i].v, n++;
  return n ? s / (double)n : NAN;
}

/* Training loss that stays near its start, or accuracy that never leaves
 * its starting (chance) level. Returns 1 when it fired. */
static int rule_underfit_tag(prof__an *an, model_st *st, const stag *t, int acc) {
  if (t->n < THR_UNDERFIT_MIN) return 0;
  size_t e = edge(t->n);
  double first = point_mean(t, 0, e), last = point_mean(t, t->n - e, t->n);
  if (!isfinite(first) || !isfinite(last)) return 0;
  const char *tag = prof__an_str(an, t->id);
  char title[256], measured[512];
  if (acc) {
    double scale = 1;
    for (size_t i = 0; i < t->n; i++)
      if (isfinite(t->p[i].v) && t->p[i].v > 1.0) scale = 100;
    if (last - first >= THR_UNDERFIT_ACC * scale) return 0;
    snprintf(title, sizeof title, "Under-fitting: '%s' stays at its starting level (%.4g)", tag, last);
    snprintf(measured, sizeof measured,
             "mean of the first %zu records %.4g, of the last %zu %.4g over %zu records: a rise of %.3g, below "
             "the %.3g that counts as learning; an accuracy that never leaves its start is chance level",
             e, first, e, last, t->n, last - first, THR_UNDERFIT_ACC * scale);
  } else {
    if (!(first > 0) || last < first * (1 - THR_UNDERFIT_DROP)) return 0;
    snprintf(title, sizeof title, "Under-fitting: '%s' stays near its start (%.4g -> %.4g)", tag, first, last);
    snprintf(measured, sizeof measured,
             "mean of the first %zu records %.4g, of the last %zu %.4g over %zu records: %.1f%% lower, less than "
             "the %.0f%% that counts as learning",
             e, first, e, last, t->n, (first - last) / first * 100, THR_UNDERFIT_DROP * 100);
  }
  note(an, st, "underfitting", "medium", tag, step_of(t->p[0].step1), last, title, measured,
       "The model is not learning. Check the learning rate first (too small barely moves, too large bounces: "
       "try a range test), that the loss matches the labels (e.g. logits into CrossEntropyLoss, labels in "
       "range), that the optimizer holds the model's parameters and that zero_grad()/step() run, and that the "
       "inputs are normalised. If all of that is right, the model may be too small for the task.");
  return 1;
}

/* Underfitting per training loss / accuracy metric. Sets skip[i] for the
 * tags it fired on: a loss that never moved is not also a plateau. */
static void rule_underfitting(prof__an *an, model_st *st, int *skip) {
  for (size_t i = 0; i < st->ns; i++) {
    const char *m = train_metric(prof__an_str(an, st->s[i].id));
    if (!m) continue;
    if (is_loss(m)) skip[i] = rule_underfit_tag(an, st, &st->s[i], 0);
    else if (is_accuracy(m)) rule_underfit_tag(an, st, &st->s[i], 1);
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
  int *skip = calloc(st->ns + 1, sizeof *skip);
  if (skip) rule_underfitting(an, st, skip);
  rule_plateau(an, st, skip);
  free(skip);
  emit_grouped(an, st);
}

/* The HTML panel (sec_health_html.c) from plain arrays: steps are the
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
      const char *tag = prof__an_str(an, g->id), *val = prof__sec_health_val_metric(tag);
      m[i] = (prof__mh_metric){tag, val ? val : train_metric(tag), val != NULL, sp, vp, g->n};
      for (size_t k = 0; k < g->n; k++) *sp++ = g->p[k].step1 ? g->p[k].step1 - 1 : 0, *vp++ = g->p[k].v;
    }
    for (size_t i = 0; i < st->nh; i++) {
      const htag *h = &st->h[i];
      size_t n = h->n;
      t[i] = (prof__mh_tensor){prof__an_str(an, h->id), prof__sec_health_kind_name(h->kind), sp, vp, vp + n, vp + 2 * n, vp + 3 * n,
                               vp + 4 * n, n};
      for (size_t k = 0; k < n; k++) {
        sp[k] = h->r[k].step1 ? h->r[k].step1 - 1 : 0;
        vp[k] = h->r[k].rms, vp[n + k] = h->r[k].mean, vp[2 * n + k] = h->r[k].std;
        vp[3 * n + k] = h->r[k].min, vp[4 * n + k] = h->r[k].max;
      }
      sp += n;
      vp += 5 * n;
    }
    prof__sec_health_html(out, m, st->ns, t, st->nh);
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

const prof__section prof__sec_health = {
    .name = "model",
    .state_size = sizeof(model_st),
    .record = model_record,
    .finish = model_finish,
    .text = prof__sec_health_text,
    .json = prof__sec_health_json,
    .html = model_html,
    .destroy = model_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_SCALAR),
};
