/* procfile.c — small /proc files kept open and read again (procfile.h). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfile.h"

/* Whether descriptor fd is still the file we opened: the program may have
 * closed it and opened something else under the same number. */
static int still_ours(const prof__procfile *f, int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && (uint64_t)st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino;
}

static int fd_of(prof__procfile *f, const char *path) {
  int fd1 = __atomic_load_n(&f->fd1, __ATOMIC_ACQUIRE);
  if (fd1) return fd1 - 1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return -1;
  }
  int expect = 0;
  if (!__atomic_compare_exchange_n(&f->fd1, &expect, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    close(fd); /* another thread is opening it or has: use theirs next time */
    return -1;
  }
  f->dev = (uint64_t)st.st_dev;
  f->ino = (uint64_t)st.st_ino;
  __atomic_store_n(&f->fd1, fd + 1, __ATOMIC_RELEASE);
  return fd;
}

/* Forget the descriptor; close it only if it is still ours. */
static void drop(prof__procfile *f, int fd1) {
  if (fd1 > 0 && still_ours(f, fd1 - 1)) close(fd1 - 1);
}

void prof__procfile_close(prof__procfile *f) {
  int fd1 = __atomic_load_n(&f->fd1, __ATOMIC_ACQUIRE);
  if (fd1 <= 0 || !__atomic_compare_exchange_n(&f->fd1, &fd1, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  drop(f, fd1);
}

int prof__procfile_stat(prof__procfile *f, const char *path, struct stat *st) {
  if (!f || !path || !st) return -1;
  int fd = fd_of(f, path);
  if (fd < 0) return -1;
  if (fstat(fd, st) == 0 && (uint64_t)st->st_dev == f->dev && (uint64_t)st->st_ino == f->ino) return 0;
  int fd1 = fd + 1;
  __atomic_compare_exchange_n(&f->fd1, &fd1, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return -1;
}

long prof__procfile_read(prof__procfile *f, const char *path, char *buf, size_t cap) {
  if (!f || !path || !buf || cap < 2) return -1;
  int fd = fd_of(f, path);
  if (fd < 0) return -1;
  /* Never read, let alone close, a descriptor the program reused. */
  if (!still_ours(f, fd)) {
    int fd1 = fd + 1;
    __atomic_compare_exchange_n(&f->fd1, &fd1, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return -1; /* opened again next time */
  }
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
