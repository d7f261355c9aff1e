/* tracename.c — the naming rule of traces: where a trace goes, the names
 * after it, free names for new traces and finding them again. See
 * tracename.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tracename.h"

#define EXT ".mlpt"
#define EXT_LEN 5

size_t prof__trace_stem_len(const char *path) {
  size_t len = strlen(path);
  return len >= EXT_LEN && strcmp(path + len - EXT_LEN, EXT) == 0 ? len - EXT_LEN : len;
}

int prof__trace_sibling(char *out, size_t n, const char *path, const char *tag) {
  int w = snprintf(out, n, "%.*s.%s" EXT, (int)prof__trace_stem_len(path), path, tag);
  return w >= 0 && (size_t)w < n ? 0 : -1;
}

int prof__trace_is_sibling(const char *path, const char *trace, const char *tag_prefix) {
  size_t len = prof__trace_stem_len(trace);
  return strncmp(path, trace, len) == 0 && path[len] == '.' &&
         strncmp(path + len + 1, tag_prefix, strlen(tag_prefix)) == 0;
}

void prof__trace_default_name(char *out, size_t n, const char *program, const char *host, long rank, long pid) {
  if (host) snprintf(out, n, "%s.%s.r%ld.%ld" EXT, program, host, rank, pid);
  else snprintf(out, n, "%s.%ld" EXT, program, pid);
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int prof__trace_output_path(char *out, size_t n, const char *output, const char *name, char *err) {
  if (!output) {
    snprintf(out, n, "%s", name);
    return 0;
  }
  size_t len = strlen(output);
  if ((len && output[len - 1] == '/') || is_dir(output)) { /* a folder: the default name in it */
    snprintf(out, n, "%s%s%s", output, output[len - 1] == '/' ? "" : "/", name);
    return prof__mkdirs(output, err);
  }
  snprintf(out, n, "%s", output);
  char dir[4096];
  const char *slash = strrchr(output, '/');
  if (!slash || slash == output) return 0; /* the working directory, or the root */
  if (prof__trace_folder(output, dir, sizeof dir) != 0) {
    snprintf(err, PROF_ERR_MAX, "trace path too long: '%.200s'", output);
    return -1;
  }
  return is_dir(dir) ? 0 : prof__mkdirs(dir, err);
}

int prof__trace_folder(const char *path, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  int w;
  if (!slash) w = snprintf(out, n, ".");
  else if (slash == path) w = snprintf(out, n, "/");
  else w = snprintf(out, n, "%.*s", (int)(slash - path), path);
  return w >= 0 && (size_t)w < n ? 0 : -1;
}

int prof__trace_name(const char *base, unsigned k, char *out, size_t n) {
  size_t len = strlen(base);
  int w;
  if (k == 0) {
    w = snprintf(out, n, "%s", base);
  } else if (len >= EXT_LEN && strcmp(base + len - EXT_LEN, EXT) == 0) {
    w = snprintf(out, n, "%.*s.%u" EXT, (int)(len - EXT_LEN), base, k);
  } else {
    w = snprintf(out, n, "%s.%u", base, k);
  }
  return w >= 0 && (size_t)w < n ? 0 : -1;
}

int prof__trace_folder_check(const char *path, char *err) {
  char dir[4096];
  if (prof__trace_folder(path, dir, sizeof dir) != 0) {
    snprintf(err, PROF_ERR_MAX, "trace path too long: '%.200s'", path);
    return -1;
  }
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
