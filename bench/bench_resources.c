/* bench_resources.c — what one resource sample costs the writer thread.
 *
 * Times (thread CPU time, median of rounds) one full reading of the
 * process counters, each procfs source alone, the per-thread scan, and the
 * whole sample with its events, and compares each with the budget the
 * sampler is held to: 1% of one core at the default period
 * (PROF_RES_DEFAULT_MS), i.e. 1 ms of CPU per 100 ms. The ratio column is
 * the share of that budget used; "core %" lines give the cost as a
 * percentage of one core at the default period.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "res/res.h"

#define ROUNDS 15
#define ITERS 200

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void read_file(const char *path) {
  char buf[4096];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  while (read(fd, buf, sizeof buf) > 0) {
  }
  close(fd);
}

static void do_rusage(void *arg) {
  (void)arg;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
}
static void do_file(void *arg) { read_file((const char *)arg); }
static void do_read(void *arg) {
  (void)arg;
  prof__res_raw r;
  prof__res_read(&r);
}
static void do_sample(void *arg) {
  prof__res_raw *prev = arg, cur;
  prof__event ev[64];
  prof__res_read(&cur);
  prof__res_events(prev, &cur, 0, ev, 64);
}
static prof__res_scan scan;
static void do_scan(void *arg) {
  (void)arg;
  prof__res_thread top[PROF_RES_TOP_THREADS];
  uint32_t n;
  prof__res_scan_threads(&scan, top, PROF_RES_TOP_THREADS, &n);
}

/* Median CPU ns of one call of fn. */
static double cost(void (*fn)(void *), void *arg, int iters) {
  double v[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = cpu_ns();
    for (int i = 0; i < iters; i++) fn(arg);
    v[r] = (cpu_ns() - t0) / iters;
  }
  return bench_median(v, ROUNDS);
}

static void *idle_thread(void *arg) {
  pthread_mutex_t *mu = arg;
  pthread_mutex_lock(mu);
  pthread_mutex_unlock(mu);
  return NULL;
}

int main(void) {
  const double budget_ns = PROF_RES_DEFAULT_MS * 1e6 * 0.01; /* 1% of a core per period */
  bench_header();
  bench_line("res.getrusage_ns", cost(do_rusage, NULL, ITERS), budget_ns, "ns");
  const char *files[] = {"/proc/self/statm", "/proc/loadavg", "/proc/self/io", "/proc/self/net/dev"};
  for (int i = 0; i < 4; i++) {
    char name[64];
    snprintf(name, sizeof name, "res.read %s ns", files[i]);
    bench_line(name, cost(do_file, (void *)files[i], ITERS), budget_ns, "ns");
  }
  double read = cost(do_read, NULL, ITERS);
  bench_line("res.read_all_ns", read, budget_ns, "ns");
  prof__res_raw prev;
  prof__res_read(&prev);
  double sample = cost(do_sample, &prev, ITERS);
  bench_line("res.sample_ns", sample, budget_ns, "ns");
  /* The thread scan with 16 extra threads, once per PROF_RES_THREAD_MS. */
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_t t[16];
  pthread_mutex_lock(&mu);
  for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, idle_thread, &mu);
  double scan_ns = cost(do_scan, NULL, 20);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  prof__res_scan_free(&scan);
  bench_line("res.thread_scan_17_threads_ns", scan_ns, budget_ns * (PROF_RES_THREAD_MS / PROF_RES_DEFAULT_MS), "ns");
  /* Per second at the default period: 10 samples + 1 scan. */
  double per_s = sample * (1000.0 / PROF_RES_DEFAULT_MS) + scan_ns * (1000.0 / PROF_RES_THREAD_MS);
  bench_line("res.core_pct_at_default_period", per_s / 1e9 * 100, 1.0, "% of one core");
  return 0;
}
