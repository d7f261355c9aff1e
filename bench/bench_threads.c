/* bench_threads.c — cost of short-lived threads under the profiler.
 *
 * A program that starts many short threads (a data loader's helpers, a
 * thread per request) pays the profiler's per-thread setup once per thread:
 * the state and ring its first event needs, and the sampler's timer. Each
 * round starts N threads, B at a time (create B, join them; B = 1 by
 * default); every thread records a few range pairs and a mark. The baseline is the same round in a
 * process without the profiler (the threads make the same number of calls
 * to an empty function). Both kinds of round run in forked children, in
 * alternating order; the medians are compared. The profiled rounds also
 * report the events written and lost: every event must be one or the other.
 *
 *   bench_threads [--threads N] [--events K] [--rounds R] [--batch B]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "mlprof.h"

static int events_per_thread = 8;
static int batch = 1;
static int profiled;

__attribute__((noinline)) static void bare_call(const char *name) { __asm__ volatile("" : : "r"(name) : "memory"); }

static void *short_thread(void *arg) {
  (void)arg;
  for (int i = 0; i + 2 <= events_per_thread; i += 2) {
    if (profiled) {
      prof_range_push("short");
      prof_range_pop();
    } else {
      bare_call("short");
      bare_call(NULL);
    }
  }
  if (events_per_thread % 2) {
    if (profiled) prof_mark("done");
    else bare_call("done");
  }
  return NULL;
}

/* Result of one round, passed from the child through shared memory. */
typedef struct round_result {
  double seconds;
  uint64_t written, lost, threads;
  int ok;
} round_result;

static void run_round(int nthreads, int with_profiler, round_result *out) {
  char dir[512] = "";
  profiled = with_profiler;
  if (with_profiler) {
    if (bench_tmpdir(dir, sizeof dir) != 0) return;
    prof_config cfg = prof_config_default();
    cfg.output = dir;
    cfg.report = 0;
    if (prof_init(&cfg) != 0) {
      bench_rmdir(dir);
      return;
    }
    prof_mark("start"); /* the main thread's own state exists before the clock starts */
  }
  uint64_t t0 = bench_now_ns();
  pthread_t th[64];
  for (int i = 0; i < nthreads; i += batch) {
    int k = nthreads - i < batch ? nthreads - i : batch;
    for (int j = 0; j < k; j++)
      if (pthread_create(&th[j], NULL, short_thread, NULL) != 0) return;
    for (int j = 0; j < k; j++) pthread_join(th[j], NULL);
  }
  out->seconds = (double)(bench_now_ns() - t0) * 1e-9;
  if (with_profiler) {
    prof_shutdown();
    prof_stats st = {.size = sizeof st};
    prof_stats_get(&st);
    out->written = st.events_written;
    out->lost = st.events_lost;
    out->threads = st.threads;
    bench_rmdir(dir);
  }
  out->ok = 1;
}

/* One round in a fresh child process (a process has one session). */
static int child_round(int nthreads, int with_profiler, round_result *res) {
  memset(res, 0, sizeof *res);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    run_round(nthreads, with_profiler, res);
    _exit(0);
  }
  if (pid < 0) return -1;
  waitpid(pid, NULL, 0);
  return res->ok ? 0 : -1;
}

int main(int argc, char **argv) {
  int nthreads = 2000, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--events")) events_per_thread = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
  }
  if (batch < 1 || batch > 64) batch = 1;
  if (nthreads < 1 || nthreads > 1000000) nthreads = 2000;
  if (events_per_thread < 1 || events_per_thread > 1000000) events_per_thread = 8;
  if (rounds < 1 || rounds > 101) rounds = 3;
  round_result *res = mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  double *pv = calloc((size_t)rounds, sizeof *pv), *bv = calloc((size_t)rounds, sizeof *bv);
  if (res == MAP_FAILED || !pv || !bv) return 0;
  int np = 0, nb = 0, exact = 1;
  uint64_t written = 0, lost = 0;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      int with = (r + k) % 2; /* alternate which kind goes first */
      if (child_round(nthreads, with, res) != 0) continue;
      if (!with) {
        bv[nb++] = res->seconds;
        continue;
      }
      pv[np++] = res->seconds;
      written += res->written;
      lost += res->lost;
      /* per thread: its events; main: the mark; every thread's events are written or lost */
      uint64_t expect = (uint64_t)nthreads * (uint64_t)events_per_thread + 1;
      if (res->written + res->lost < expect) exact = 0; /* other producers may add events */
    }
  }
  if (!np || !nb) {
    printf("bench_threads: a round failed; nothing measured\n");
    return 0;
  }
  double p = bench_median(pv, (size_t)np), b = bench_median(bv, (size_t)nb);
  bench_header();
  bench_line("short_thread_us", p * 1e6 / nthreads, b * 1e6 / nthreads, "us/thread vs without profiler");
  bench_line("short_threads_s", p, b, "s for all threads vs without profiler");
  printf("  (%d threads x %d events, %d at a time, %d rounds, median; written %llu, lost %llu over the profiled "
         "rounds%s)\n",
         nthreads, events_per_thread, batch, rounds, (unsigned long long)written, (unsigned long long)lost,
         exact ? "" : "; SOME EVENTS UNACCOUNTED");
  free(pv);
  free(bv);
  return 0;
}
