/* snapshot.c — prof_snapshot(): a text report of what the running session
 * recorded so far. The writer is asked to drain and flush first, then the
 * analyzer reads the unfinished trace (it stops cleanly at the last
 * complete chunk) and the report is written through a fresh temporary file
 * (trace/outfile.h) with SIGXFSZ held off.
 *
 * The trace of a running program has no footer yet: that is not a
 * truncation, so the snapshot says the program is live and the report
 * covers what was written so far, never that it was killed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/bgwriter.h"
#include "lib/snapshot.h"
#include "core/session.h"
#include "trace/outfile.h"

/* Replace the truncation (expected while the program runs) by a note that
 * the report is a snapshot of a live program. */
void prof__snapshot_mark_live(prof__an *an) {
  if (!an->truncated) return;
  an->truncated = 0;
  an->trunc_msg[0] = 0;
  size_t k = 0;
  for (size_t i = 0; i < an->nfindings; i++) {
    prof__finding *f = &an->findings[i];
    if (strcmp(f->id, "truncated_trace") == 0) {
      free(f->title);
      free(f->measured);
      free(f->recommendation);
      continue;
    }
    an->findings[k++] = *f;
  }
  an->nfindings = k;
  char m[256];
  snprintf(m, sizeof m,
           "process %ld is still running; %llu events in %llu chunks were written so far and the trace continues",
           (long)getpid(), (unsigned long long)an->events, (unsigned long long)an->chunks);
  prof__an_finding(an, "live_snapshot", "info", 0, "Snapshot of a running program: the report covers what was "
                   "recorded so far", m,
                   "The full report is written when the program calls prof_shutdown() or exits; resume a program "
                   "paused by MLPROF_BREAK_AT with `mlprof resume PID`.");
}

PROF_API int prof_snapshot(const char *path) {
  const char *trace = prof_trace_path();
  if (!trace) return PROF_ESTATE;
  char def[PATH_MAX + 32], tmp[PATH_MAX + 96], err[PROF_ERR_MAX] = "";
  if (!path) {
    snprintf(def, sizeof def, "%s.snapshot.txt", trace);
    path = def;
  }
  int rc = prof__writer_sync(5000);
  if (rc) return rc;
  prof__an *an = NULL;
  rc = prof__an_run_opts(&an, trace, 1, err);
  if (rc) return rc;
  prof__snapshot_mark_live(an);
  prof__xfsz_guard xg; /* a file size limit fails the write, never kills the process */
  prof__xfsz_block(&xg);
  int fd = prof__out_check(path, err) == 0 ? prof__out_create(path, tmp, sizeof tmp, 0600, err) : -1;
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
