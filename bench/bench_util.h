/* bench_util.h — small helpers shared by the benchmarks: a clock, medians,
 * a scratch directory for traces, and the `name  value  baseline  ratio`
 * output line. Header-only; every benchmark is one program. */
#ifndef MLPROF_BENCH_UTIL_H
#define MLPROF_BENCH_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The result line every benchmark prints. */
static inline void bench_line(const char *name, double value, double baseline, const char *unit) {
  printf("%-34s %14.3f %14.3f %8.3f  %s\n", name, value, baseline,
         baseline != 0 ? value / baseline : 0.0, unit);
}

static inline void bench_header(void) {
  printf("%-34s %14s %14s %8s  %s\n", "name", "value", "baseline", "ratio", "unit");
}

/* A fresh scratch directory ($TMPDIR or /tmp); writes its path into dir. */
static inline int bench_tmpdir(char *dir, size_t len) {
  const char *base = getenv("TMPDIR");
  snprintf(dir, len, "%s/mlprof-bench.XXXXXX", base && *base ? base : "/tmp");
  return mkdtemp(dir) ? 0 : -1;
}

/* Remove the files of a scratch directory, then the directory. */
static inline void bench_rmdir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

#endif
