/* bench_overhead.c — what mlprof adds to a compute-bound training loop.
 *
 * The workload is a naive matrix-product "training" loop, one
 * prof_start()/prof_stop() pair per step, in a child process pinned to one
 * CPU (so the background writer competes with the training thread for it).
 * The program links nothing of mlprof: the child finds prof_start/prof_stop
 * with dlsym, so the bare run (no LD_PRELOAD) pays nothing at all, and each
 * profiled run preloads libmlprof.so with MLPROF_PRELOAD=1 in the
 * configuration under test. Bare and profiled runs alternate; every pair
 * gives one ratio and the program prints the median of each configuration:
 *
 *   default           MLPROF_MODULES unset (all default modules)
 *   modules_none      MLPROF_MODULES=none (core and writer only)
 *   stack_cpu_99hz    MLPROF_MODULES=stack,cpu, 99 Hz
 *   stack_cpu_1khz    MLPROF_MODULES=stack,cpu, 1 kHz
 *   gperftools_1khz   libprofiler.so preloaded, CPUPROFILE_FREQUENCY=1000
 *                     (only when Debian's libgoogle-perftools4 is there)
 *
 * The child times its training loop (the steady state, after a warm-up:
 * not the profiler's start-up or shutdown) and reports, besides wall time,
 * its process CPU time, the training thread's CPU time and the CPU time of
 * every other thread (the profiler's background work) per second of loop.
 * On a busy machine wall time is noise; the CPU figures hold up far
 * better. Usage: bench_overhead [rounds] [cpu].
 * Never fails.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifndef MLPROF_LIB_PATH
#define MLPROF_LIB_PATH "libmlprof.so"
#endif

#define N 128
#define STEPS 120

static float A[N][N], B[N][N], C[N][N];

static void matmul(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < N; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
}

/* CPU time (ns) of every thread of this process but the caller's: the
 * profiler's background threads, from /proc/self/task/<tid>/schedstat. */
static double others_cpu_ns(void) {
  double sum = 0;
  char me[32], path[300], buf[128];
  snprintf(me, sizeof me, "%d", (int)gettid());
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, me) == 0) continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(buf, sizeof buf, f)) sum += strtod(buf, NULL);
    fclose(f);
  }
  closedir(d);
  return sum;
}

static uint64_t cpu_ns(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Child: run the loop; print "<loop ns> <process cpu ns> <main thread cpu
 * ns> <other threads' cpu ns>" on stdout. */
static int child(void) {
  int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "prof_start");
  int (*stop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "prof_stop");
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (float)((i * 7 + j) % 13) * 0.01f;
      B[i][j] = (float)((i + j * 3) % 11) * 0.01f;
    }
  for (int s = 0; s < 10; s++) { /* warm-up: the profiler's start-up (clock calibration) is not measured */
    if (start) start();
    matmul();
    if (stop) stop();
  }
  struct timespec settle = {0, 100000000L};
  nanosleep(&settle, NULL);
  uint64_t p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), m0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  double o0 = others_cpu_ns();
  uint64_t t0 = bench_now_ns();
  for (int s = 0; s < STEPS; s++) {
    if (start) start();
    for (int r = 0; r < 4; r++) matmul();
    for (int i = 0; i < N; i++) A[i][s % N] += C[i][(s * 5) % N] * 1e-6f; /* the "update" */
    if (stop) stop();
  }
  uint64_t t1 = bench_now_ns();
  uint64_t p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), m1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  double o1 = others_cpu_ns();
  printf("%llu %llu %llu %.0f %f\n", (unsigned long long)(t1 - t0), (unsigned long long)(p1 - p0),
         (unsigned long long)(m1 - m0), o1 - o0, (double)C[1][2]);
  return 0;
}

typedef struct conf {
  const char *name;
  const char *env; /* space-separated NAME=VALUE list, or NULL for bare */
  int gperf;
} conf;

static char self[1024], dir[1024], gperf_lib[256];

typedef struct result {
  double wall, cpu, main, others; /* ns */
} result;

/* Run the child under `env`; returns its loop ns, 0 on failure. */
static double run_child(const conf *c, result *res) {
  char cmd[4096], out[256] = "";
  if (!c) snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD '%s' --child 2>/dev/null", self);
  else if (c->gperf)
    snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' CPUPROFILE='%s/gperf.prof' CPUPROFILE_FREQUENCY=1000 '%s' --child 2>/dev/null",
             gperf_lib, dir, self);
  else
    snprintf(cmd, sizeof cmd,
             "env LD_PRELOAD='%s' MLPROF_PRELOAD=1 MLPROF_REPORT=0 MLPROF_OUTPUT='%s/run.mlpt' %s '%s' --child 2>/dev/null",
             MLPROF_LIB_PATH, dir, c->env ? c->env : "", self);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  if (!fgets(out, sizeof out, p)) out[0] = 0;
  pclose(p);
  unsigned long long ns = 0, cns = 0, mns = 0;
  double ons = 0;
  if (sscanf(out, "%llu %llu %llu %lf", &ns, &cns, &mns, &ons) != 4) return 0;
  res->wall = (double)ns;
  res->cpu = (double)cns;
  res->main = (double)mns;
  res->others = ons;
  return (double)ns;
}

static int find_gperftools(void) {
  static const char *const cand[] = {"libprofiler.so.0", "libprofiler.so"};
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
    void *h = dlopen(cand[i], RTLD_LAZY | RTLD_LOCAL);
    if (!h) continue;
    Dl_info info;
    void *sym = dlsym(h, "ProfilerStart");
    if (sym && dladdr(sym, &info) && info.dli_fname) snprintf(gperf_lib, sizeof gperf_lib, "%s", info.dli_fname);
    else snprintf(gperf_lib, sizeof gperf_lib, "%s", cand[i]);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--child") == 0) return child();
  int rounds = argc > 1 ? atoi(argv[1]) : 9;
  if (rounds < 1) rounds = 1;
  int cpu = argc > 2 ? atoi(argv[2]) : sched_getcpu();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu < 0 ? 0 : cpu, &set);
  sched_setaffinity(0, sizeof set, &set); /* children inherit it */
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 0;
  self[n] = 0;
  if (bench_tmpdir(dir, sizeof dir)) return 0;
  conf confs[] = {
      {"default", "", 0},
      {"modules_none", "MLPROF_MODULES=none", 0},
      {"stack_cpu_99hz", "MLPROF_MODULES=stack,cpu MLPROF_SAMPLE_HZ=99", 0},
      {"stack_cpu_1khz", "MLPROF_MODULES=stack,cpu MLPROF_SAMPLE_HZ=1000", 0},
      {"gperftools_1khz", NULL, 1},
  };
  size_t nc = sizeof confs / sizeof confs[0];
  int have_gperf = find_gperftools();
  if (!have_gperf) nc--;
  /* per configuration and round: wall ratio, process CPU ratio, main
   * thread CPU ratio, background threads' CPU per loop wall time */
  size_t cells = nc * (size_t)rounds;
  double *wr = calloc(cells, sizeof *wr), *cr = calloc(cells, sizeof *cr), *mr = calloc(cells, sizeof *mr);
  double *bg = calloc(cells, sizeof *bg), *val = calloc(cells, sizeof *val), *base = calloc(cells, sizeof *base);
  double *med = calloc(nc, sizeof *med);
  if (!wr || !cr || !mr || !bg || !val || !base || !med) return 0;
  printf("# %d rounds, %d steps of %d^3 matmul x4, pinned to cpu %d; medians of paired runs (bare, profiled)\n",
         rounds, STEPS, N, cpu);
  for (int r = 0; r < rounds; r++) {
    for (size_t i = 0; i < nc; i++) {
      result b = {0}, v = {0};
      if (run_child(NULL, &b) <= 0 || run_child(&confs[i], &v) <= 0 || b.cpu <= 0 || b.main <= 0) continue;
      size_t k = i * (size_t)rounds + (size_t)r;
      wr[k] = v.wall / b.wall;
      cr[k] = v.cpu / b.cpu;
      mr[k] = v.main / b.main;
      bg[k] = v.others / v.wall;
      val[k] = v.wall / 1e6;
      base[k] = b.wall / 1e6;
    }
  }
  bench_header();
  for (size_t i = 0; i < nc; i++) {
    size_t o = i * (size_t)rounds, n = (size_t)rounds;
    double mw = bench_median(wr + o, n), mc = med[i] = bench_median(cr + o, n), mm = bench_median(mr + o, n);
    double mb = bench_median(bg + o, n), mv = bench_median(val + o, n), mbase = bench_median(base + o, n);
    char name[64];
    snprintf(name, sizeof name, "overhead_%s_wall", confs[i].name);
    printf("%-34s %14.3f %14.3f %8.4f  loop wall ms (%+.2f %%)\n", name, mv, mbase, mw, (mw - 1) * 100);
    snprintf(name, sizeof name, "overhead_%s_cpu", confs[i].name);
    printf("%-34s %14s %14s %8.4f  process CPU time (%+.2f %%)\n", name, "-", "-", mc, (mc - 1) * 100);
    snprintf(name, sizeof name, "overhead_%s_main_cpu", confs[i].name);
    printf("%-34s %14s %14s %8.4f  training thread CPU time (%+.2f %%)\n", name, "-", "-", mm, (mm - 1) * 100);
    snprintf(name, sizeof name, "overhead_%s_background", confs[i].name);
    printf("%-34s %14.4f %14s %8s  background threads' CPU per loop wall time (%.3f %%)\n", name, mb, "-", "-",
           mb * 100);
  }
  if (!have_gperf)
    printf("%-34s %14s %14s %8s  libprofiler.so not installed\n", "overhead_gperftools_1khz", "n/a", "-", "-");
  else if (med[4] > 0)
    printf("%-34s %14.4f %14.4f %8.4f  mlprof 1 kHz vs gperftools 1 kHz (process CPU ratios)\n",
           "overhead_1khz_vs_gperftools", med[3], med[4], med[3] / med[4]);
  free(wr), free(cr), free(mr), free(bg), free(val), free(base), free(med);
  bench_rmdir(dir);
  return 0;
}
