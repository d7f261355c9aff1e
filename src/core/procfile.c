/* procfile.c — small /proc files kept open and read again (procfile.h). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfile.h"

/* Whether descriptor fd is still the file we opened (its fstat in *st):
 * the program may have closed it and opened something else under the same
 * number. */
static int still_ours(const prof__procfile *f, int fd, struct stat *st) {
  return fstat(fd, st) == 0 && (uint64_t)st->st_dev == f->dev && (uint64_t)st->st_ino == f->ino;
}

/* Forget descriptor fd without closing it: it is not ours any more. */
static void forget(prof__procfile *f, int fd) {
  int fd1 = fd + 1;
  __atomic_compare_exchange_n(&f->fd1, &fd1, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
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

/* Close the descriptor, only if it is still ours. */
void prof__procfile_close(prof__procfile *f) {
  int fd1 = __atomic_load_n(&f->fd1, __ATOMIC_ACQUIRE);
  if (fd1 <= 0 || !__atomic_compare_exchange_n(&f->fd1, &fd1, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  struct stat st;
  if (still_ours(f, fd1 - 1, &st)) close(fd1 - 1);
}

/* The kept descriptor of `path`, opened if need be and checked to be still
 * ours (its fstat in *st); -1 when it cannot be had (one the program
 * reused is forgotten, never read nor closed, and opened again next time). */
static int checked_fd(prof__procfile *f, const char *path, struct stat *st) {
  int fd = fd_of(f, path);
  if (fd < 0) return -1;
  if (still_ours(f, fd, st)) return fd;
  forget(f, fd);
  return -1;
}

int prof__procfile_stat(prof__procfile *f, const char *path, struct stat *st) {
  if (!f || !path || !st) return -1;
  return checked_fd(f, path, st) < 0 ? -1 : 0;
}

long prof__procfile_read(prof__procfile *f, const char *path, char *buf, size_t cap) {
  if (!f || !path || !buf || cap < 2) return -1;
  struct stat st;
  int fd = checked_fd(f, path, &st);
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
