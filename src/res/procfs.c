/* procfs.c — the process's cumulative resource counters, read from the
 * kernel: getrusage (CPU time, context switches, page faults), /proc/self/
 * statm (RSS), /proc/self/io (I/O bytes), /proc/loadavg and
 * /proc/self/net/dev (the network namespace's interfaces).
 *
 * Files are read into a stack buffer through core/procfile.h (kept open,
 * read again each period): no stdio, no allocation, no lock. A source that
 * cannot be read clears its have_ flag and the sampler skips its metrics. The parsers take bounded text and
 * never read past it.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/procfile.h"
#include "res.h"

/* Read a whole (small) file into buf, NUL-terminated; returns its length or
 * -1. Longer files are cut at cap - 1 bytes. For files read once. */
static long read_small(const char *path, char *buf, size_t cap) {
  prof__procfile once = {0};
  long n = prof__procfile_read(&once, path, buf, cap);
  prof__procfile_close(&once);
  return n;
}

/* The files read every period: kept open. */
static prof__procfile f_loadavg, f_io, f_netdev;

/* Parse an unsigned decimal at *p (skipping blanks); -1 when none. */
static int take_u64(const char **p, const char *end, uint64_t *v) {
  const char *s = *p;
  while (s < end && (*s == ' ' || *s == '\t')) s++;
  if (s >= end || *s < '0' || *s > '9') return -1;
  uint64_t x = 0;
  while (s < end && *s >= '0' && *s <= '9') x = x * 10 + (uint64_t)(*s++ - '0');
  *p = s;
  *v = x;
  return 0;
}

static const char *next_line(const char *s, const char *end) {
  while (s < end && *s != '\n') s++;
  return s < end ? s + 1 : end;
}

int prof__res_parse_io(const char *s, size_t n, prof__res_raw *r) {
  static const char *const keys[] = {"rchar:", "wchar:", "read_bytes:", "write_bytes:"};
  uint64_t *dst[] = {&r->rchar, &r->wchar, &r->read_bytes, &r->write_bytes};
  const char *end = s + n;
  int found = 0;
  for (const char *l = s; l < end; l = next_line(l, end)) {
    for (int k = 0; k < 4; k++) {
      size_t kl = strlen(keys[k]);
      if ((size_t)(end - l) <= kl || memcmp(l, keys[k], kl) != 0) continue;
      const char *p = l + kl;
      if (take_u64(&p, end, dst[k]) == 0) found |= 1 << k;
    }
  }
  return found == 0xf ? 0 : -1;
}

/* One "iface: rx_bytes ... tx_bytes ..." line; -1 when it is not one. */
static int netdev_line(const char *l, const char *end, uint64_t *rx, uint64_t *tx) {
  const char *colon = l;
  while (colon < end && *colon != ':' && *colon != '\n') colon++;
  if (colon >= end || *colon != ':') return -1;
  const char *p = colon + 1;
  uint64_t v[9];
  for (int i = 0; i < 9; i++)
    if (take_u64(&p, end, &v[i])) return -1;
  *rx = v[0];
  *tx = v[8];
  return 0;
}

int prof__res_parse_netdev(const char *s, size_t n, uint64_t *rx, uint64_t *tx) {
  const char *end = s + n;
  uint64_t srx = 0, stx = 0;
  int lines = 0;
  for (const char *l = s; l < end; l = next_line(l, end)) {
    uint64_t a, b;
    if (netdev_line(l, end, &a, &b)) continue;
    srx += a;
    stx += b;
    lines++;
  }
  if (!lines) return -1;
  *rx = srx;
  *tx = stx;
  return 0;
}

int prof__res_parse_loadavg(const char *s, size_t n, double *load1) {
  const char *end = s + n, *p = s;
  uint64_t ip, fp = 0, scale = 1;
  if (take_u64(&p, end, &ip)) return -1;
  if (p < end && *p == '.') {
    p++;
    while (p < end && *p >= '0' && *p <= '9' && scale < 1000000) {
      fp = fp * 10 + (uint64_t)(*p++ - '0');
      scale *= 10;
    }
  }
  *load1 = (double)ip + (double)fp / (double)scale;
  return 0;
}

int prof__res_parse_taskstat(const char *s, size_t n, char comm[17], uint64_t *ticks) {
  const char *end = s + n, *open = memchr(s, '(', n), *close = NULL;
  for (const char *q = end; q > s; q--)
    if (q[-1] == ')') {
      close = q - 1;
      break;
    }
  if (!open || !close || close < open) return -1;
  size_t cl = (size_t)(close - open - 1);
  if (cl > 16) cl = 16;
  memcpy(comm, open + 1, cl);
  comm[cl] = 0;
  const char *p = close + 1;
  uint64_t v = 0, ut = 0, st = 0;
  /* After ") ": state, then fields 4..; utime and stime are fields 14, 15. */
  while (p < end && *p == ' ') p++;
  if (p >= end) return -1;
  p++; /* state letter */
  for (int field = 4; field <= 15; field++) {
    if (p < end && *p == ' ') p++;
    if (p < end && *p == '-') p++; /* tty_nr and tpgid may be negative */
    if (take_u64(&p, end, &v)) return -1;
    if (field == 14) ut = v;
    if (field == 15) st = v;
  }
  *ticks = ut + st;
  return 0;
}

static uint64_t tv_ns(struct timeval tv) {
  return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

static void read_rusage(prof__res_raw *r) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return;
  r->sys_ns = tv_ns(ru.ru_stime);
  r->cpu_ns = tv_ns(ru.ru_utime) + r->sys_ns;
  r->nvcsw = (uint64_t)ru.ru_nvcsw;
  r->nivcsw = (uint64_t)ru.ru_nivcsw;
  r->minflt = (uint64_t)ru.ru_minflt;
  r->majflt = (uint64_t)ru.ru_majflt;
}

static void read_rss(prof__res_raw *r) {
  r->rss_bytes = prof__proc_rss();
  r->have_rss = r->rss_bytes > 0;
}

void prof__res_read(prof__res_raw *r) {
  char buf[4096];
  memset(r, 0, sizeof *r);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  r->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  read_rusage(r);
  read_rss(r);
  long n = prof__procfile_read(&f_loadavg, "/proc/loadavg", buf, sizeof buf);
  r->have_load = n > 0 && prof__res_parse_loadavg(buf, (size_t)n, &r->load1) == 0;
  n = prof__procfile_read(&f_io, "/proc/self/io", buf, sizeof buf);
  r->have_io = n > 0 && prof__res_parse_io(buf, (size_t)n, r) == 0;
  n = prof__procfile_read(&f_netdev, "/proc/self/net/dev", buf, sizeof buf);
  r->have_net = n > 0 && prof__res_parse_netdev(buf, (size_t)n, &r->net_rx, &r->net_tx) == 0;
}

/* CPU quota of the cgroup (v2 cpu.max, else v1 cfs files) in CPUs; 0: none. */
static double cgroup_quota(void) {
  char buf[128];
  long n = read_small("/sys/fs/cgroup/cpu.max", buf, sizeof buf);
  const char *p = buf;
  uint64_t q, per;
  if (n > 0) {
    if (take_u64(&p, buf + n, &q) == 0 && take_u64(&p, buf + n, &per) == 0 && per) return (double)q / (double)per;
    return 0; /* "max": no quota */
  }
  n = read_small("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", buf, sizeof buf);
  if (n <= 0 || buf[0] == '-') return 0;
  p = buf;
  if (take_u64(&p, buf + n, &q)) return 0;
  n = read_small("/sys/fs/cgroup/cpu/cpu.cfs_period_us", buf, sizeof buf);
  p = buf;
  if (n <= 0 || take_u64(&p, buf + n, &per) || !per) return 0;
  return (double)q / (double)per;
}

double prof__res_cpu_limit(int *online) {
  long on = sysconf(_SC_NPROCESSORS_ONLN);
  *online = on > 0 ? (int)on : 1;
  cpu_set_t set;
  double lim = *online;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) lim = CPU_COUNT(&set);
  double q = cgroup_quota();
  if (q > 0 && q < lim) lim = q;
  return lim;
}

int prof__res_parse_hwm(const char *s, size_t n, uint64_t *bytes) {
  const char *end = s + n;
  for (const char *l = s; l < end; l = next_line(l, end)) {
    if ((size_t)(end - l) <= 6 || memcmp(l, "VmHWM:", 6) != 0) continue;
    const char *p = l + 6;
    uint64_t kb;
    if (take_u64(&p, end, &kb) || kb > UINT64_MAX / 1024) return -1;
    *bytes = kb * 1024;
    return 0;
  }
  return -1;
}

uint64_t prof__res_rss_hwm(void) {
  char buf[4096];
  long n = read_small("/proc/self/status", buf, sizeof buf);
  uint64_t b = 0;
  return n > 0 && prof__res_parse_hwm(buf, (size_t)n, &b) == 0 ? b : 0;
}
