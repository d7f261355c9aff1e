/* step_stats.c — the model's step statistics (count, total, mean, median,
 * p95, min, max of the step lengths) and the warm-up flag of the first
 * step, computed once all steps are known (prof__an_model_finish). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/engine/an_internal.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void prof__an_step_stats(an_priv *p, prof__step_stats *st, size_t skip) {
  prof__an *an = &p->pub;
  memset(st, 0, sizeof *st);
  size_t ns;
  const prof__step *steps = prof__an_all_steps(an, &ns);
  uint64_t *d = malloc((ns + 1) * sizeof *d);
  if (!d) { p->oom = 1; return; }
  size_t n = 0;
  for (size_t i = 0; i < ns; i++)
    if (i != skip) d[n++] = steps[i].end_ns - steps[i].begin_ns;
  if (n) {
    qsort(d, n, sizeof *d, cmp_u64);
    st->count = n;
    for (size_t i = 0; i < n; i++) st->total_ns += d[i];
    st->mean_ns = st->total_ns / n;
    st->median_ns = n % 2 ? d[n / 2] : d[n / 2 - 1] / 2 + d[n / 2] / 2 + (d[n / 2 - 1] % 2 + d[n / 2] % 2) / 2;
    st->p95_ns = d[(n * 95 + 99) / 100 - 1];
    st->min_ns = d[0];
    st->max_ns = d[n - 1];
  }
  free(d);
}

void prof__an_flag_warmup(an_priv *p) {
  prof__an *an = &p->pub;
  size_t ns;
  prof__step *steps = (prof__step *)prof__an_all_steps(an, &ns);
  if (ns < 3) return;
  prof__step_stats rest;
  prof__an_step_stats(p, &rest, 0);
  uint64_t first = steps[0].end_ns - steps[0].begin_ns;
  if (rest.count && first > rest.median_ns && first - rest.median_ns > rest.median_ns)
    steps[0].warmup_outlier = 1;
}
