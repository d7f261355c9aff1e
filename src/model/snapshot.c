/* snapshot.c — prof_snapshot(): a text report of what the running session
 * recorded so far. The writer is asked to drain and flush first, then the
 * analyzer reads the unfinished trace (it stops cleanly at the last
 * complete chunk) and the report is written through a temporary file.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/bgwriter.h"
#include "core/session.h"

PROF_API int prof_snapshot(const char *path) {
  const char *trace = prof_trace_path();
  if (!trace) return PROF_ESTATE;
  char def[PATH_MAX + 32], tmp[PATH_MAX + 48], err[256] = "";
  if (!path) {
    snprintf(def, sizeof def, "%s.snapshot.txt", trace);
    path = def;
  }
  int rc = prof__writer_sync(5000);
  if (rc) return rc;
  prof__an *an = NULL;
  rc = prof__an_run_opts(&an, trace, 1, err);
  if (rc) return rc;
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) rc = PROF_EIO;
  else {
    rc = prof__report_write(an, "text", f);
    if (fclose(f) != 0 && rc == 0) rc = PROF_EIO;
    if (rc == 0 && rename(tmp, path) != 0) rc = PROF_EIO;
    if (rc) unlink(tmp);
  }
  prof__an_free(an);
  return rc;
}
