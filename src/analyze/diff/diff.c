/* diff.c — the comparison of two analyses (see diff.h). Step statistics
 * come from the step tables; everything else from each run's JSON report
 * read back, so sections (functions, GPU kernels, memory) are compared by
 * their documented keys without knowing their internals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/diff/diff.h"
#include "analyze/util/jsonparse.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median, and standard error of the median (1.2533 sd / sqrt(n)), of the
 * steps without a flagged warm-up step. */
static double step_median(const prof__an *an, double *se) {
  *se = NAN;
  size_t n = 0;
  double *v = malloc((an->nsteps + 1) * sizeof *v), sum = 0, sq = 0;
  if (!v) return NAN;
  for (size_t i = 0; i < an->nsteps; i++)
    if (!an->steps[i].warmup_outlier) v[n++] = (double)(an->steps[i].end_ns - an->steps[i].begin_ns);
  if (n) qsort(v, n, sizeof *v, cmp_double);
  for (size_t i = 0; i < n; i++) sum += v[i], sq += v[i] * v[i];
  double med = !n ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  if (n > 1) {
    double mean = sum / (double)n, var = (sq - (double)n * mean * mean) / (double)(n - 1);
    *se = 1.2533 * sqrt(var > 0 ? var : 0) / sqrt((double)n);
  }
  free(v);
  return med;
}

/* The parts of a run's JSON report that the comparison reads (add_run and
 * the memory keys below), read back as a tree. Only those are written: the
 * rest (per-step arrays above all) would be most of the text and the tree. */
static prof__jv *report_tree(prof__an *an) {
  static const char *const parts[] = {"ranges", "functions", "gpu", "memory", NULL};
  char *text = NULL, err[PROF_ERR_MAX];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  int rc = prof__report_json_parts(an, f, parts);
  fclose(f);
  prof__jv *v = rc ? NULL : prof__jv_parse(text, len, err);
  free(text);
  return v;
}

static double num_at(const prof__jv *root, const char *path) {
  const prof__jv *v = prof__jv_path(root, path);
  return v && v->type == PROF_JV_NUM ? v->num : NAN;
}

/* ---- items -------------------------------------------------------------- */

typedef struct items {
  prof__diff_item *v;
  size_t n, cap;
  int oom;
} items;

static prof__diff_item *item_of(items *it, const char *kind, const char *name) {
  for (size_t i = 0; i < it->n; i++)
    if (strcmp(it->v[i].kind, kind) == 0 && strcmp(it->v[i].name, name) == 0) return &it->v[i];
  if (it->n == it->cap) {
    size_t cap = it->cap ? it->cap * 2 : 64;
    prof__diff_item *p = realloc(it->v, cap * sizeof *p);
    if (!p) return it->oom = 1, NULL;
    it->v = p;
    it->cap = cap;
  }
  prof__diff_item *x = &it->v[it->n];
  x->kind = strdup(kind);
  x->name = strdup(name);
  x->base = x->cur = NAN;
  if (!x->kind || !x->name) {
    free(x->kind), free(x->name);
    return it->oom = 1, NULL;
  }
  it->n++;
  return x;
}

/* Name and value of each object of `arr` (value: the first numeric key of
 * `keys` found). The category is appended to a range name when it is not
 * "compute", since ranges are keyed by (name, category). */
static void add_list(items *it, const prof__jv *arr, const char *kind, const char *const *keys, double scale,
                     int is_cur) {
  if (!arr || arr->type != PROF_JV_ARR) return;
  for (size_t i = 0; i < arr->len; i++) {
    const prof__jv *o = &arr->items[i], *nm = prof__jv_get(o, "name"), *v = NULL;
    for (size_t k = 0; keys[k] && !v; k++) {
      v = prof__jv_get(o, keys[k]);
      if (v && v->type != PROF_JV_NUM) v = NULL;
    }
    if (!nm || nm->type != PROF_JV_STR || !v) continue;
    char name[512];
    const prof__jv *cat = prof__jv_get(o, "category");
    if (cat && cat->type == PROF_JV_STR && strcmp(cat->str, "compute") != 0)
      snprintf(name, sizeof name, "%s [%s]", nm->str, cat->str);
    else snprintf(name, sizeof name, "%s", nm->str);
    prof__diff_item *x = item_of(it, kind, name);
    if (!x) return;
    double val = v->num * scale;
    if (is_cur) x->cur = isnan(x->cur) ? val : x->cur + val;
    else x->base = isnan(x->base) ? val : x->base + val;
  }
}

/* The functions section's list: an array at "functions", or the first array
 * of named objects inside a "functions" object. */
static const prof__jv *functions_list(const prof__jv *root) {
  const prof__jv *f = prof__jv_get(root, "functions");
  if (!f || f->type == PROF_JV_ARR) return f;
  if (f->type != PROF_JV_OBJ) return NULL;
  static const char *const pref[] = {"top_self", "by_self", "functions", "top", NULL};
  for (size_t k = 0; pref[k]; k++) {
    const prof__jv *a = prof__jv_get(f, pref[k]);
    if (a && a->type == PROF_JV_ARR) return a;
  }
  return NULL;
}

/* ns of CPU (or wall) time per unit of a function's sampled weight: the
 * section's sampled_ms over its weight (0 when the run has no samples). */
static double ns_per_sample_weight(const prof__jv *root) {
  const prof__jv *ms = prof__jv_path(root, "functions.sampled_ms"), *w = prof__jv_path(root, "functions.weight");
  if (!ms || !w || ms->type != PROF_JV_NUM || w->type != PROF_JV_NUM || !(w->num > 0)) return 0;
  return ms->num * 1e6 / w->num;
}

static void add_run(items *it, const prof__jv *root, double scale, int is_cur) {
  static const char *const rk[] = {"self_ns", NULL};
  static const char *const fk[] = {"self_samples", NULL};
  static const char *const kk[] = {"total_ns", NULL};
  add_list(it, prof__jv_get(root, "ranges"), "range", rk, scale, is_cur);
  /* functions are sampled: their weight becomes time, like the other rows */
  double fns = ns_per_sample_weight(root);
  if (fns > 0) add_list(it, functions_list(root), "function", fk, scale * fns, is_cur);
  add_list(it, prof__jv_path(root, "gpu.top_kernels"), "kernel", kk, scale, is_cur);
}

static int cmp_delta(const void *a, const void *b) {
  const prof__diff_item *x = a, *y = b;
  double dx = fabs(x->delta), dy = fabs(y->delta);
  if (dx != dy) return dx > dy ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* ---- findings ----------------------------------------------------------- */

static int has_finding(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return 1;
  return 0;
}

static int add_findings(prof__diff *d, const prof__an *from, const prof__an *other, int appeared) {
  for (size_t i = 0; i < from->nfindings; i++) {
    const prof__finding *f = &from->findings[i];
    if (has_finding(other, f->id)) continue;
    prof__diff_finding *p = realloc(d->findings, (d->nfindings + 1) * sizeof *p);
    if (!p) return PROF_ENOMEM;
    d->findings = p;
    p[d->nfindings++] = (prof__diff_finding){strdup(f->id), strdup(f->severity), strdup(f->title), appeared};
  }
  return 0;
}

/* ---- entry -------------------------------------------------------------- */

static void steps_part(prof__diff *d, prof__an *b, prof__an *c) {
  double seb, sec;
  d->base_steps = b->nsteps;
  d->cur_steps = c->nsteps;
  d->base_median = step_median(b, &seb);
  d->cur_median = step_median(c, &sec);
  d->base_p95 = b->nsteps ? (double)b->steady_stats.p95_ns : NAN;
  d->cur_p95 = c->nsteps ? (double)c->steady_stats.p95_ns : NAN;
  d->median_pct = d->base_median > 0 ? 100 * (d->cur_median - d->base_median) / d->base_median : NAN;
  d->p95_pct = d->base_p95 > 0 ? 100 * (d->cur_p95 - d->base_p95) / d->base_p95 : NAN;
  double se = sqrt((isnan(seb) ? 0 : seb * seb) + (isnan(sec) ? 0 : sec * sec));
  d->noise_pct = d->base_median > 0 ? 100 * 2 * se / d->base_median : NAN;
  d->significant = !isnan(d->median_pct) && fabs(d->median_pct) > (isnan(d->noise_pct) ? 0 : d->noise_pct);
}

int prof__diff_compute(prof__diff *d, prof__an *base, prof__an *cur) {
  memset(d, 0, sizeof *d);
  d->base_path = base->path;
  d->cur_path = cur->path;
  steps_part(d, base, cur);
  prof__jv *jb = report_tree(base), *jc = report_tree(cur);
  int rc = jb && jc ? 0 : PROF_ENOMEM;
  items it = {0};
  if (rc == 0) {
    d->per_step = base->nsteps && cur->nsteps;
    add_run(&it, jb, d->per_step ? 1.0 / (double)base->nsteps : 1, 0);
    add_run(&it, jc, d->per_step ? 1.0 / (double)cur->nsteps : 1, 1);
    for (size_t i = 0; i < it.n; i++)
      it.v[i].delta = (isnan(it.v[i].cur) ? 0 : it.v[i].cur) - (isnan(it.v[i].base) ? 0 : it.v[i].base);
    if (it.n) qsort(it.v, it.n, sizeof *it.v, cmp_delta);
    d->items = it.v;
    d->nitems = it.n;
    if (it.oom) rc = PROF_ENOMEM;
    d->base_peak = num_at(jb, "memory.peak_live_bytes");
    d->cur_peak = num_at(jc, "memory.peak_live_bytes");
    d->base_rss = num_at(jb, "memory.rss_peak_bytes");
    d->cur_rss = num_at(jc, "memory.rss_peak_bytes");
    d->base_leak = num_at(jb, "memory.leaked_bytes");
    d->cur_leak = num_at(jc, "memory.leaked_bytes");
  }
  if (rc == 0) rc = add_findings(d, cur, base, 1);
  if (rc == 0) rc = add_findings(d, base, cur, 0);
  if (rc == 0) rc = prof__diff_savings(d, base, cur);
  prof__jv_free(jb);
  prof__jv_free(jc);
  return rc;
}

void prof__diff_free(prof__diff *d) {
  for (size_t i = 0; i < d->nitems; i++) free(d->items[i].kind), free(d->items[i].name);
  for (size_t i = 0; i < d->nfindings; i++)
    free(d->findings[i].id), free(d->findings[i].severity), free(d->findings[i].title);
  free(d->items);
  free(d->findings);
  prof__diff_savings_free(d);
  memset(d, 0, sizeof *d);
}
