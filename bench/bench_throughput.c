/* bench_throughput.c — sustained event rate with the writer draining.
 *
 * For 1, 2 and 4 producer threads (one child process each, since a process
 * has one profiling session), every thread pushes range pairs flat out for a
 * few seconds with the default ring size (or MLPROF_RING_KB). Prints the rate
 * the producers reached, the rate that reached the trace, and the events
 * dropped because a ring was full at that rate (from prof_stats_get).
 *
 *   bench_throughput [--threads N] [--seconds S]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "mlprof.h"

static atomic_int stop_flag;

static void *producer(void *arg) {
  uint64_t *pairs = arg, n = 0;
  while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
    for (int i = 0; i < 256; i++) {
      prof_range_push("work");
      prof_range_pop();
    }
    n += 256;
  }
  *pairs = n;
  return NULL;
}

static void run_child(int threads, double seconds) {
  char dir[512];
  if (bench_tmpdir(dir, sizeof dir) != 0) return;
  prof_config cfg = prof_config_default();
  cfg.output = dir;
  cfg.report = 0;
  if (prof_init(&cfg) != 0) { bench_rmdir(dir); return; }
  pthread_t tid[64];
  uint64_t pairs[64] = {0};
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < threads; i++) pthread_create(&tid[i], NULL, producer, &pairs[i]);
  usleep((useconds_t)(seconds * 1e6));
  atomic_store(&stop_flag, 1);
  uint64_t total = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(tid[i], NULL);
    total += 2 * pairs[i];
  }
  double el = (double)(bench_now_ns() - t0) * 1e-9;
  prof_shutdown(); /* drains everything; stats stay readable */
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  double lost = (double)st.events_lost, kept = (double)total - lost;
  char name[64];
  snprintf(name, sizeof name, "events_per_s_%dthr", threads);
  bench_line(name, kept / el, (double)total / el, "written/s vs pushed/s");
  snprintf(name, sizeof name, "events_lost_%dthr", threads);
  bench_line(name, lost, (double)total, "lost vs pushed");
  printf("  (%d thr: %.2f s, %llu events in the trace stats, %.1f MB written)\n", threads, el,
         (unsigned long long)st.events_written, (double)st.bytes_written / 1e6);
  bench_rmdir(dir);
}

int main(int argc, char **argv) {
  int only = 0;
  double seconds = 2.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) only = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
  }
  if (only < 0 || only > 64) only = 0;
  if (!(seconds > 0) || seconds > 60) seconds = 2.0;
  bench_header();
  int counts[3] = {1, 2, 4};
  for (int k = 0; k < 3; k++) {
    int t = only ? only : counts[k];
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      run_child(t, seconds);
      fflush(stdout);
      _exit(0);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
    if (only) break;
  }
  return 0;
}
