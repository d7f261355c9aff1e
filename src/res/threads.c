/* threads.c — per-thread CPU time of the busiest threads.
 *
 * A scan reads /proc/self/task/<tid>/stat of every thread, compares its
 * utime + stime with the previous scan and keeps the few threads that used
 * the most CPU in between, so a saturated data-loader thread or an idle
 * pool shows. It runs on the writer thread once per PROF_RES_THREAD_MS;
 * the cost grows with the number of threads (one small file each). The
 * PROF_CHUNK_RES codec is in src/trace/rec_res.c.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "res.h"

static int read_stat(uint32_t tid, char comm[17], uint64_t *ticks) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/self/task/%u/stat", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  return prof__res_parse_taskstat(buf, (size_t)n, comm, ticks);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Thread ids of the process, sorted; returns the count or -1. */
static int list_tids(uint32_t *tids, int max) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while (n < max && (e = readdir(d)) != NULL) {
    char *endp;
    unsigned long v = strtoul(e->d_name, &endp, 10);
    if (*endp == 0 && v > 0 && v <= UINT32_MAX) tids[n++] = (uint32_t)v;
  }
  closedir(d);
  qsort(tids, (size_t)n, sizeof *tids, cmp_u32);
  return n;
}

static uint64_t prev_ticks(const prof__res_scan *s, uint32_t tid, int *found) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->tids[mid] < tid) lo = mid + 1;
    else hi = mid;
  }
  *found = lo < s->n && s->tids[lo] == tid;
  return *found ? s->ticks[lo] : 0;
}

/* Insert t into the busiest-first list out[0..*n) of at most max. */
static void keep_top(prof__res_thread *out, int *n, int max, const prof__res_thread *t) {
  int i;
  if (*n < max) {
    i = (*n)++;
  } else {
    if (max <= 0 || out[max - 1].cpu_ns >= t->cpu_ns) return;
    i = max - 1;
  }
  while (i > 0 && out[i - 1].cpu_ns < t->cpu_ns) {
    out[i] = out[i - 1];
    i--;
  }
  out[i] = *t;
}

static int grow(prof__res_scan *s, size_t want) {
  if (want <= s->cap) return 0;
  uint32_t *t = realloc(s->tids, want * sizeof *t);
  if (t) s->tids = t;
  uint64_t *k = realloc(s->ticks, want * sizeof *k);
  if (k) s->ticks = k;
  if (!t || !k) return -1;
  s->cap = want;
  return 0;
}

int prof__res_scan_threads(prof__res_scan *s, prof__res_thread *out, int max, uint32_t *nthreads) {
  static uint32_t tids[PROF_RES_MAX_SCAN]; /* writer thread only */
  int n = list_tids(tids, PROF_RES_MAX_SCAN);
  if (n < 0 || grow(s, (size_t)n + 1)) return -1;
  long hz = sysconf(_SC_CLK_TCK);
  uint64_t ns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
  uint64_t *now = calloc((size_t)n + 1, sizeof *now);
  if (!now) return -1;
  int kept = 0;
  for (int i = 0; i < n; i++) {
    prof__res_thread t = {.tid = tids[i]};
    if (read_stat(tids[i], t.comm, &now[i])) continue;
    int found;
    uint64_t before = prev_ticks(s, tids[i], &found);
    t.total_ns = now[i] * ns_per_tick;
    t.cpu_ns = (now[i] >= before ? now[i] - before : 0) * ns_per_tick;
    if (s->primed && t.cpu_ns > 0) keep_top(out, &kept, max, &t);
  }
  memcpy(s->tids, tids, (size_t)n * sizeof *tids);
  memcpy(s->ticks, now, (size_t)n * sizeof *now);
  free(now);
  s->n = (size_t)n;
  *nthreads = (uint32_t)n;
  int was_primed = s->primed;
  s->primed = 1;
  return was_primed ? kept : 0;
}

void prof__res_scan_free(prof__res_scan *s) {
  free(s->tids);
  free(s->ticks);
  memset(s, 0, sizeof *s);
}
