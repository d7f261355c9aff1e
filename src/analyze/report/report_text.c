/* report_text.c — the report for people: header facts, findings first,
 * then steps, the step-time breakdown, ranges by self time and the
 * sections' own parts, with a line of trace-health counts (the writer's
 * raw footer is `mlprof info`'s).
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/util/fmt.h"
#include "analyze/util/termsafe.h"

/* Ranges listed in the text report (the JSON has all of them). */
#define TEXT_MAX_RANGES 25
/* Per-step lines: all when there are at most this many, else the slowest. */
#define TEXT_MAX_STEPS 20

#define NS(buf, v) prof__an_fmt_ns(buf, sizeof buf, v)
/* Text from the trace as one field (termsafe.h). */
#define TN(buf, s) prof__term_name(buf, sizeof buf, s)

/* "1 step", "2 steps". */
static const char *steps_word(unsigned long long n) { return n == 1 ? "step" : "steps"; }

static const char *hdr(const prof__an *an, const char *k) {
  const char *v = prof__an_header(an, k);
  return v && *v ? v : "?";
}

static const char *ftr(const prof__an *an, const char *k) {
  const char *v = prof__an_footer(an, k);
  return v ? v : "?";
}

static void text_header(prof__an *an, FILE *out) {
  char d[32], a[PROF_TERM_NAME], b[PROF_TERM_NAME], c[PROF_TERM_NAME], e[PROF_TERM_NAME];
  fprintf(out, "mlprof report — %s (pid %s on %s)\n", TN(a, hdr(an, "program")), TN(b, hdr(an, "pid")),
          TN(c, hdr(an, "hostname")));
  fprintf(out, "trace: %s\n", TN(a, an->path));
  fprintf(out, "generator: mlprof %s\n", MLPROF_VERSION_STRING);
  if (an->written_by) fprintf(out, "report written by: %s\n", an->written_by);
  const char *prev = prof__an_header(an, "previous_trace");
  if (prev && *prev)
    fprintf(out, "previous trace: %s (written before by this process: an earlier image or session)\n", TN(a, prev));
  const char *cmd = prof__an_header(an, "cmdline");
  if (cmd && *cmd) fprintf(out, "command: %s\n", TN(a, cmd));
  fprintf(out, "clock: %s; %llu events, %zu threads, %llu chunks, %s traced\n", TN(a, hdr(an, "clock")),
          (unsigned long long)an->events, an->nthreads, (unsigned long long)an->chunks,
          NS(d, an->last_ns - an->first_ns));
  fprintf(out, "lost %llu events\n", (unsigned long long)an->lost_events);
  if (an->truncated)
    fprintf(out, "WARNING: the trace is truncated (%s); this report covers what was read.\n", TN(a, an->trunc_msg));
  char bound[768];
  if (prof__an_bound_note(an, bound, sizeof bound)) fprintf(out, "NOTE: %s.\n", bound);
  const char *sig = prof__an_footer(an, "crash.signal");
  if (sig)
    fprintf(out, "CRASH: the program died of %s (thread %s, pc %s, address %s); the trace was flushed at the "
                 "crash and holds every step finished before it.\n",
            TN(a, sig), TN(b, ftr(an, "crash.tid")), TN(c, ftr(an, "crash.pc")), TN(e, ftr(an, "crash.addr")));
  fputc('\n', out);
}

/* The headline: findings with a predicted saving, largest first (the
 * findings are sorted that way). */
#define TEXT_MAX_SAVINGS 5

static void text_savings(prof__an *an, FILE *out) {
  size_t n = 0;
  char d[32], m[32];
  for (size_t i = 0; i < an->nfindings; i++) n += an->findings[i].has_saving && an->findings[i].saving_ns;
  if (!n) return;
  fprintf(out, "What would make steps faster (predicted saving per step; mean step %s)\n",
          NS(m, an->step_stats.mean_ns));
  for (size_t i = 0, k = 0; i < an->nfindings && k < TEXT_MAX_SAVINGS; i++) {
    const prof__finding *f = &an->findings[i];
    if (!f->has_saving || !f->saving_ns) continue;
    char t[PROF_TERM_NAME * 2];
    fprintf(out, "  %zu. %10s %5.1f%%  %-6s  %s: %s\n", ++k, NS(d, f->saving_ns), f->saving_pct,
            prof__an_confidence_label(f->saving_conf), f->id, TN(t, f->title));
  }
  if (n > TEXT_MAX_SAVINGS) fprintf(out, "  ... %zu more below\n", n - TEXT_MAX_SAVINGS);
  fputs("  (each fix alone; savings of overlapping causes do not add up)\n\n", out);
}

static void text_findings(prof__an *an, FILE *out) {
  fprintf(out, "Findings (%zu)\n", an->nfindings);
  if (!an->nfindings) fputs("  none\n", out);
  for (size_t i = 0; i < an->nfindings; i++) {
    const prof__finding *f = &an->findings[i];
    char t[PROF_TERM_NAME * 2], details[PROF_FINDING_KEYS * 160], shown[sizeof details];
    fprintf(out, "  [%s] %s: %s\n", f->severity, f->id, TN(t, f->title));
    fprintf(out, "      measured: %s\n", TN(t, f->measured));
    if (f->has_saving) {
      char sv[32];
      fprintf(out, "      saving:   %s per step (%.1f%%, %s confidence): %s\n", NS(sv, f->saving_ns), f->saving_pct,
              prof__an_confidence_label(f->saving_conf), TN(t, f->saving_model));
    }
    if (prof__an_finding_details(f, details, sizeof details)) fprintf(out, "      details:  %s\n", TN(shown, details));
    fprintf(out, "      advice:   %s\n", TN(t, f->recommendation));
  }
  fputc('\n', out);
}

static void text_stats(FILE *out, const char *label, const prof__step_stats *st) {
  char a[32], b[32], c[32], d[32], e[32];
  fprintf(out, "  %-8s %zu %s: mean %s, median %s, p95 %s, min %s, max %s\n", label, st->count,
          steps_word(st->count), NS(a, st->mean_ns), NS(b, st->median_ns), NS(c, st->p95_ns), NS(d, st->min_ns), NS(e, st->max_ns));
}

static void text_step_line(prof__an *an, FILE *out, const prof__step *s) {
  char d[32];
  uint64_t dur = s->end_ns - s->begin_ns;
  fprintf(out, "    step %-6llu %10s ", (unsigned long long)s->number, NS(d, dur));
  uint64_t other = s->bd_ns[PROF_BD_OTHER_RANGE] + s->bd_ns[PROF_BD_UNTRACKED];
  for (int b = 0; b < PROF_BD_OTHER_RANGE; b++)
    fprintf(out, " %s %5.1f%%", prof__an_bucket_name(b), dur ? 100.0 * (double)s->bd_ns[b] / (double)dur : 0.0);
  fprintf(out, " other %5.1f%%", dur ? 100.0 * (double)other / (double)dur : 0.0);
  if (s->have & PROF_STEP_HAS_CPU) fprintf(out, "  cpu %5.1f%%", dur ? 100.0 * (double)s->cpu_ns / (double)dur : 0.0);
  if (s->have & PROF_STEP_HAS_RSS) fprintf(out, "  rss %s", prof__fmt_bytes(d, sizeof d, (double)s->rss_peak_bytes));
  fprintf(out, "%s\n", s->warmup_outlier ? "  (warm-up)" : "");
  (void)an;
}

/* The step thread's CPU time and the memory peaks over the steps. */
static void text_step_res(prof__an *an, FILE *out) {
  prof__step_res r;
  prof__an_step_res(an, &r);
  size_t n = prof__an_nall(an);
  char a[32], b[32];
  if (r.cpu_steps)
    fprintf(out, "  step thread CPU: %s of %s step time (%.1f%%), known for %zu of %zu %s\n", NS(a, r.cpu_ns),
            NS(b, r.cpu_wall_ns), r.cpu_wall_ns ? 100.0 * (double)r.cpu_ns / (double)r.cpu_wall_ns : 0.0,
            r.cpu_steps, n, steps_word(n));
  if (r.rss_steps)
    fprintf(out, "  peak RSS during a step: %s (step %llu), known for %zu of %zu %s\n",
            prof__fmt_bytes(a, sizeof a, (double)r.rss_peak_bytes), (unsigned long long)r.rss_peak_step, r.rss_steps,
            n, steps_word(n));
  if (r.live_steps)
    fprintf(out, "  peak live heap during a step: %s (step %llu), known for %zu of %zu %s\n",
            prof__fmt_bytes(a, sizeof a, (double)r.live_peak_bytes), (unsigned long long)r.live_peak_step,
            r.live_steps, n, steps_word(n));
}

static uint64_t dur_of(const prof__an *an, size_t i) { return prof__an_run_steps(an)[i].end_ns - prof__an_run_steps(an)[i].begin_ns; }

/* The k slowest steps, slowest first, by insertion into a short list. */
static size_t slowest(const prof__an *an, size_t *top, size_t k) {
  size_t n = 0;
  for (size_t i = 0; i < prof__an_nall(an); i++) {
    uint64_t d = dur_of(an, i);
    if (n == k && d <= dur_of(an, top[n - 1])) continue;
    size_t j = n < k ? n++ : k - 1;
    while (j > 0 && dur_of(an, top[j - 1]) < d) {
      top[j] = top[j - 1];
      j--;
    }
    top[j] = i;
  }
  return n;
}

static void text_step_list(prof__an *an, FILE *out) {
  if (prof__an_nall(an) <= TEXT_MAX_STEPS) {
    fputs("  per step:\n", out);
    for (size_t i = 0; i < prof__an_nall(an); i++) text_step_line(an, out, &prof__an_run_steps(an)[i]);
    return;
  }
  size_t top[TEXT_MAX_STEPS / 2];
  size_t n = slowest(an, top, TEXT_MAX_STEPS / 2);
  fprintf(out, "  slowest %zu of %zu steps (all are in the JSON report):\n", n, prof__an_nall(an));
  for (size_t i = 0; i < n; i++) text_step_line(an, out, &prof__an_run_steps(an)[top[i]]);
}

static void text_steps(prof__an *an, FILE *out) {
  fputs("Steps\n", out);
  if (!prof__an_nall(an)) {
    fprintf(out, "  no complete steps%s\n\n", an->unfinished_steps ? " (some never ended)" : "");
    return;
  }
  text_stats(out, "all", &an->step_stats);
  if (prof__an_run_steps(an)[0].warmup_outlier) {
    fprintf(out, "  step %llu is a warm-up outlier (> 2x the median of the others)\n",
            (unsigned long long)prof__an_run_steps(an)[0].number);
    text_stats(out, "steady", &an->steady_stats);
  }
  if (an->unfinished_steps) {
    char d[32];
    fprintf(out, "  %llu unfinished %s not counted (begun, never stopped: the last, step %llu, was open %s when the "
                 "trace ended)\n",
            (unsigned long long)an->unfinished_steps, steps_word(an->unfinished_steps),
            (unsigned long long)an->unfinished_last_number,
            prof__an_fmt_ns(d, sizeof d, an->unfinished_last_open_ns));
  }
  text_step_res(an, out);
  text_step_list(an, out);
  fputc('\n', out);
}

static void text_breakdown(prof__an *an, FILE *out) {
  uint64_t bd[PROF_BD_COUNT];
  char d[32];
  prof__an_bd_total(an, bd);
  if (!prof__an_nall(an)) return;
  fprintf(out, "Step-time breakdown (thread running the steps, %s in %zu %s)\n", NS(d, an->step_stats.total_ns),
          prof__an_nall(an), steps_word(prof__an_nall(an)));
  if (prof__an_step_lost(an)) {
    char note[512];
    fprintf(out, "  LOSSY: %s\n", prof__an_step_loss_note(an, note, sizeof note));
  }
  for (int b = 0; b < PROF_BD_OTHER_RANGE; b++)
    fprintf(out, "  %-8s %6.1f%%  %s\n", prof__an_bucket_name(b), 100 * prof__an_share(an, bd[b]), NS(d, bd[b]));
  uint64_t other = bd[PROF_BD_OTHER_RANGE] + bd[PROF_BD_UNTRACKED];
  fprintf(out, "  %-8s %6.1f%%  %s", "other", 100 * prof__an_share(an, other), NS(d, other));
  fprintf(out, "  (untracked %.1f%%)\n\n", 100 * prof__an_share(an, bd[PROF_BD_UNTRACKED]));
}

static void text_ranges(prof__an *an, FILE *out) {
  char t[32], s[32], a[32];
  if (!an->nranges) return;
  size_t *idx = prof__ranges_by_self(an);
  if (!idx) return;
  fprintf(out, "Ranges by self time (%zu)\n", an->nranges);
  fprintf(out, "  %-32s %-8s %10s %12s %12s %12s %7s\n", "name", "category", "calls", "total", "self", "avg",
          "%step");
  for (size_t i = 0; i < an->nranges && i < TEXT_MAX_RANGES; i++) {
    const prof__range_stat *r = &an->ranges[idx[i]];
    char nm[PROF_TERM_NAME];
    fprintf(out, "  %-32.32s %-8s %10llu %12s %12s %12s %6.1f%%\n", TN(nm, prof__an_str(an, r->name)),
            prof__an_cat_name(r->cat), (unsigned long long)r->count, NS(t, r->total_ns), NS(s, r->self_ns),
            NS(a, r->count ? r->total_ns / r->count : 0), 100 * prof__an_detail_share(an, r->in_step_self_ns));
  }
  if (an->nranges > TEXT_MAX_RANGES)
    fprintf(out, "  ... %zu more in the JSON report\n", an->nranges - TEXT_MAX_RANGES);
  fputc('\n', out);
  free(idx);
}

static void text_footer(prof__an *an, FILE *out) {
  fprintf(out, "Trace health: lost %llu events, misuse %llu, unmatched range ends %llu, unclosed ranges %llu, "
               "unfinished steps %llu%s\n",
          (unsigned long long)an->lost_events, (unsigned long long)an->misuse,
          (unsigned long long)an->unmatched_range_ends, (unsigned long long)an->unclosed_ranges,
          (unsigned long long)an->unfinished_steps, an->truncated ? ", TRUNCATED" : "");
  /* The writer's raw counters (footer keys, misuse by kind) are for
   * `mlprof info`; the report points there only when something is off. */
  char p[PROF_TERM_NAME];
  if (an->misuse || an->lost_events)
    fprintf(out, "  details by kind: mlprof info %s\n", TN(p, an->path));
}

int prof__report_text(prof__an *an, FILE *out) {
  text_header(an, out);
  text_savings(an, out);
  text_findings(an, out);
  text_steps(an, out);
  text_breakdown(an, out);
  text_ranges(an, out);
  for (size_t i = 0; i < prof__nsections; i++)
    if (prof__sections[i]->text) prof__sections[i]->text(an, an->section_state[i], out);
  text_footer(an, out);
  return ferror(out) ? PROF_EIO : 0;
}
