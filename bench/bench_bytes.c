/* bench_bytes.c — compressed trace bytes per event for a realistic trace.
 *
 * Replays the range pattern of a small training loop (a step holding data
 * loading with three sub-phases, a forward and a backward pass over three
 * layers, an optimizer update, two counters) with a few microseconds of real
 * work in each leaf range, until about --events events (default 1 M) are
 * recorded. Prints the .mlpt size divided by the events recorded. Goal: <= 4
 * bytes per event. The baseline is the in-memory event size.
 *
 *   bench_bytes [--events N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../src/trace/event.h"
#include "bench_util.h"
#include "mlprof.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t events;

static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Busy work of roughly `us` microseconds, with some jitter. */
static void work(double us) {
  uint64_t end = bench_now_ns() + (uint64_t)(us * (900 + next_rand() % 200));
  while (bench_now_ns() < end) {
  }
}

static void leaf(const char *name, int cat, double us) {
  prof_range_push_cat(name, cat);
  work(us);
  prof_range_pop();
  events += 2;
}

static void one_step(uint64_t step) {
  static const char *fwd[3] = {"fc1", "fc2", "fc3"};
  static const char *bwd[3] = {"fc3_grad", "fc2_grad", "fc1_grad"};
  prof_start();
  prof_range_push_cat("data", PROF_CAT_DATA);
  leaf("shuffle", PROF_CAT_DATA, 1);
  leaf("gather", PROF_CAT_DATA, 2);
  leaf("augment", PROF_CAT_DATA, 4);
  prof_range_pop();
  prof_range_push("forward");
  for (int i = 0; i < 3; i++) leaf(fwd[i], PROF_CAT_COMPUTE, 5);
  leaf("softmax", PROF_CAT_COMPUTE, 1);
  prof_range_pop();
  prof_range_push("backward");
  for (int i = 0; i < 3; i++) leaf(bwd[i], PROF_CAT_COMPUTE, 9);
  prof_range_pop();
  leaf("optimizer", PROF_CAT_COMPUTE, 3);
  prof_counter("loss", 2.0 / (1.0 + (double)step * 0.01) + (double)(next_rand() % 1000) * 1e-5);
  prof_counter("lr", 0.05);
  prof_stop();
  events += 2 * 3 + 2 + 2; /* data/forward/backward, counters, step begin/end */
}

int main(int argc, char **argv) {
  uint64_t target = 1000000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--events")) target = strtoull(argv[i + 1], NULL, 10);
  if (target < 1000) target = 1000;

  char dir[512], path[1024];
  if (bench_tmpdir(dir, sizeof dir) != 0) { perror("bench_bytes: mkdtemp"); return 0; }
  snprintf(path, sizeof path, "%s/bytes.mlpt", dir);
  prof_config cfg = prof_config_default();
  cfg.output = path;
  cfg.report = 0;
  int err = prof_init(&cfg);
  if (err != 0) {
    printf("bench_bytes: profiler not running (%s); nothing measured\n", prof_strerror(err));
    bench_rmdir(dir);
    return 0;
  }
  uint64_t t0 = bench_now_ns();
  for (uint64_t s = 0; events < target; s++) one_step(s);
  double secs = (double)(bench_now_ns() - t0) * 1e-9;
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  prof_shutdown();
  struct stat sb;
  double size = stat(path, &sb) == 0 ? (double)sb.st_size : 0;
  bench_rmdir(dir);

  bench_header();
  bench_line("trace_bytes_per_event", size / (double)events, (double)sizeof(prof__event),
             "bytes/event vs in-memory event");
  printf("goal: <= 4 bytes/event -> %s (%llu events, %.0f bytes, %.1f s, lost %llu)\n",
         size / (double)events <= 4.0 ? "met" : "NOT met", (unsigned long long)events, size, secs,
         (unsigned long long)st.events_lost);
  return 0;
}
