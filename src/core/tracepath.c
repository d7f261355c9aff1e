/* tracepath.c — MLPROF_PREV_TRACE: the trace a process wrote before, handed
 * to its next image or session. See tracepath.h.
 *
 * setenv runs once per session, inside prof_init; it is the only change the
 * library makes to the environment of a program it was linked into
 * (docs/host-safety.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/settings.h"
#include "producer.h"
#include "tracepath.h"

#define PREV_NAME "PREV_TRACE"          /* read with prof__env */
#define PREV_VAR "MLPROF_" PREV_NAME /* set with setenv */

static int had_prev; /* this process wrote a trace before this session's */

int prof__first_trace(void) { return !had_prev; }

void prof__prev_trace(char *out, size_t n) {
  out[0] = 0;
  const char *v = prof__env(PREV_NAME);
  if (!v) return;
  char *end;
  errno = 0;
  long pid = strtol(v, &end, 10);
  if (errno || end == v || *end != ':' || !end[1] || pid != (long)getpid()) return;
  snprintf(out, n, "%s", end + 1);
  had_prev = 1;
}

void prof__prev_trace_set(const char *path) {
  char v[PATH_MAX + 32], cwd[PATH_MAX];
  int pid = (int)getpid(), w;
  if (path[0] == '/') {
    w = snprintf(v, sizeof v, "%d:%s", pid, path);
  } else {
    w = -1;
    if (getcwd(cwd, sizeof cwd)) {
      while (path[0] == '.' && path[1] == '/') path += 2;
      w = snprintf(v, sizeof v, "%d:%s%s%s", pid, cwd, strcmp(cwd, "/") ? "/" : "", path);
    }
  }
  /* Without an absolute name successors record none (never an older one). */
  if (w > 0 && (size_t)w < sizeof v) setenv(PREV_VAR, v, 1);
  else unsetenv(PREV_VAR);
}
