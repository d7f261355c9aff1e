/* test_step_cpu.c — per-step CPU classification is right for short steps.
 *
 * A child runs 600 steps of 1 ms, each spinning on the CPU, under the
 * profiler, and measures every step itself with its own thread CPU clock and
 * the monotonic clock (the referee). With ~1 sample per step, a class taken
 * from samples would call most of them off-CPU; the report must classify
 * each step as the referee does (compute-bound: CPU >= 80 % of wall),
 * whatever the load of the machine does to the individual steps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "helpers.h"
#include "mlprof.h"

#define STEPS 600

static double now_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The child: the profiled loop; writes each step's own CPU / wall to `ref`. */
static int child(const char *trace, const char *ref) {
  FILE *f = fopen(ref, "w");
  if (!f) return 1;
  /* no live page: the tests keep it on the build's disk, where a store to
   * the mapped page can wait for the file system at a step boundary */
  setenv("MLPROF_LIVE", "0", 1);
  prof_config c = prof_config_default();
  c.output = trace;
  c.report = 0;
  if (prof_init(&c) != 0) return 1;
  volatile double sink = 0; /* the busy loop's work, read once at the end */
  for (int s = 0; s < STEPS; s++) {
    /* The referee's windows are the step's: wall time between the step's
     * events (STEP_BEGIN is the last thing prof_start does, STEP_END the
     * first thing prof_stop does), CPU time read outside them, as the
     * profiler reads it. Reading the thread CPU clock is a system call, where
     * a loaded machine often preempts: inside the wall window it would add
     * wall time to one side only. */
    double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    prof_start();
    double w0 = now_ns(CLOCK_MONOTONIC);
    while (now_ns(CLOCK_MONOTONIC) - w0 < 1e6) sink += 1.0;
    double w1 = now_ns(CLOCK_MONOTONIC);
    prof_stop();
    double c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    fprintf(f, "%.6f\n", (c1 - c0) / (w1 - w0));
  }
  fclose(f);
  if (sink < 0) return 3; /* never: keeps the work (and clang) honest */
  return prof_shutdown() ? 2 : 0;
}

static void short_busy_steps_are_compute_bound_as_their_clocks_say(void **state) {
  (void)state;
  const char *trace = th_tmp_path("stepcpu", ".mlpt"), *ref = th_tmp_path("stepcpu-ref", ".txt");
  char tpath[512], rpath[512];
  snprintf(tpath, sizeof tpath, "%s", trace);
  snprintf(rpath, sizeof rpath, "%s", ref);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(child(tpath, rpath));
  int st = 0;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  /* the referee's classes */
  FILE *f = fopen(rpath, "r");
  assert_non_null(f);
  int ref_compute = 0, n = 0;
  double r;
  while (n < STEPS && fscanf(f, "%lf", &r) == 1) ref_compute += r >= PROF_FN_COMPUTE_RATIO, n++;
  fclose(f);
  assert_int_equal(n, STEPS);
  /* mlprof's */
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, tpath, 1, err), 0);
  assert_int_equal(an->nsteps, STEPS);
  char *json = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&json, &len);
  assert_int_equal(prof__report_write(an, "json", out), 0);
  fclose(out);
  int compute = 0, clock_src = 0;
  for (const char *p = strstr(json, "\"kind\": \"compute\""); p; p = strstr(p + 1, "\"kind\": \"compute\"")) compute++;
  for (const char *p = strstr(json, "\"cpu_source\": \"clock\""); p; p = strstr(p + 1, "\"cpu_source\": \"clock\"")) clock_src++;
  print_message("compute-bound steps: mlprof %d, the program's own clocks %d (of %d)\n", compute, ref_compute, STEPS);
  assert_int_equal(clock_src, STEPS);
  /* the step's clock readings are a few microseconds apart from the
   * program's: a step at the threshold may fall either way */
  assert_true(abs(compute - ref_compute) <= STEPS / 50);
  free(json);
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(short_busy_steps_are_compute_bound_as_their_clocks_say),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
