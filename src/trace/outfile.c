/* outfile.c — safe creation of output files (traces, reports, snapshots)
 * and the SIGXFSZ guard around writing them. See outfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"

int prof__out_check(const char *path, char *err) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return 0;
    snprintf(err, PROF_ERR_MAX, "cannot check '%s': %s", path, strerror(errno));
    return -1;
  }
  const char *why = NULL;
  if (S_ISLNK(st.st_mode)) why = "it is a symbolic link";
  else if (!S_ISREG(st.st_mode)) why = "it is not a regular file";
  else if (st.st_uid != geteuid()) why = "it belongs to another user";
  if (!why) return 0;
  snprintf(err, PROF_ERR_MAX, "refusing to replace '%s': %s", path, why);
  return -1;
}

int prof__out_create(const char *path, char *tmp, size_t tmp_n, int mode, char *err) {
  /* n: the calling thread's id and the attempt, so threads never collide
   * and the file keeps no counter (a leftover name is skipped by O_EXCL). */
  for (unsigned attempt = 0; attempt < 16; attempt++) {
    unsigned k = (unsigned)gettid() * 16u + attempt;
    if ((size_t)snprintf(tmp, tmp_n, "%s.%d.%u.tmp", path, (int)getpid(), k) >= tmp_n) {
      snprintf(err, PROF_ERR_MAX, "path too long: '%s'", path);
      return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      snprintf(err, PROF_ERR_MAX, "cannot create '%s': %s", path, strerror(errno)); /* the user's name, not the temporary's */
      return -1;
    }
  }
  snprintf(err, PROF_ERR_MAX, "cannot create a temporary file beside '%s': names taken", path);
  return -1;
}

int prof__out_commit(const char *tmp, const char *path, char *err) {
  if (prof__out_check(path, err) != 0) {
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, PROF_ERR_MAX, "cannot write '%s': %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

int prof__out_fopen(prof__outf *o, const char *path, int mode, char *err) {
  size_t n = strlen(path) + 64;
  o->f = NULL;
  o->path = strdup(path);
  o->tmp = malloc(n);
  if (!o->path || !o->tmp) {
    snprintf(err, PROF_ERR_MAX, "out of memory");
    goto fail;
  }
  if (prof__out_check(path, err) != 0) goto fail;
  int fd = prof__out_create(path, o->tmp, n, mode, err);
  if (fd < 0) goto fail;
  o->f = fdopen(fd, "w");
  if (o->f) return 0;
  snprintf(err, PROF_ERR_MAX, "cannot write '%s': %s", path, strerror(errno));
  close(fd);
  unlink(o->tmp);
fail:
  free(o->path);
  free(o->tmp);
  o->path = o->tmp = NULL;
  return -1;
}

int prof__out_fclose(prof__outf *o, int ok, char *err) {
  int rc = -1;
  if (fclose(o->f) != 0 && ok) {
    snprintf(err, PROF_ERR_MAX, "cannot write '%s': %s", o->path, strerror(errno));
    ok = 0;
  }
  if (ok) rc = prof__out_commit(o->tmp, o->path, err) == 0 ? 0 : -1;
  else unlink(o->tmp);
  free(o->path);
  free(o->tmp);
  o->f = NULL;
  o->path = o->tmp = NULL;
  return rc;
}

int prof__out_busy(const char *path) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int busy = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) != 0)
    busy = errno == EWOULDBLOCK;
  close(fd); /* releases only this description's shared lock */
  return busy;
}

void prof__xfsz_block(prof__xfsz_guard *g) {
  sigset_t s, pend;
  sigemptyset(&s);
  sigaddset(&s, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &s, &g->old);
  g->pending_before = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ);
}

void prof__xfsz_restore(prof__xfsz_guard *g) {
  if (!g->pending_before) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGXFSZ);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&s, NULL, &zero) == SIGXFSZ) {} /* raised by our writes */
  }
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

int prof__mkdirs(const char *dir, char *err) {
  char p[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof p) {
    snprintf(err, PROF_ERR_MAX, "cannot create directory '%.200s': bad length", dir);
    return -1;
  }
  memcpy(p, dir, n + 1);
  /* Each prefix ending before a '/', then the whole path. */
  for (size_t i = 1; i <= n; i++) {
    if (i < n && p[i] != '/') continue;
    char c = p[i];
    p[i] = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      snprintf(err, PROF_ERR_MAX, "cannot create directory '%.200s': %s", p, strerror(errno));
      return -1;
    }
    p[i] = c;
  }
  return prof__out_dir_check(dir, err);
}

/* Is the folder open on fd the user's own (or root's)? */
static int dir_owned(int fd, const char *dir, char *err) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(err, PROF_ERR_MAX, "cannot check folder '%.200s': %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, PROF_ERR_MAX, "cannot use '%.200s' as a folder: it is not one", dir);
    return -1;
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    snprintf(err, PROF_ERR_MAX, "refusing output folder '%.160s': it belongs to another user (uid %u)", dir,
             (unsigned)st.st_uid);
    return -1;
  }
  return 0;
}

int prof__out_dir_check(const char *dir, char *err) {
  char d[4096];
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--; /* "x/" would follow a symlink x */
  if (n == 0 || n >= sizeof d) {
    snprintf(err, PROF_ERR_MAX, "cannot use folder '%.200s': bad length", dir);
    return -1;
  }
  memcpy(d, dir, n);
  d[n] = 0;
  int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    /* A symlink: the user's own (or root's) link to a folder of theirs. */
    struct stat ls;
    if (lstat(d, &ls) == 0 && S_ISLNK(ls.st_mode)) {
      if (ls.st_uid != geteuid() && ls.st_uid != 0) {
        snprintf(err, PROF_ERR_MAX, "refusing output folder '%.160s': it is another user's symbolic link", dir);
        return -1;
      }
      fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else {
      snprintf(err, PROF_ERR_MAX, "cannot use '%.200s' as a folder: a file of that name exists", dir);
      return -1;
    }
  }
  if (fd < 0) {
    snprintf(err, PROF_ERR_MAX, "cannot use folder '%.200s': %s", dir, strerror(errno));
    return -1;
  }
  int rc = dir_owned(fd, dir, err);
  close(fd);
  return rc;
}
