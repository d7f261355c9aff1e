/* bench_range.c — cost of one prof_range_push + prof_range_pop pair.
 *
 * The baseline is what any tracer must pay at least: two timestamp reads
 * (rdtsc on x86, clock_gettime elsewhere). Both loops run in the same
 * process, in alternating rounds; the medians are compared. Goal: ratio
 * <= 1.5. The ring (8 MiB unless MLPROF_RING_KB says otherwise) holds
 * several rounds and the writer gets time to drain between rounds, so no
 * event is dropped (a dropped event would be cheaper, flattering the
 * figure). A warm-up cycles through the whole ring first, so first-touch
 * page faults are not counted: a long-running program pays them once.
 *
 *   bench_range [--pairs N] [--rounds N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ts_read(void) { return __rdtsc(); }
#define TS_NAME "rdtsc"
#else
#include <time.h>
static inline uint64_t ts_read(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#define TS_NAME "clock_gettime"
#endif

#include "bench_util.h"
#include "mlprof.h"

static volatile uint64_t sink;

static double pairs_ns(long n) {
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) {
    prof_range_push("bench");
    prof_range_pop();
  }
  return (double)(bench_now_ns() - t0) / (double)n;
}

static double baseline_ns(long n) {
  uint64_t acc = 0;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) {
    acc += ts_read();
    acc ^= ts_read();
  }
  double ns = (double)(bench_now_ns() - t0) / (double)n;
  sink = acc;
  return ns;
}

int main(int argc, char **argv) {
  long pairs = 20000;
  int rounds = 51;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--pairs")) pairs = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
  }
  if (pairs < 1000) pairs = 1000;
  if (rounds < 1 || rounds > 1000) rounds = 51;

  char dir[512];
  if (bench_tmpdir(dir, sizeof dir) != 0) { perror("bench_range: mkdtemp"); return 0; }
  prof_config cfg = prof_config_default();
  cfg.output = dir;
  cfg.report = 0;
  if (!getenv("MLPROF_RING_KB")) cfg.ring_kb = 8 * 1024;
  int err = prof_init(&cfg);
  if (err != 0) {
    printf("bench_range: profiler not running (%s); nothing measured\n", prof_strerror(err));
    bench_rmdir(dir);
    return 0;
  }
  /* Warm up: first-use interning, and one lap of the ring (32-byte events). */
  const char *env_kb = getenv("MLPROF_RING_KB");
  long ring_kb = env_kb ? atol(env_kb) : (long)cfg.ring_kb;
  for (long done = 0; done < ring_kb * 1024 / 64 + pairs; done += pairs) {
    pairs_ns(pairs);
    usleep(30000);
  }
  baseline_ns(pairs);

  double *pv = calloc((size_t)rounds, sizeof *pv), *bv = calloc((size_t)rounds, sizeof *bv);
  if (!pv || !bv) return 0;
  for (int r = 0; r < rounds; r++) {
    bv[r] = baseline_ns(pairs);
    pv[r] = pairs_ns(pairs);
    usleep(30000); /* let the writer drain the ring */
  }
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  prof_shutdown();
  bench_rmdir(dir);

  double p = bench_median(pv, (size_t)rounds), b = bench_median(bv, (size_t)rounds);
  bench_header();
  bench_line("range_push_pop_pair_ns", p, b, "ns/pair vs 2x " TS_NAME);
  printf("goal: ratio <= 1.5 -> %s (%d rounds of %ld pairs, median; events lost: %llu)\n",
         b > 0 && p / b <= 1.5 ? "met" : "NOT met", rounds, pairs,
         (unsigned long long)st.events_lost);
  free(pv);
  free(bv);
  return 0;
}
