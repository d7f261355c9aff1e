/* tracename.c — free names for new traces and finding them again. See
 * tracename.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tracename.h"

int prof__trace_name(const char *base, unsigned k, char *out, size_t n) {
  size_t len = strlen(base);
  int w;
  if (k == 0) {
    w = snprintf(out, n, "%s", base);
  } else if (len >= 5 && strcmp(base + len - 5, ".mlpt") == 0) {
    w = snprintf(out, n, "%.*s.%u.mlpt", (int)(len - 5), base, k);
  } else {
    w = snprintf(out, n, "%s.%u", base, k);
  }
  return w >= 0 && (size_t)w < n ? 0 : -1;
}

int prof__trace_folder_check(const char *path, char *err) {
  const char *slash = strrchr(path, '/');
  if (!slash) return prof__out_dir_check(".", err);
  if (slash == path) return prof__out_dir_check("/", err);
  char dir[4096];
  if ((size_t)(slash - path) >= sizeof dir) {
    snprintf(err, PROF_ERR_MAX, "trace path too long: '%.200s'", path);
    return -1;
  }
  memcpy(dir, path, (size_t)(slash - path));
  dir[slash - path] = 0;
  return prof__out_dir_check(dir, err);
}

prof__tw *prof__trace_create_free(char *path, size_t n, const prof__kv *kv, size_t nkv, char *err) {
  if (prof__trace_folder_check(path, err) != 0) return NULL;
  char *name = malloc(n);
  if (!name) {
    snprintf(err, PROF_ERR_MAX, "out of memory");
    return NULL;
  }
  prof__tw *w = NULL;
  for (unsigned k = 0; k < PROF_TRACE_NAMES && !w; k++) {
    if (prof__trace_name(path, k, name, n) != 0) {
      snprintf(err, PROF_ERR_MAX, "trace path too long: '%.200s'", path);
      break;
    }
    int taken = 0;
    w = prof__tw_create(name, kv, nkv, &taken, err);
    /* A name taken by a regular file of the user's (an earlier trace) is
     * passed by; a symlink or another user's file there is refused. */
    if (!w && (!taken || prof__out_check(name, err) != 0)) break;
    if (!w && k + 1 == PROF_TRACE_NAMES)
      snprintf(err, PROF_ERR_MAX, "no free trace name at '%.150s': it and its %d numbered names are taken "
               "(remove old traces)", path, PROF_TRACE_NAMES - 1);
  }
  if (w) memcpy(path, name, n);
  free(name);
  return w;
}

/* Did process `pid` start the trace `path` at or after `since_ns`? */
static int started_by(const char *path, long pid, uint64_t since_ns, uint64_t *start) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return 0;
  prof__reader *r;
  char err[PROF_ERR_MAX];
  if (prof__reader_open(&r, path, err) != 0) return 0;
  const char *p = prof__reader_get(r, "pid"), *t = prof__reader_get(r, "start_realtime_ns");
  *start = t ? strtoull(t, NULL, 10) : 0;
  int mine = p && strtol(p, NULL, 10) == pid && *start >= since_ns;
  prof__reader_close(r);
  return mine;
}

int prof__trace_find(const char *base, long pid, uint64_t since_ns, char *out, size_t n) {
  size_t cap = strlen(base) + 16;
  char *name = malloc(cap);
  if (!name) return 0;
  int count = 0;
  uint64_t latest = 0;
  for (unsigned k = 0; k < PROF_TRACE_NAMES && prof__trace_name(base, k, name, cap) == 0; k++) {
    uint64_t start;
    if (!started_by(name, pid, since_ns, &start)) continue;
    if ((count++ == 0 || start >= latest) && strlen(name) < n) {
      latest = start;
      memcpy(out, name, strlen(name) + 1);
    }
  }
  free(name);
  return count;
}
