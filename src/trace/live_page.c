/* live_page.c — where live pages live, the reservation of a page's space
 * before it is mapped, and the reader side of the page: map another
 * process's page (only a regular file the user owns, with the right magic,
 * version and pid) and copy a consistent view of it under its seqlocks. The
 * writer side is src/live/live.c.
 *
 * A store to (or a load from) a page of a shared file mapping that the file
 * system cannot back faults with SIGBUS: a file sized with ftruncate on a
 * full tmpfs (/dev/shm) is such a mapping. So both sides reserve the page's
 * blocks before they map it (prof__livepage_reserve) and give the page up
 * when they cannot. A page can still fault after that only if it is
 * truncated while mapped; the folder is the user's own (0700) and the page
 * 0600, so only the user's own processes can do that, and they can as well
 * kill the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live_page.h"
#include "settings.h"

/* Zeros written over [0, len): a real reservation where the file system has
 * no fallocate (a write that succeeds has its blocks). */
static int write_zeros(int fd, size_t len) {
  static const char zero[512];
  for (size_t off = 0; off < len;) {
    size_t n = len - off < sizeof zero ? len - off : sizeof zero;
    ssize_t w = pwrite(fd, zero, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    off += (size_t)w;
  }
  return 0;
}

int prof__livepage_reserve(int fd, size_t len) {
  int rc;
  do /* posix_fallocate returns the error number; errno is left alone */
    rc = posix_fallocate(fd, 0, (off_t)len);
  while (rc == EINTR);
  if (rc == EOPNOTSUPP || rc == ENOSYS) {
    struct stat st; /* zeros only over a page not written yet (never a live one) */
    if (fstat(fd, &st) != 0) return errno;
    rc = st.st_size == 0 ? write_zeros(fd, len) : EOPNOTSUPP;
  }
  return rc;
}

int prof__livepage_dir(char *out, size_t n, int create) {
  const char *dir = prof__env("LIVE_DIR");
  if (dir) {
    snprintf(out, n, "%s", dir);
    return 0;
  }
  uid_t uid = geteuid();
  snprintf(out, n, "/dev/shm/mlprof-%u", (unsigned)uid);
  if (create && mkdir(out, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  if (lstat(out, &st) != 0) return create ? -1 : 0;
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
    errno = EPERM;
    return -1;
  }
  if ((st.st_mode & 077) && chmod(out, 0700) != 0) return -1;
  return 0;
}

void prof__livepage_path(int pid, char *out, size_t n) {
  char dir[400];
  prof__livepage_dir(dir, sizeof dir, 0);
  snprintf(out, n, "%s/mlprof.%d", dir, pid);
}

prof__live_page *prof__livepage_open(int pid, char *path_out, size_t n) {
  char path[512];
  prof__livepage_path(pid, path, sizeof path);
  if (path_out) snprintf(path_out, n, "%s", path);
  int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void *p = MAP_FAILED;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd); /* only the user's own pages */
    errno = EACCES;
    return NULL;
  }
  /* A page whose blocks cannot be had (a sparse page on a full tmpfs) is
   * not mapped. Without fallocate the writer wrote the page out in full. */
  int reserved = (size_t)st.st_size >= sizeof(prof__live_page) ? prof__livepage_reserve(fd, sizeof(prof__live_page))
                                                                : EPROTO;
  if (reserved == 0 || reserved == EOPNOTSUPP)
    p = mmap(NULL, sizeof(prof__live_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    errno = reserved == 0 || reserved == EOPNOTSUPP ? EPROTO : reserved; /* ENOSPC: say so */
    return NULL;
  }
  prof__live_page *lp = p;
  if (__atomic_load_n(&lp->magic, __ATOMIC_ACQUIRE) != PROF_LIVE_MAGIC || lp->version != PROF_LIVE_VERSION ||
      lp->pid != (uint32_t)pid) {
    munmap(p, sizeof *lp);
    errno = EPROTO;
    return NULL;
  }
  return lp;
}

void prof__livepage_close(prof__live_page *p) {
  if (p) munmap(p, sizeof *p);
}

/* Copy one part under its seqlock; returns 0 or -1 after many torn reads. */
static int read_part(const uint64_t *seq, const void *src, void *dst, size_t n) {
  for (int tries = 0; tries < 10000; tries++) {
    uint64_t a = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
    if (a & 1) continue;
    memcpy(dst, src, n);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(seq, __ATOMIC_RELAXED) == a) return 0;
  }
  return -1;
}

int prof__livepage_read(const prof__live_page *p, prof__live_page *out) {
  memcpy(out, p, offsetof(prof__live_page, step));
  int rc = read_part(&p->step.seq, &p->step, &out->step, sizeof out->step);
  if (read_part(&p->bg.seq, &p->bg, &out->bg, sizeof out->bg)) rc = -1;
  out->ctl.trigger_steps = __atomic_load_n(&p->ctl.trigger_steps, __ATOMIC_ACQUIRE);
  out->ctl.resume_seq = __atomic_load_n(&p->ctl.resume_seq, __ATOMIC_ACQUIRE);
  out->ctl.paused_step = __atomic_load_n(&p->ctl.paused_step, __ATOMIC_ACQUIRE);
  memcpy(out->ctl.last_snapshot, p->ctl.last_snapshot, sizeof out->ctl.last_snapshot);
  /* The page is another process's memory: its strings end in the copy. */
  out->program[sizeof out->program - 1] = 0;
  out->trace[sizeof out->trace - 1] = 0;
  out->bg.last_capture[sizeof out->bg.last_capture - 1] = 0;
  out->ctl.last_snapshot[sizeof out->ctl.last_snapshot - 1] = 0;
  for (int i = 0; i < PROF_LIVE_TOP; i++) out->bg.top[i].name[sizeof out->bg.top[i].name - 1] = 0;
  return rc;
}
