/* report_api.c — prof_report(): the report (text, JSON, HTML) or the
 * Chrome trace of a trace file, or of the trace the running session is
 * writing (flushed first, analysed as a snapshot), written from inside the
 * program. Language bindings use it for their tables and exports (the
 * torch.profiler-style `table()` and `export_chrome_trace()` of the Python
 * binding). The file is written through a temporary file, with SIGXFSZ
 * held off, as every report is. */
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"
#include "core/bgwriter.h"
#include "lib/snapshot.h"
#include "mlprof.h"
#include "trace/outfile.h"

static int write_out(prof__an *an, const char *format, const char *out, char *err) {
  prof__outf o;
  if (prof__out_fopen(&o, out, 0644, err) != 0) return PROF_EIO;
  int rc = strcmp(format, "chrome") == 0 ? prof__export_chrome_opts(an, o.f, NULL) : prof__report_write(an, format, o.f);
  if (prof__out_fclose(&o, rc == 0, err) != 0 && rc == 0) rc = PROF_EIO;
  return rc;
}

PROF_API int prof_report(const char *trace, const char *format, const char *out) {
  if (!format || !out) return PROF_EINVAL;
  if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "html") && strcmp(format, "chrome"))
    return PROF_EINVAL;
  int live = trace == NULL;
  if (live) {
    trace = prof_trace_path();
    if (!trace) return PROF_ESTATE;
    int rc = prof__writer_sync(5000);
    if (rc) return rc;
  }
  char err[PROF_ERR_MAX] = "";
  prof__an *an = NULL;
  int rc = prof__an_run_opts(&an, trace, 1, err);
  if (rc == 0) {
    if (live) prof__snapshot_mark_live(an);
    prof__xfsz_guard xg;
    prof__xfsz_block(&xg);
    rc = write_out(an, format, out, err);
    prof__xfsz_restore(&xg);
  }
  if (rc) fprintf(stderr, "mlprof: report of '%s' not written to '%s'%s%s\n", trace, out, err[0] ? ": " : "", err);
  prof__an_free(an);
  return rc;
}
