/* bench_sampling.c — what CPU sampling costs.
 *
 * 1. Overhead: a training-like loop (steps of small matrix products inside
 *    ranges) runs in a fresh child process with sampling off, at 1 kHz and
 *    at 10 kHz; runs are interleaved and repeated, medians compared. The
 *    1 kHz run on the perf clocks (the default where the kernel allows
 *    them) is also compared with the same run on POSIX timers, which
 *    deliver only about one signal per scheduler tick.
 * 2. Cost of one sample at stack depth 16: a signal handler that unwinds
 *    the interrupted stack and interns it, against the same signal with an
 *    empty handler (the kernel's part).
 * 3. The perf clock's own part of a sample: reading the event's count and
 *    letting it fire again (two system calls), against one empty system
 *    call.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "mlprof.h"
#include "cpu/cpu.h"
#include "stack/stack.h"

#define N 96
static float A[N][N], B[N][N], C[N][N];

static void matmul(void) {
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++) {
      float a = A[i][k];
      for (int j = 0; j < N; j++) C[i][j] += a * B[k][j];
    }
}

static void train(int steps) {
  for (int s = 0; s < steps; s++) {
    prof_start();
    prof_range_push("forward");
    for (int r = 0; r < 20; r++) matmul();
    prof_range_pop();
    prof_range_push("backward");
    for (int r = 0; r < 40; r++) matmul();
    prof_range_pop();
    prof_stop();
  }
}

/* One run in a child: returns its wall time in ms. */
static double run_child(const char *hz, const char *sampler, const char *dir) {
  int fd[2];
  if (pipe(fd) != 0) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    setenv("MLPROF_SAMPLE_HZ", hz, 1);
    setenv("MLPROF_SAMPLER", sampler, 1);
    char path[512];
    snprintf(path, sizeof path, "%s/sampling.%d.mlpt", dir, (int)getpid());
    prof_config c = prof_config_default();
    c.output = path;
    c.report = 0;
    prof_init(&c);
    train(2); /* warm-up */
    uint64_t t0 = bench_now_ns();
    train(60);
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    prof_shutdown();
    unlink(path);
    if (write(fd[1], &ms, sizeof ms) != sizeof ms) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  double ms = 0;
  if (read(fd[0], &ms, sizeof ms) != sizeof ms) ms = 0;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return ms;
}

static volatile int capture_on;
static uint64_t sink;
static void handler(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si;
  if (!capture_on) return;
  uintptr_t pcs[PROF_STACK_MAX_DEPTH];
  int d = prof__stack_capture_uc(uc, pcs, PROF_STACK_MAX_DEPTH);
  sink += prof__stack_intern(pcs, d);
}

__attribute__((noinline)) static double deep(int depth, int reps, int on) {
  if (depth > 0) {
    double r = deep(depth - 1, reps, on);
    __asm__ volatile("" ::: "memory");
    return r;
  }
  capture_on = on;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < reps; i++) raise(SIGPROF);
  return (double)(bench_now_ns() - t0) / reps;
}

/* ns per read + re-arm of a perf clock (on) or per empty system call (off) */
static double perf_clock_ns(int fd, int on, int reps) {
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < reps; i++) {
    if (on) {
      sink += prof__perf_clock_read(fd);
      prof__perf_clock_rearm(fd);
    } else {
      sink += (uint64_t)syscall(SYS_getppid);
    }
  }
  return (double)(bench_now_ns() - t0) / reps;
}

static void perf_clock_cost(void) {
  /* a period of 10 s: the event counts but does not fire during the loop */
  int fd = prof__perf_clock_open((int)syscall(SYS_gettid), SIGPROF, 10000000000ull);
  if (fd < 0) return; /* perf events refused here */
  double costs[5], bases[5];
  for (int r = 0; r < 5; r++) {
    bases[r] = perf_clock_ns(fd, 0, 20000);
    costs[r] = perf_clock_ns(fd, 1, 20000);
  }
  prof__perf_clock_close(fd, SIGPROF);
  bench_line("perf_clock_read_rearm_ns", bench_median(costs, 5), bench_median(bases, 5),
             "ns per sample (baseline: one empty system call)");
}

int main(void) {
  char dir[] = "/tmp/mlprof-bench-XXXXXX";
  if (!mkdtemp(dir)) return 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] = B[i][j] = (float)((i + j) % 7) * 0.1f;
  enum { REPS = 5 };
  double off[REPS], k1[REPS], k10[REPS], t1[REPS];
  for (int r = 0; r < REPS; r++) {
    off[r] = run_child("0", "auto", dir);
    k1[r] = run_child("1000", "auto", dir);
    k10[r] = run_child("10000", "auto", dir);
    t1[r] = run_child("1000", "timer", dir);
  }
  double moff = bench_median(off, REPS), m1 = bench_median(k1, REPS), m10 = bench_median(k10, REPS);
  bench_header();
  bench_line("train_loop_1khz_ms", m1, moff, "ms (baseline: sampling off)");
  bench_line("train_loop_10khz_ms", m10, moff, "ms (baseline: sampling off)");
  bench_line("train_loop_1khz_perf_vs_timer_ms", m1, bench_median(t1, REPS), "ms (baseline: 1 kHz on POSIX timers)");

  struct sigaction sa = {0};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGPROF, &sa, NULL);
  prof__stack_thread_init();
  deep(16, 1000, 1); /* warm the unwinder's caches */
  double costs[5], bases[5];
  for (int r = 0; r < 5; r++) {
    bases[r] = deep(16, 20000, 0);
    costs[r] = deep(16, 20000, 1);
  }
  bench_line("sample_cost_depth16_ns", bench_median(costs, 5), bench_median(bases, 5),
             "ns per sample (baseline: signal, empty handler)");
  perf_clock_cost();
  rmdir(dir);
  return 0;
}
