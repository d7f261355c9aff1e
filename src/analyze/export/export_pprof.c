/* export_pprof.c — sampled stacks as a pprof CPU profile (built by
 * export_pprof_build.c). Samples of the report's clock (CPU samples when
 * there are any, else wall-clock samples) are merged by call stack,
 * innermost range and step, read again from the trace; each carries two
 * values, cpu_samples (count) and cpu_time (nanoseconds: weight x period),
 * or wall_* in wall-clock mode, and the labels `range` (the innermost range
 * open on the sampled thread, a string) and `step` (the number of the step
 * under way, a number), each left out when there was none. So
 * `pprof -tagfocus=range=backward` keeps the samples taken in "backward"
 * and `pprof -tags` lists the time per range and step. */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_pprof_int.h"
#include "analyze/sections/functions/sec_functions.h"
#include "trace/ev_sample.h"

/* Samples merged by (stack, range, step). */
typedef struct lsample {
  uint32_t stack, range;
  uint64_t step;   /* step index + 1, 0: outside every step */
  uint64_t weight; /* sampling periods */
} lsample;

typedef struct lset {
  prof__u64map sr;   /* range << 32 | stack -> index + 1 into pairs */
  uint64_t *pairs;   /* range << 32 | stack */
  size_t npairs, cap;
  prof__u64map agg;  /* pair index << 32 | step slot -> weight */
  int oom;
} lset;

static void lset_add(lset *s, uint32_t stack, uint32_t range, uint64_t step, uint64_t w) {
  uint64_t key = (uint64_t)range << 32 | stack, idx = prof__u64map_get(&s->sr, key);
  if (!idx) {
    if (s->npairs == s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 256;
      uint64_t *p = realloc(s->pairs, cap * sizeof *p);
      if (!p) {
        s->oom = 1;
        return;
      }
      s->pairs = p;
      s->cap = cap;
    }
    s->pairs[s->npairs] = key;
    idx = ++s->npairs;
    if (prof__u64map_add(&s->sr, key, idx)) s->oom = 1;
  }
  if (step > 0xffffffffu || prof__u64map_add(&s->agg, (idx - 1) << 32 | step, w)) s->oom = 1;
}

static int by_key(const void *a, const void *b) {
  const lsample *x = a, *y = b;
  if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
  if (x->range != y->range) return x->range < y->range ? -1 : 1;
  return (x->step > y->step) - (x->step < y->step);
}

/* Read the samples of clock `mode` again and merge them; returns the count
 * (*out malloc'd, ordered by stack, range and step) or a negative error. */
static long labelled(prof__an *an, int mode, lsample **out) {
  int rc = prof__reader_rewind(an->reader);
  if (rc) return rc;
  lset s = {0};
  prof__rec rec;
  while (!s.oom && (rc = prof__reader_next(an->reader, &rec)) == 1) {
    if (rec.kind != PROF_REC_EVENT || rec.ev.type != PROF_EV_SAMPLE || prof__ev_sample_mode(&rec.ev) != mode) continue;
    long step = prof__an_step_at(an, rec.ev.ts);
    lset_add(&s, rec.ev.name, prof__ev_sample_range(&rec.ev), (uint64_t)(step + 1), prof__ev_sample_weight(&rec.ev));
  }
  lsample *v = s.oom || (rc && rc != PROF_ETRUNC) ? NULL : malloc((s.agg.n + 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; v && i < s.agg.cap; i++) {
    if (!s.agg.k[i]) continue;
    uint64_t k = s.agg.k[i] - 1, pair = s.pairs[k >> 32];
    v[n++] = (lsample){(uint32_t)pair, (uint32_t)(pair >> 32), k & 0xffffffffu, s.agg.v[i]};
  }
  prof__u64map_free(&s.sr);
  prof__u64map_free(&s.agg);
  free(s.pairs);
  if (!v) return s.oom ? PROF_ENOMEM : rc ? rc : PROF_ENOMEM;
  qsort(v, n, sizeof *v, by_key);
  *out = v;
  return (long)n;
}

int prof__export_pprof(prof__an *an, FILE *out) {
  int mode = 0;
  double period = 0;
  lsample *v = NULL;
  long n = prof__functions_stacks(an, NULL, &mode, &period) ? labelled(an, mode, &v) : 0;
  if (n < 0) return (int)n;
  prof__pp p;
  prof__pp_init(&p, an);
  prof__pp_sample_type(&p, mode ? "wall_samples" : "cpu_samples", "count");
  prof__pp_sample_type(&p, mode ? "wall_time" : "cpu_time", "nanoseconds");
  for (long i = 0; i < n; i++) {
    const lsample *s = &v[i];
    int64_t vals[2] = {(int64_t)s->weight, (int64_t)prof__an_d2ns((double)s->weight * period)};
    prof__pp_label l[2];
    int nl = 0;
    if (s->range) l[nl++] = (prof__pp_label){"range", prof__an_str(an, s->range), 0};
    if (s->step) l[nl++] = (prof__pp_label){"step", NULL, (int64_t)an->steps[s->step - 1].number};
    prof__pp_sample(&p, s->stack, vals, l, nl);
  }
  free(v);
  const char *t = mode ? "wall_time" : "cpu_time";
  return prof__pp_finish(&p, out, t, "nanoseconds", (int64_t)prof__an_d2ns(period), t);
}
