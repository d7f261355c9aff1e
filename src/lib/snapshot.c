/* snapshot.c — prof_snapshot(): a text report of what the running session
 * recorded so far. The writer is asked to drain and flush first, then the
 * analyzer reads the unfinished trace (it stops cleanly at the last
 * complete chunk) and the report is written through a fresh temporary file
 * (trace/outfile.h) with SIGXFSZ held off.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/bgwriter.h"
#include "core/session.h"
#include "trace/outfile.h"

PROF_API int prof_snapshot(const char *path) {
  const char *trace = prof_trace_path();
  if (!trace) return PROF_ESTATE;
  char def[PATH_MAX + 32], tmp[PATH_MAX + 96], err[256] = "";
  if (!path) {
    snprintf(def, sizeof def, "%s.snapshot.txt", trace);
    path = def;
  }
  int rc = prof__writer_sync(5000);
  if (rc) return rc;
  prof__an *an = NULL;
  rc = prof__an_run_opts(&an, trace, 1, err);
  if (rc) return rc;
  prof__xfsz_guard xg; /* a file size limit fails the write, never kills the process */
  prof__xfsz_block(&xg);
  int fd = prof__out_check(path, err) == 0 ? prof__out_create(path, tmp, sizeof tmp, 0644, err) : -1;
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
    rc = PROF_EIO;
  } else {
    rc = prof__report_write(an, "text", f);
    if (fclose(f) != 0 && rc == 0) rc = PROF_EIO;
    if (rc) unlink(tmp);
    else if (prof__out_commit(tmp, path, err) != 0) rc = PROF_EIO;
  }
  prof__xfsz_restore(&xg);
  if (rc) fprintf(stderr, "mlprof: snapshot '%s' not written%s%s\n", path, err[0] ? ": " : "", err);
  prof__an_free(an);
  return rc;
}
