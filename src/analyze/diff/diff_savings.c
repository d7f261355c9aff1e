/* diff_savings.c — `mlprof diff` holds a fix against its prediction: every
 * finding of BASE with a predicted saving that is gone or smaller in NEW,
 * with the saving BASE predicted next to the drop of the mean steady step
 * that NEW realised ("predicted 3.9 ms, saved 4.1 ms"; docs/html-report.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/diff/diff.h"

static const char *phase_of(const prof__finding *f) {
  for (int k = 0; k < f->nkeys; k++)
    if (!f->keys[k].is_num && strcmp(f->keys[k].key, "phase") == 0) return f->keys[k].str;
  return NULL;
}

/* The finding of `an` with the same id (and phase, when it names one). */
static const prof__finding *match(const prof__an *an, const prof__finding *f) {
  const char *ph = phase_of(f);
  for (size_t i = 0; i < an->nfindings; i++) {
    const prof__finding *g = &an->findings[i];
    if (strcmp(g->id, f->id) != 0) continue;
    const char *gp = phase_of(g);
    if (!ph || (gp && strcmp(ph, gp) == 0)) return g;
  }
  return NULL;
}

static int cmp_predicted(const void *a, const void *b) {
  const prof__diff_saving *x = a, *y = b;
  return x->predicted > y->predicted ? -1 : x->predicted < y->predicted;
}

int prof__diff_savings(prof__diff *d, const prof__an *base, const prof__an *cur) {
  d->base_mean = base->steady_stats.count ? (double)base->steady_stats.mean_ns : NAN;
  d->cur_mean = cur->steady_stats.count ? (double)cur->steady_stats.mean_ns : NAN;
  d->saved = d->base_mean - d->cur_mean;
  for (size_t i = 0; i < base->nfindings; i++) {
    const prof__finding *f = &base->findings[i];
    if (!f->has_saving || !f->saving_ns) continue;
    const prof__finding *g = match(cur, f);
    double rem = g && g->has_saving ? (double)g->saving_ns : 0;
    if (g && rem >= (double)f->saving_ns) continue; /* not smaller: nothing was fixed */
    prof__diff_saving *p = realloc(d->savings, (d->nsavings + 1) * sizeof *p);
    if (!p) return PROF_ENOMEM;
    d->savings = p;
    const char *ph = phase_of(f);
    prof__diff_saving *s = &p[d->nsavings];
    *s = (prof__diff_saving){strdup(f->id), strdup(f->title), ph ? strdup(ph) : NULL, (double)f->saving_ns, rem, !g};
    if (!s->id || !s->title || (ph && !s->phase)) {
      free(s->id), free(s->title), free(s->phase);
      return PROF_ENOMEM;
    }
    d->nsavings++;
  }
  if (d->nsavings) qsort(d->savings, d->nsavings, sizeof *d->savings, cmp_predicted);
  return 0;
}

void prof__diff_savings_free(prof__diff *d) {
  for (size_t i = 0; i < d->nsavings; i++) free(d->savings[i].id), free(d->savings[i].title), free(d->savings[i].phase);
  free(d->savings);
  d->savings = NULL;
  d->nsavings = 0;
}
