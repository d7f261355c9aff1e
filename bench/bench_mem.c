/* bench_mem.c — cost of memory profiling.
 *
 *  1. alloc+free pair cost in each MLPROF_MEM mode (off: the interposer
 *     forwarding only) divided by bare malloc+free (this program run again
 *     with libmlprof.so preloaded, and without it for the baseline);
 *  2. full mode next to heaptrack on the same allocation-heavy workload:
 *     the time each adds to the bare run, and the ratio of the two;
 *  3. trace bytes per allocation event in full mode.
 * Prints `name  value  baseline  ratio` lines; never fails (a missing
 * heaptrack is reported and skipped). Everything runs pinned to one CPU;
 * times are CPU time (the pair loop's thread CPU time; the whole process
 * tree's user+system time for the workload, so heaptrack's interpreter
 * and mlprof's writer count), which a busy machine disturbs far less than
 * wall time. Pair costs are medians over interleaved rounds. Rings keep
 * their default size: full mode is lossless with it (a full ring waits for
 * the writer), and a larger ring only adds the page faults of touching it.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MLPROF_LIB_PATH
#define MLPROF_LIB_PATH "libmlprof.so"
#endif

#define PAIRS 4000000
#define WORK_ALLOCS 400000
#define ROUNDS 9

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* User+system time of the children waited for so far. */
static double children_cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void *volatile sink;

/* Child: ns per malloc+free pair of mixed small sizes. */
static int child_pairs(void) {
  size_t sizes[8] = {16, 24, 48, 64, 96, 128, 256, 512};
  for (int i = 0; i < 100000; i++) free(malloc(sizes[i & 7])); /* warm-up */
  double t0 = now_s();
  for (int i = 0; i < PAIRS; i++) {
    void *p = malloc(sizes[i & 7]);
    sink = p;
    free(p);
  }
  printf("%.3f\n", (now_s() - t0) * 1e9 / PAIRS);
  return 0;
}

/* Child: an allocation-heavy program with real call depth: a few
 * recursive levels, a window of live blocks, reallocs. */
__attribute__((noinline)) static void level(int depth, void **live, int n, int *k) {
  if (depth > 0) {
    level(depth - 1, live, n, k);
    return;
  }
  for (int i = 0; i < 64; i++, (*k)++) {
    int slot = *k % n;
    free(live[slot]);
    live[slot] = malloc(32 + (size_t)(*k * 7 % 1000));
    if ((*k & 15) == 0) live[slot] = realloc(live[slot], 2048);
  }
}

static int child_work(void) {
  enum { LIVE = 4096 };
  void **live = calloc(LIVE, sizeof *live);
  int k = 0;
  while (k < WORK_ALLOCS) level(6 + (k / 64) % 5, live, LIVE, &k);
  for (int i = 0; i < LIVE; i++) free(live[i]);
  free(live);
  return 0;
}

/* ---- parent ---------------------------------------------------------------- */

static const char *self_path;
static char tmpdir[256];

static double run_value(const char *env, const char *what) {
  char cmd[2048], out[300];
  snprintf(out, sizeof out, "%s/value.txt", tmpdir);
  snprintf(cmd, sizeof cmd, "%s '%s' --child %s > '%s' 2>/dev/null", env, self_path, what, out);
  if (system(cmd) != 0) return -1;
  FILE *f = fopen(out, "r");
  double v = -1;
  if (f) {
    if (fscanf(f, "%lf", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

static double run_time(const char *prefix, const char *what) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' --child %s >/dev/null 2>&1", tmpdir, prefix, self_path, what);
  double v[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = children_cpu_s();
    if (system(cmd) != 0) return -1;
    v[r] = children_cpu_s() - t0;
  }
  return median(v, ROUNDS);
}

static void line(const char *name, double v, double base) {
  printf("%-34s %12.3f %12.3f %8.2f\n", name, v, base, base > 0 ? v / base : 0);
}

/* "off" is the interposer forwarding only: the floor of every mode. */
static void pair_costs(void) {
  static const char *const modes[] = {"off", "counts", "sampled", "full"};
  enum { NMODES = sizeof modes / sizeof modes[0] };
  double bare[ROUNDS], mode[NMODES][ROUNDS], ratio[NMODES][ROUNDS];
  for (int r = 0; r < ROUNDS; r++) { /* interleaved: bare, then each mode */
    bare[r] = run_value("", "pairs");
    for (int i = 0; i < NMODES; i++) {
      char env[1024];
      snprintf(env, sizeof env,
               "MLPROF_MEM=%s MLPROF_PRELOAD=1 MLPROF_REPORT=0 MLPROF_OUTPUT='%s/pairs.mlpt' "
               "LD_PRELOAD='%s'",
               modes[i], tmpdir, MLPROF_LIB_PATH);
      mode[i][r] = run_value(env, "pairs");
      ratio[i][r] = bare[r] > 0 ? mode[i][r] / bare[r] : 0;
    }
  }
  for (int i = 0; i < NMODES; i++) {
    char name[64];
    snprintf(name, sizeof name, "mem_pair_ns_%s", modes[i]);
    double b[ROUNDS];
    memcpy(b, bare, sizeof b);
    double mv = median(mode[i], ROUNDS), mb = median(b, ROUNDS), mr = median(ratio[i], ROUNDS);
    printf("%-34s %12.3f %12.3f %8.2f  (median of paired ratios)\n", name, mv, mb, mr);
  }
}

static void versus_heaptrack(void) {
  double bare = run_time("", "work");
  char env[1024];
  snprintf(env, sizeof env,
           "MLPROF_MEM=full MLPROF_PRELOAD=1 MLPROF_REPORT=0 MLPROF_OUTPUT='%s/work.mlpt' "
           "LD_PRELOAD='%s'",
           tmpdir, MLPROF_LIB_PATH);
  double ours = run_time(env, "work");
  line("mem_full_work_s", ours, bare);
  struct stat st;
  if (stat(tmpdir, &st) == 0) {
    char path[300];
    snprintf(path, sizeof path, "%s/work.mlpt", tmpdir);
    if (stat(path, &st) == 0) {
      double events = WORK_ALLOCS * (2.0 + 1.0 / 16 * 2); /* ALLOC + FREE, reallocs: one more of each */
      line("mem_full_trace_bytes_per_event", (double)st.st_size / events, 32.0); /* vs raw event size */
    }
  }
  if (system("command -v heaptrack >/dev/null 2>&1") != 0) {
    printf("%-34s %12s %12s %8s\n", "mem_heaptrack_work_s", "n/a", "-", "-");
    return;
  }
  double ht = run_time("heaptrack", "work");
  line("mem_heaptrack_work_s", ht, bare);
  if (ht > 0 && ours > 0) line("mem_full_added_vs_heaptrack_added", ours - bare, ht - bare);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--child") == 0)
    return strcmp(argv[2], "pairs") == 0 ? child_pairs() : child_work();
  static char self_abs[4096];
  /* The children run from a temporary folder: find this program by path. */
  self_path = realpath(argv[0], self_abs) ? self_abs : argv[0];
  snprintf(tmpdir, sizeof tmpdir, "/tmp/mlprof-bench-mem.%d", (int)getpid());
  mkdir(tmpdir, 0700);
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpu = sched_getcpu();
  CPU_SET(cpu < 0 ? 0 : cpu, &set);
  sched_setaffinity(0, sizeof set, &set); /* the children inherit it */
  printf("%-34s %12s %12s %8s\n", "name", "value", "baseline", "ratio");
  pair_costs();
  versus_heaptrack();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "bench_mem: could not remove %s\n", tmpdir);
  return 0;
}
