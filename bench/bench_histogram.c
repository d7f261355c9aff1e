/* bench_histogram.c — cost of model-health recording:
 *  - the one-pass tensor summary, in ns per element, against a plain sum
 *    over the same array (in cache, L2-sized and DRAM-sized arrays);
 *  - prof_histogram() through the API (summary + encoding + staging);
 *  - the live-page update at a step boundary, against the whole
 *    prof_start()/prof_stop() pair it is part of.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "core/clock.h"
#include "mlprof.h"
#include "trace/rec_hist.h"
#include "live/live.h"

static volatile double sink;

static double plain_sum(const float *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return s;
}

/* Median ns per element of `reps` timed calls of fn over v[0..n). */
static double time_sum(const float *v, size_t n, int reps) {
  double t[64];
  for (int r = 0; r < reps; r++) {
    uint64_t a = bench_now_ns();
    sink = plain_sum(v, n);
    t[r] = (double)(bench_now_ns() - a) / (double)n;
  }
  return bench_median(t, (size_t)reps);
}

static double time_summary(const float *v, size_t n, int reps) {
  double t[64];
  static prof__hsum s;
  for (int r = 0; r < reps; r++) {
    uint64_t a = bench_now_ns();
    prof__rec_hist_summarise(v, n, &s);
    t[r] = (double)(bench_now_ns() - a) / (double)n;
    sink = s.mean;
  }
  return bench_median(t, (size_t)reps);
}

static double time_api(const float *v, size_t n, int reps) {
  double t[64];
  for (int r = 0; r < reps; r++) {
    uint64_t a = bench_now_ns();
    prof_histogram("bench/tensor", PROF_HIST_GRADIENT, v, n);
    t[r] = (double)(bench_now_ns() - a) / (double)n;
  }
  return bench_median(t, (size_t)reps);
}

static void step_costs(void) {
  enum { N = 200000 };
  uint64_t a = bench_now_ns();
  for (int i = 0; i < N; i++) {
    prof_start();
    prof_stop();
  }
  double pair = (double)(bench_now_ns() - a) / N;
  a = bench_now_ns();
  for (int i = 0; i < N; i++) {
    prof__live_step(1, (uint64_t)i, (uint64_t)i);
    prof__live_step(0, (uint64_t)i, (uint64_t)i + 1);
  }
  double live = (double)(bench_now_ns() - a) / N;
  bench_line("live page update per step", live, pair, "ns (baseline: start+stop)");
  printf("%-34s %s\n", "live page present", prof__live_self() ? "yes" : "no (MLPROF_LIVE=0 or no /dev/shm)");
}

int main(void) {
  char dir[512], path[600];
  if (bench_tmpdir(dir, sizeof dir) != 0) return 0;
  snprintf(path, sizeof path, "%s/hist.mlpt", dir);
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  prof_init(&c);
  size_t maxn = 16u << 20;
  float *v = malloc(maxn * sizeof *v);
  if (!v) return 0;
  for (size_t i = 0; i < maxn; i++) v[i] = (float)sin((double)i * 0.001) * 0.01f;
  bench_header();
  static const size_t sizes[] = {4096, 262144, 16u << 20};
  static const char *const names[] = {"summary 4K floats (L1)", "summary 256K floats (L2)", "summary 16M floats (DRAM)"};
  for (int k = 0; k < 3; k++) {
    int reps = k == 2 ? 7 : 31;
    double base = time_sum(v, sizes[k], reps), s = time_summary(v, sizes[k], reps);
    bench_line(names[k], s, base, "ns/element (baseline: plain sum)");
  }
  double base = time_sum(v, 1u << 20, 15), api = time_api(v, 1u << 20, 15);
  bench_line("prof_histogram 1M floats", api, base, "ns/element (baseline: plain sum)");
  step_costs();
  prof_shutdown();
  free(v);
  bench_rmdir(dir);
  return 0;
}
