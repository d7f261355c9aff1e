/* shared_preload.c — start profiling when libmlprof.so is preloaded into a
 * program that knows nothing of it (shared library only).
 *
 * With MLPROF_PRELOAD=1 (set by `mlprof run`) a constructor calls
 * prof_init() as the library loads, so the whole run is one recording
 * window; prof_shutdown() runs at exit as usual. Children that exec inherit
 * LD_PRELOAD and MLPROF_PRELOAD and profile themselves, each into its own
 * trace: the launcher names the top process's trace in MLPROF_OUTPUT and
 * its pid in MLPROF_RUN_PID; any other process writes
 * "<program>.<pid>.mlpt" into the directory of that trace instead.
 * MLPROF_RUN_CHILDREN=0 stops the inheritance (the top process removes the
 * variables from its environment). A forked child without exec records
 * nothing (the core turns its session off), but its allocator keeps working.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/producer.h"
#include "mem/mem.h"
#include "trace/tracename.h"

/* Remove "…libmlprof…" entries from LD_PRELOAD (children start clean). */
static void drop_preload(void) {
  const char *lp = getenv("LD_PRELOAD");
  if (!lp) return;
  char out[4096] = "", item[PATH_MAX];
  const char *p = lp, *e;
  size_t n;
  while ((e = prof__preload_next(&p, &n)) != NULL) {
    if (n >= sizeof item) continue;
    memcpy(item, e, n);
    item[n] = 0;
    if (!strstr(item, "libmlprof") && strlen(out) + n + 2 < sizeof out) {
      if (*out) strcat(out, ":");
      strcat(out, item);
    }
  }
  if (*out) setenv("LD_PRELOAD", out, 1);
  else unsetenv("LD_PRELOAD");
}

/* A process other than the launcher's child: its own trace, same folder
 * (trace/tracename.h). */
static void child_output(void) {
  const char *out = prof__env("OUTPUT");
  if (!prof__env_run_child() || !out) return;
  struct stat st;
  if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) return; /* already a folder */
  char dir[PATH_MAX];
  if (prof__trace_folder(out, dir, sizeof dir) == 0) setenv("MLPROF_OUTPUT", dir, 1);
}

__attribute__((constructor)) static void preload_start(void) {
  prof__mem_mode_resolve();
  if (!prof__env_preload()) return;
  prof__guard_begin();
  child_output();
  const char *ch = prof__env("RUN_CHILDREN");
  if (ch && strcmp(ch, "0") == 0) {
    drop_preload();
    unsetenv("MLPROF_PRELOAD");
  }
  int rc = prof_init(NULL);
  if (rc && rc != PROF_EDISABLED && rc != PROF_EIO) /* prof_init named an output failure itself */
    fprintf(stderr, "mlprof: preloaded profiler could not start: %s\n", prof_strerror(rc));
  prof__guard_end();
}
