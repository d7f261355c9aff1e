/* findings.c — the core findings: conclusions drawn from the core model
 * with what was measured and what to do about it. The thresholds are
 * documented in docs/report-schema.md; keep the two in step.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"

/* Input-bound thresholds (share of step time in data-category ranges), the
 * same classes TensorFlow's profiler uses. */
#define INPUT_HIGH_PCT 20
#define INPUT_MEDIUM_PCT 5

/* num/den >= pct/100, exactly, without overflow or rounding. */
static int share_at_least(uint64_t num, uint64_t den, unsigned pct) {
  return den && (unsigned __int128)num * 100 >= (unsigned __int128)den * pct;
}

/* Loading overlapped with the rest of the step (a prefetch thread): each
 * step takes max(data, rest) instead of data + rest, a saving of
 * min(data, rest) per step. The savings section replaces this model when
 * the data time is a wait for another thread that already overlaps. */
static void saving_input_bound(prof__an *an) {
  uint64_t sum = 0, data = 0;
  for (size_t i = 0; i < prof__an_nall(an); i++) {
    const prof__step *s = &prof__an_run_steps(an)[i];
    uint64_t dur = s->end_ns - s->begin_ns, d = s->bd_ns[PROF_BD_DATA] < dur ? s->bd_ns[PROF_BD_DATA] : dur;
    sum += d < dur - d ? d : dur - d;
    data += d;
  }
  if (!prof__an_nall(an)) return;
  double n = (double)prof__an_nall(an);
  char a[32], b[32];
  prof__an_finding_saving(an, (double)sum / n, prof__an_confidence(prof__an_nall(an), 0),
                          "loading overlapped with compute (prefetch on a thread): each step takes max(data, rest) "
                          "instead of their sum; mean over %zu steps of min(data, rest), data %s and rest %s per step",
                          prof__an_nall(an), prof__an_fmt_ns(a, sizeof a, prof__an_d2ns((double)data / n)),
                          prof__an_fmt_ns(b, sizeof b, prof__an_d2ns((double)(an->step_stats.total_ns - data) / n)));
}

static void finding_input_bound(prof__an *an) {
  uint64_t bd[PROF_BD_COUNT];
  prof__an_bd_total(an, bd);
  uint64_t total = an->step_stats.total_ns, data = bd[PROF_BD_DATA];
  const char *sev = share_at_least(data, total, INPUT_HIGH_PCT)     ? "high"
                    : share_at_least(data, total, INPUT_MEDIUM_PCT) ? "medium"
                                                                    : NULL;
  if (!sev || !data) return;
  double share = prof__an_share(an, data);
  char d[32], t[32], title[160], measured[400];
  snprintf(title, sizeof title, "Training is input-bound: %.1f%% of step time is spent loading data", share * 100);
  snprintf(measured, sizeof measured,
           "data-category ranges took %s of %s step time (%.1f%%) over %zu steps, on the thread running the steps",
           prof__an_fmt_ns(d, sizeof d, data), prof__an_fmt_ns(t, sizeof t, total), share * 100, prof__an_nall(an));
  prof__an_finding(an, "input_bound", sev, share, title, measured,
                   "Overlap input with compute: prefetch the next batch while the current step runs "
                   "(a prefetch queue or double buffering), use more data-loader threads or worker "
                   "processes, and cache decoded/augmented samples instead of decoding them every epoch.");
  saving_input_bound(an);
}

uint64_t prof__an_step_lost(const prof__an *an) {
  uint64_t lost = 0;
  for (size_t i = 0; i < an->nthreads; i++)
    if (an->threads[i].steps) lost += an->threads[i].lost;
  return lost;
}

const char *prof__an_step_loss_note(const prof__an *an, char *buf, size_t n) {
  snprintf(buf, n,
           "%llu events of the thread running the steps were lost: ranges and steps may be missing, so the "
           "breakdown is incomplete and the input_bound, untracked_time, step_time_variance and warmup_step "
           "findings are withheld. Record with MLPROF_RING_FULL=wait or a larger MLPROF_RING_KB.",
           (unsigned long long)prof__an_step_lost(an));
  return buf;
}

static void finding_lost_events(prof__an *an) {
  if (!an->lost_events) return;
  uint64_t all = an->events + an->lost_events;
  const char *sev = share_at_least(an->lost_events, all, 1) ? "high" : "medium";
  const char *ring = prof__an_header(an, "ring_kb");
  unsigned long long in_sig = prof__an_footer_u64(an, "events_lost_in_signal_handlers");
  if (in_sig > an->lost_events) in_sig = an->lost_events;
  char measured[320], rec[320];
  if (in_sig)
    snprintf(measured, sizeof measured,
             "lost %llu events (%.2f%% of %llu recorded): %llu because a per-thread ring was full, %llu made "
             "from a signal handler that interrupted another profiler call on its thread",
             (unsigned long long)an->lost_events, 100.0 * (double)an->lost_events / (double)all,
             (unsigned long long)all, (unsigned long long)an->lost_events - in_sig, in_sig);
  else
    snprintf(measured, sizeof measured, "lost %llu events (%.2f%% of %llu recorded) because a per-thread ring was full",
             (unsigned long long)an->lost_events, 100.0 * (double)an->lost_events / (double)all,
             (unsigned long long)all);
  snprintf(rec, sizeof rec,
           "Set a larger MLPROF_RING_KB (now %s KiB; try 4x), record with MLPROF_RING_FULL=wait (lossless, "
           "the program waits for the writer instead), or annotate fewer, coarser ranges. Ranges and steps on "
           "the affected threads may be incomplete; conclusions that need them are withheld.",
           ring ? ring : "1024");
  prof__an_finding(an, "lost_events", sev, (double)an->lost_events, "Events were dropped while profiling",
                   measured, rec);
}

static void finding_truncated(prof__an *an) {
  if (!an->truncated) return;
  char measured[400];
  snprintf(measured, sizeof measured, "%s; %llu events in %llu chunks were read", an->trunc_msg,
           (unsigned long long)an->events, (unsigned long long)an->chunks);
  prof__an_finding(an, "truncated_trace", "medium", 1, "The trace ends early; the report covers what was written",
                   measured,
                   "Let the program call prof_shutdown() or exit normally so the trace is complete; a crash "
                   "or kill loses the last unflushed events.");
}

static void finding_steps(prof__an *an) {
  if (prof__an_nall(an) == 0) {
    prof__an_finding(an, "no_steps", "info", 0, "No training steps were recorded",
                     "the trace holds no complete prof_start()/prof_stop() pair",
                     "Wrap each training step in prof_start()/prof_stop() to get step statistics and the "
                     "step-time breakdown.");
    return;
  }
  char a[32], b[32], m[320];
  if (prof__an_run_steps(an)[0].warmup_outlier) {
    uint64_t first = prof__an_run_steps(an)[0].end_ns - prof__an_run_steps(an)[0].begin_ns;
    double ratio = an->steady_stats.median_ns ? (double)first / (double)an->steady_stats.median_ns : 0;
    snprintf(m, sizeof m, "step %llu took %s, %.1fx the median of the other steps (%s)",
             (unsigned long long)prof__an_run_steps(an)[0].number, prof__an_fmt_ns(a, sizeof a, first), ratio,
             prof__an_fmt_ns(b, sizeof b, an->steady_stats.median_ns));
    prof__an_finding(an, "warmup_step", "info", ratio, "The first step is a warm-up outlier", m,
                     "Expected for a first step (allocation, compilation, cold caches). Leave it out when "
                     "measuring throughput: the steady-state statistics exclude it.");
  }
  const prof__step_stats *st = &an->steady_stats;
  if (st->count < 5 || !st->median_ns) return;
  double ratio = (double)st->p95_ns / (double)st->median_ns;
  const char *sev = ratio >= 2.0 ? "medium" : ratio >= 1.5 ? "low" : NULL;
  if (!sev) return;
  snprintf(m, sizeof m, "p95 step time %s is %.2fx the median %s over %zu steps", prof__an_fmt_ns(a, sizeof a, st->p95_ns),
           ratio, prof__an_fmt_ns(b, sizeof b, st->median_ns), st->count);
  prof__an_finding(an, "step_time_variance", sev, ratio, "Step times vary a lot", m,
                   "Look at the slowest steps in the per-step table: periodic work (checkpoints, evaluation, "
                   "logging), input stalls and garbage collection cause spikes. Move periodic work off the "
                   "training thread or spread it across steps.");
  /* every steady step at the median: the mean drops by mean - median */
  if (st->mean_ns > st->median_ns)
    prof__an_finding_saving(an, (double)(st->mean_ns - st->median_ns), prof__an_confidence(st->count, 0),
                            "every steady step as fast as the median: steady mean %s - median %s over %zu steps",
                            prof__an_fmt_ns(a, sizeof a, st->mean_ns), prof__an_fmt_ns(b, sizeof b, st->median_ns),
                            st->count);
}

static void finding_untracked(prof__an *an) {
  uint64_t bd[PROF_BD_COUNT];
  prof__an_bd_total(an, bd);
  uint64_t total = an->step_stats.total_ns;
  if (!share_at_least(bd[PROF_BD_UNTRACKED], total, 50) || !bd[PROF_BD_UNTRACKED]) return;
  double share = prof__an_share(an, bd[PROF_BD_UNTRACKED]);
  char m[200];
  snprintf(m, sizeof m, "%.1f%% of step time is outside every range on the step thread", share * 100);
  prof__an_finding(an, "untracked_time", "info", share, "Most step time is not annotated", m,
                   "Add prof_range_push_cat()/prof_range_pop() around the main phases of a step (data, "
                   "forward/backward, optimizer, communication) so the breakdown can attribute the time.");
}

static void finding_misuse(prof__an *an) {
  uint64_t n = an->misuse + an->unmatched_range_ends + an->unmatched_step_ends;
  if (!n) return;
  unsigned long long too_deep = prof__an_footer_u64(an, "misuse.range_too_deep");
  char m[400], extra[96] = "";
  if (too_deep)
    snprintf(extra, sizeof extra, " (%llu of them ranges nested deeper than 256 levels)", too_deep);
  snprintf(m, sizeof m,
           "%llu ignored API calls counted by the profiler%s, %llu range ends and %llu step ends without a "
           "matching begin in the trace",
           (unsigned long long)an->misuse, extra, (unsigned long long)an->unmatched_range_ends,
           (unsigned long long)an->unmatched_step_ends);
  prof__an_finding(an, "api_misuse", "low", (double)n, "Some profiler calls did not pair up", m,
                   "Check that every prof_range_push() has a prof_range_pop() on the same thread and every "
                   "prof_start() a prof_stop(); unpaired calls are ignored.");
}

void prof__findings_core(prof__an *an) {
  int step_lossy = prof__an_step_lost(an) > 0; /* the step findings need every range and step event */
  if (!step_lossy) finding_input_bound(an);
  finding_lost_events(an);
  finding_truncated(an);
  if (!step_lossy || an->nsteps == 0) finding_steps(an);
  if (!step_lossy) finding_untracked(an);
  finding_misuse(an);
}

int prof__severity_rank(const char *sev) {
  static const char *const order[] = {"high", "medium", "low", "info"};
  for (int i = 0; i < 4; i++)
    if (strcmp(sev, order[i]) == 0) return i;
  return 4;
}

/* Does finding a go strictly before b? Findings with a predicted saving
 * first, largest saving first; the others after them by severity. */
static int goes_before(const prof__finding *a, const prof__finding *b) {
  if (a->has_saving != b->has_saving) return a->has_saving;
  if (a->has_saving) return a->saving_ns > b->saving_ns;
  return prof__severity_rank(a->severity) < prof__severity_rank(b->severity);
}

/* Stable insertion sort (few findings): savings first, then severity. */
void prof__findings_sort(prof__an *an) {
  for (size_t i = 1; i < an->nfindings; i++) {
    prof__finding f = an->findings[i];
    size_t j = i;
    while (j > 0 && goes_before(&f, &an->findings[j - 1])) {
      an->findings[j] = an->findings[j - 1];
      j--;
    }
    an->findings[j] = f;
  }
}
