/* savings_eval.h — runs the planted programs of savings_prog.c with and
 * without their cause, and sets the saving predicted from the slow run
 * against the one realised (the step-time difference of the two runs, read
 * from their traces). Shared by the validation test (tests/savings_check.c)
 * and the benchmark that prints the table (bench/bench_savings.c).
 *
 * Realised saving: for a cause present in every step, the difference of the
 * median steady step times (robust to stray slow steps of a busy machine);
 * for periodic work and rare outliers, which leave the median unchanged,
 * the difference of the mean steady step times. When the realised saving
 * is more than a quarter off what was planted, or stray slow steps lift the
 * fixed run's mean by a tenth of it, the machine disturbed the program's own
 * timing: the result is marked noisy (and the test skips rather than judge).
 */
#ifndef MLPROF_SAVINGS_EVAL_H
#define MLPROF_SAVINGS_EVAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"

typedef struct sv_scenario {
  const char *name;     /* savings_prog's SCENARIO */
  const char *finding;  /* the finding that must predict it */
  const char *phase;    /* its "phase" key, or NULL */
  int by_mean;          /* 1: realised from means, 0: from medians */
  double planted_ms;    /* the cause's cost per step as planted */
} sv_scenario;

static const sv_scenario sv_scenarios[] = {
    {"input", "input_bound", NULL, 0, 8.0},
    {"loader", "input_bound", NULL, 0, 10.0},
    {"checkpoint", "periodic_slow_steps", NULL, 1, 6.0},
    {"lock", "step_wait", "publish", 0, 10.0},
    {"copy", "step_wait", "h2d_copy", 0, 6.0},
    {"outlier", "slow_step_outliers", NULL, 1, 4.0},
};
#define SV_NSCENARIOS (sizeof sv_scenarios / sizeof sv_scenarios[0])

typedef struct sv_result {
  int ok;               /* both runs analysed */
  int found;            /* the finding with a saving was in the slow run */
  int noisy;            /* the timing was disturbed (see above) */
  double predicted_ns, realised_ns, error;  /* error: (predicted - realised) / realised */
  double slow_ns, fixed_ns;                 /* the step times compared */
  char msg[512];
} sv_result;

/* Run `prog scenario variant steps` with its trace at `trace`. */
static int sv_run(const char *prog, const char *scenario, const char *variant, int steps, const char *trace) {
  char n[16];
  snprintf(n, sizeof n, "%d", steps);
  unlink(trace);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setenv("MLPROF_OUTPUT", trace, 1);
    setenv("MLPROF_REPORT", "0", 1);
    if (!freopen("/dev/null", "w", stdout)) _exit(126);
    execl(prog, prog, scenario, variant, n, (char *)NULL);
    _exit(127);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  struct stat sb;
  return stat(trace, &sb) == 0 ? 0 : -1;
}

static const prof__finding *sv_finding(prof__an *an, const sv_scenario *s) {
  for (size_t i = 0; i < an->nfindings; i++) {
    const prof__finding *f = &an->findings[i];
    if (strcmp(f->id, s->finding) != 0 || !f->has_saving) continue;
    if (!s->phase) return f;
    for (int k = 0; k < f->nkeys; k++)
      if (!f->keys[k].is_num && !strcmp(f->keys[k].key, "phase") && !strcmp(f->keys[k].str, s->phase)) return f;
  }
  return NULL;
}

static double sv_step_time(const prof__an *an, int by_mean) {
  return (double)(by_mean ? an->steady_stats.mean_ns : an->steady_stats.median_ns);
}

/* Both variants of one scenario; traces go to dir. */
static sv_result sv_evaluate(const char *prog, const char *dir, const sv_scenario *s, int steps) {
  sv_result r;
  memset(&r, 0, sizeof r);
  char slow[4200], fixed[4200], err[256];
  snprintf(slow, sizeof slow, "%.4000s/%s.slow.mlpt", dir, s->name);
  snprintf(fixed, sizeof fixed, "%.4000s/%s.fixed.mlpt", dir, s->name);
  if (sv_run(prog, s->name, "slow", steps, slow) || sv_run(prog, s->name, "fixed", steps, fixed)) {
    snprintf(r.msg, sizeof r.msg, "could not run %s", prog);
    return r;
  }
  prof__an *a = NULL, *b = NULL;
  if (prof__an_run_opts(&a, slow, 1, err) || prof__an_run_opts(&b, fixed, 1, err)) {
    snprintf(r.msg, sizeof r.msg, "analysis failed: %s", err);
    prof__an_free(a);
    return r;
  }
  r.ok = 1;
  const prof__finding *f = sv_finding(a, s);
  r.slow_ns = sv_step_time(a, s->by_mean);
  r.fixed_ns = sv_step_time(b, s->by_mean);
  r.realised_ns = r.slow_ns - r.fixed_ns;
  /* Disturbed: the two runs differ by more than a tenth from what was
   * planted (the program itself did not keep its timing: a loaded machine
   * stretches sleeps and waits unevenly), or, for means, the fixed run's
   * stray slow steps lift its mean by a tenth of the planted saving. */
  double lift = (double)b->steady_stats.mean_ns - (double)b->steady_stats.median_ns, plant = s->planted_ms * 1e6;
  r.noisy = fabs(r.realised_ns - plant) > 0.10 * plant || (s->by_mean && lift > 0.1 * plant);
  if (f) {
    r.found = 1;
    r.predicted_ns = (double)f->saving_ns;
    r.error = r.realised_ns > 0 ? (r.predicted_ns - r.realised_ns) / r.realised_ns : NAN;
    snprintf(r.msg, sizeof r.msg, "%s", f->saving_model);
  } else {
    snprintf(r.msg, sizeof r.msg, "no %s finding with a saving%s%s in the slow run", s->finding,
             s->phase ? " for phase " : "", s->phase ? s->phase : "");
  }
  prof__an_free(a);
  prof__an_free(b);
  return r;
}

#endif
