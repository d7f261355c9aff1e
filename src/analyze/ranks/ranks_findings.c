/* ranks_findings.c — merged measures over the rank summaries and the
 * findings `straggler`, `comm_bound` and `load_imbalance`. Thresholds are
 * documented in docs/multi-rank.md. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ranks/ranks.h"

#define STRAGGLER_MIN_RATIO 0.10  /* excess busy time over the median rank */
#define STRAGGLER_MIN_STEP 0.02   /* ... and at least this share of the step */
#define COMM_BOUND_SHARE 0.30     /* mean communication share of the step */
#define IMBALANCE_RATIO 1.10      /* max / mean compute per step */

enum { PH_COMPUTE, PH_DATA, PH_IO, PH_OTHER, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {"compute", "data", "io", "other"};

static double per_step(const prof__rank_sum *r, uint64_t ns) { return r->steps ? (double)ns / (double)r->steps : 0; }

static double phase_ns(const prof__rank_sum *r, int ph) {
  switch (ph) {
  case PH_COMPUTE: return per_step(r, r->bd_ns[PROF_BD_COMPUTE]);
  case PH_DATA: return per_step(r, r->bd_ns[PROF_BD_DATA]);
  case PH_IO: return per_step(r, r->bd_ns[PROF_BD_IO]);
  default: return per_step(r, r->bd_ns[PROF_BD_OTHER_RANGE] + r->bd_ns[PROF_BD_UNTRACKED]);
  }
}

/* Time per step not spent communicating: what a rank makes the others wait for. */
static double busy_ns(const prof__rank_sum *r) {
  uint64_t c = r->bd_ns[PROF_BD_COMM];
  return per_step(r, r->step_ns > c ? r->step_ns - c : 0);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of f(r) over ranks; `skip` (index or -1) is left out. */
static double median_of(const prof__ranks *rs, double (*f)(const prof__rank_sum *, int), int arg, long skip) {
  double *v = malloc(rs->n * sizeof *v);
  if (!v) return 0;
  size_t m = 0;
  for (size_t i = 0; i < rs->n; i++)
    if ((long)i != skip) v[m++] = f(&rs->r[i], arg);
  double med = 0;
  if (m) {
    qsort(v, m, sizeof *v, cmp_d);
    med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
  }
  free(v);
  return med;
}

static double f_busy(const prof__rank_sum *r, int arg) { (void)arg; return busy_ns(r); }
static double f_phase(const prof__rank_sum *r, int ph) { return phase_ns(r, ph); }

static void add_finding(prof__ranks *rs, const char *id, const char *sev, double value, const char *title,
                        const char *recommendation, const char *fmt, ...) {
  prof__finding *p = realloc(rs->findings, (rs->nfindings + 1) * sizeof *p);
  if (!p) return;
  rs->findings = p;
  prof__finding *f = &p[rs->nfindings];
  memset(f, 0, sizeof *f);
  char measured[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(measured, sizeof measured, fmt, ap);
  va_end(ap);
  snprintf(f->id, sizeof f->id, "%s", id);
  snprintf(f->severity, sizeof f->severity, "%s", sev);
  f->value = value;
  f->title = strdup(title);
  f->measured = strdup(measured);
  f->recommendation = strdup(recommendation);
  if (f->title && f->measured && f->recommendation) rs->nfindings++;
  else {
    free(f->title);
    free(f->measured);
    free(f->recommendation);
  }
}

/* The predicted saving of the finding added last: `ns` per step, of the
 * mean step over the ranks; confidence from the fewest steps of a rank. */
static void add_saving(prof__ranks *rs, double ns, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_saving(prof__ranks *rs, double ns, const char *fmt, ...) {
  if (!rs->nfindings || !(rs->step_mean_ns > 0)) return;
  prof__finding *f = &rs->findings[rs->nfindings - 1];
  uint64_t steps = UINT64_MAX;
  for (size_t i = 0; i < rs->n; i++)
    if (rs->r[i].steps < steps) steps = rs->r[i].steps;
  double v = ns > rs->step_mean_ns ? rs->step_mean_ns : ns;
  f->has_saving = 1;
  f->saving_ns = prof__an_d2ns(v);
  f->saving_pct = 100 * (double)f->saving_ns / rs->step_mean_ns;
  f->saving_conf = prof__an_confidence(rs->n ? steps : 0, 0);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->saving_model, sizeof f->saving_model, fmt, ap);
  va_end(ap);
}

static void means(prof__ranks *rs) {
  double step = 0, comp = 0, maxc = 0, share = 0, wait = 0, ov = 0;
  for (size_t i = 0; i < rs->n; i++) {
    const prof__rank_sum *r = &rs->r[i];
    double c = phase_ns(r, PH_COMPUTE);
    step += per_step(r, r->step_ns);
    comp += c;
    if (c > maxc) maxc = c;
    share += r->step_ns ? (double)r->bd_ns[PROF_BD_COMM] / (double)r->step_ns : 0;
    wait += per_step(r, r->wait_ns);
    uint64_t flight = r->comm_all_ns + r->hidden_ns;
    ov += flight ? (double)r->hidden_ns / (double)flight : 0;
  }
  double n = rs->n ? (double)rs->n : 1;
  rs->step_mean_ns = step / n;
  rs->compute_mean_ns = comp / n;
  rs->load_imbalance = comp > 0 ? maxc / (comp / n) : 1;
  rs->comm_share = share / n;
  rs->wait_mean_ns = wait / n;
  rs->overlap = ov / n;
}

static void find_straggler(prof__ranks *rs) {
  rs->straggler = -1;
  if (rs->n < 2) return;
  long worst = 0;
  for (size_t i = 1; i < rs->n; i++)
    if (busy_ns(&rs->r[i]) > busy_ns(&rs->r[worst])) worst = (long)i;
  double med = median_of(rs, f_busy, 0, worst);
  double excess = busy_ns(&rs->r[worst]) - med;
  int phase = PH_COMPUTE;
  double best = -1;
  for (int ph = 0; ph < PH_COUNT; ph++) {
    double d = phase_ns(&rs->r[worst], ph) - median_of(rs, f_phase, ph, worst);
    if (d > best) best = d, phase = ph;
  }
  rs->straggler_excess_ns = excess;
  rs->straggler_ratio = med > 0 ? excess / med : 0;
  rs->straggler_phase = phase_names[phase];
  if (excess <= 0 || rs->straggler_ratio < STRAGGLER_MIN_RATIO || excess < STRAGGLER_MIN_STEP * rs->step_mean_ns) return;
  rs->straggler = worst;
  const prof__rank_sum *r = &rs->r[worst];
  char title[160], a[32], b[32], d[32], w[32];
  snprintf(title, sizeof title, "Rank %ld is a straggler: %s per step slower than the median rank, in %s", r->rank,
           prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(excess)), phase_names[phase]);
  add_finding(rs, "straggler", excess >= 0.25 * rs->step_mean_ns ? "high" : "medium", rs->straggler_ratio, title,
              "Look at this rank's slower phase: its host (CPU/GPU model, clocks, other jobs), its data shard or "
              "input pipeline, or an uneven split of the work; the other ranks wait for it in every collective.",
              "rank %ld (%s) works %s per step outside communication, %.0f%% more than the median rank (%s); its %s "
              "phase is %s per step longer than the median; the ranks wait %s per step on average inside communication",
              r->rank, r->host, prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(busy_ns(r))), 100 * rs->straggler_ratio,
              prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(med)), phase_names[phase],
              prof__an_fmt_ns(d, sizeof d, prof__an_d2ns((best > 0 ? best : 0))),
              prof__an_fmt_ns(w, sizeof w, prof__an_d2ns(rs->wait_mean_ns)));
  add_saving(rs, excess,
             "the other ranks wait for it in every collective: rank %ld at the median rank's pace saves its excess "
             "work, %s per step",
             r->rank, a);
}

static void find_comm_bound(prof__ranks *rs) {
  if (rs->comm_share < COMM_BOUND_SHARE) return;
  double comm = rs->comm_share * rs->step_mean_ns;
  double waitshare = comm > 0 ? rs->wait_mean_ns / comm : 0;
  char title[160], a[32], b[32];
  snprintf(title, sizeof title, "Communication takes %.0f%% of the step", 100 * rs->comm_share);
  add_finding(rs, "comm_bound", rs->comm_share >= 0.5 ? "high" : "medium", rs->comm_share, title,
              waitshare >= 0.5 ? "Most of it is waiting for slower ranks: fix the straggler or balance the work first."
                               : "Send fewer or larger messages (bucket gradients), overlap communication with "
                                 "compute (nonblocking collectives started during backward), or use larger batches "
                                 "per rank.",
              "communication %s of a %s step on average over %zu ranks (%.0f%% of it estimated as waiting for other "
              "ranks); overlap with other work %.0f%%",
              prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(comm)), prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(rs->step_mean_ns)),
              rs->n, 100 * waitshare, 100 * rs->overlap);
  /* overlapped with compute, communication costs max(comm, compute) */
  double exposed = comm * (1 - rs->overlap), save = exposed < rs->compute_mean_ns ? exposed : rs->compute_mean_ns;
  add_saving(rs, save,
             "the communication not yet overlapped (%s per step, %.0f%% overlapped) hidden under compute (%s per "
             "step): the step takes max(comm, compute) instead of their sum",
             prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(exposed)), 100 * rs->overlap,
             prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(rs->compute_mean_ns)));
}

static void find_imbalance(prof__ranks *rs) {
  if (rs->n < 2 || rs->load_imbalance < IMBALANCE_RATIO) return;
  long worst = 0;
  for (size_t i = 1; i < rs->n; i++)
    if (phase_ns(&rs->r[i], PH_COMPUTE) > phase_ns(&rs->r[worst], PH_COMPUTE)) worst = (long)i;
  char title[160], a[32], b[32];
  snprintf(title, sizeof title, "Compute is unevenly spread: the busiest rank computes %.2fx the mean",
           rs->load_imbalance);
  add_finding(rs, "load_imbalance", rs->load_imbalance >= 1.5 ? "high" : "medium", rs->load_imbalance, title,
              "Even out the work per rank (shard sizes, sequence lengths, model partition) or the devices the ranks "
              "run on; every rank runs at the pace of the busiest one.",
              "compute per step: max %s (rank %ld), mean %s over %zu ranks",
              prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(phase_ns(&rs->r[worst], PH_COMPUTE))), rs->r[worst].rank,
              prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(rs->compute_mean_ns)), rs->n);
  double max = phase_ns(&rs->r[worst], PH_COMPUTE);
  add_saving(rs, max - rs->compute_mean_ns,
             "every rank runs at the busiest one's pace: work spread evenly, each computes the mean (%s) instead of "
             "the max (%s) per step",
             b, a);
}

void prof__ranks_finish(prof__ranks *rs) {
  means(rs);
  find_straggler(rs);
  find_comm_bound(rs);
  find_imbalance(rs);
}
