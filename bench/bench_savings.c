/* bench_savings.c — how well predicted savings hold: each planted cause of
 * tests/progs/savings_prog.c is run with and without its cause (median of
 * ROUNDS rounds), and the saving the slow run's finding predicts is printed
 * next to the saving the fixed run realised (step-time difference of the two
 * runs, tests/progs/savings_eval.h), with the relative error. The goal is
 * every error within ±25 %.
 *
 *   bench_savings [ROUNDS] [STEPS]    (default 3 rounds of 120 steps)
 *
 * Prints the table, then the usual `name value baseline ratio` lines
 * (savings_SCENARIO; value: predicted ms, baseline: realised ms, ratio:
 * predicted / realised). Never fails.
 */
#include "bench_util.h"
#include "progs/savings_eval.h"

#ifndef MLPROF_SAVINGS_PROG
#define MLPROF_SAVINGS_PROG "savings_prog"
#endif

#define MAX_ROUNDS 15

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3, steps = argc > 2 ? atoi(argv[2]) : 120;
  if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 3;
  if (steps < 20) steps = 120;
  char dir[1024];
  if (access(MLPROF_SAVINGS_PROG, X_OK) != 0 || bench_tmpdir(dir, sizeof dir) != 0) {
    printf("bench_savings: the planted program %s is not built (tests off?)\n", MLPROF_SAVINGS_PROG);
    return 0;
  }
  double pred[SV_NSCENARIOS], real[SV_NSCENARIOS];
  int noisy[SV_NSCENARIOS] = {0};
  printf("Predicted vs realised savings per step (%d rounds of %d steps, medians)\n", rounds, steps);
  printf("%-11s %-20s %11s %11s %8s\n", "scenario", "finding", "predicted", "realised", "error");
  for (size_t i = 0; i < SV_NSCENARIOS; i++) {
    const sv_scenario *s = &sv_scenarios[i];
    double p[MAX_ROUNDS], r[MAX_ROUNDS];
    int n = 0;
    for (int k = 0; k < rounds; k++) {
      sv_result x = sv_evaluate(MLPROF_SAVINGS_PROG, dir, s, steps);
      if (!x.ok || !x.found) continue;
      noisy[i] += x.noisy;
      p[n] = x.predicted_ns / 1e6, r[n] = x.realised_ns / 1e6, n++;
    }
    pred[i] = n ? bench_median(p, (size_t)n) : NAN;
    real[i] = n ? bench_median(r, (size_t)n) : NAN;
    printf("%-11s %-20s %8.2f ms %8.2f ms %+7.1f%%%s\n", s->name, s->finding, pred[i], real[i],
           100 * (pred[i] - real[i]) / real[i], n < rounds ? "  (a round without the finding)" : "");
    if (noisy[i]) printf("%-11s   %d of %d rounds had disturbed timing (a busy machine)\n", "", noisy[i], rounds);
  }
  putchar('\n');
  bench_header();
  for (size_t i = 0; i < SV_NSCENARIOS; i++) {
    char name[64];
    snprintf(name, sizeof name, "savings_%s", sv_scenarios[i].name);
    bench_line(name, pred[i], real[i], "ms/step");
  }
  bench_rmdir(dir);
  return 0;
}
