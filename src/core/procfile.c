/* procfile.c — small /proc files read with one system call (procfile.h). */
#include <fcntl.h>
#include <unistd.h>

#include "procfile.h"

static int fd_of(prof__procfile *f, const char *path) {
  int fd1 = __atomic_load_n(&f->fd1, __ATOMIC_ACQUIRE);
  if (fd1) return fd1 - 1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int expect = 0;
  if (!__atomic_compare_exchange_n(&f->fd1, &expect, fd + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    close(fd); /* another thread opened it first */
    return expect - 1;
  }
  return fd;
}

void prof__procfile_close(prof__procfile *f) {
  int fd1 = __atomic_exchange_n(&f->fd1, 0, __ATOMIC_ACQ_REL);
  if (fd1) close(fd1 - 1);
}

long prof__procfile_read(prof__procfile *f, const char *path, char *buf, size_t cap) {
  if (!f || !path || !buf || cap < 2) return -1;
  int fd = fd_of(f, path);
  if (fd < 0) return -1;
  ssize_t n = pread(fd, buf, cap - 1, 0);
  if (n < 0) {
    prof__procfile_close(f);
    return -1;
  }
  buf[n] = 0;
  return (long)n;
}

uint64_t prof__proc_rss(void) {
  static prof__procfile statm;
  char buf[128];
  long n = prof__procfile_read(&statm, "/proc/self/statm", buf, sizeof buf);
  if (n <= 0) return 0;
  const char *p = buf;
  while (*p && *p != ' ') p++; /* skip the size field */
  while (*p == ' ') p++;
  uint64_t pages = 0;
  while (*p >= '0' && *p <= '9') pages = pages * 10 + (uint64_t)(*p++ - '0');
  long ps = sysconf(_SC_PAGESIZE);
  return pages * (uint64_t)(ps > 0 ? ps : 4096);
}
