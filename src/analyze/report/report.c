/* report.c — report entry points: pick the writer for a format, and write
 * the report files beside a trace at shutdown. Helpers shared by the
 * writers live here too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/report/html.h"
#include "analyze/util/termsafe.h"
#include "trace/outfile.h"

static int cmp_self(const void *a, const void *b, void *arg) {
  const prof__an *sort_an = arg;
  const prof__range_stat *x = &sort_an->ranges[*(const size_t *)a], *y = &sort_an->ranges[*(const size_t *)b];
  if (x->self_ns != y->self_ns) return x->self_ns > y->self_ns ? -1 : 1;
  if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
  return strcmp(prof__an_str(sort_an, x->name), prof__an_str(sort_an, y->name));
}

size_t *prof__ranges_by_self(const prof__an *an) {
  if (!an->nranges) return NULL;
  size_t *idx = malloc(an->nranges * sizeof *idx);
  if (!idx) return NULL;
  for (size_t i = 0; i < an->nranges; i++) idx[i] = i;
  qsort_r(idx, an->nranges, sizeof *idx, cmp_self, (void *)an);
  return idx;
}

long long prof__an_pid(const prof__an *an) {
  const char *s = prof__an_header(an, "pid");
  if (!s || !*s) return -1;
  char *end;
  long long v = strtoll(s, &end, 10);
  return *end ? -1 : v;
}

int prof__report_write(prof__an *an, const char *format, FILE *out) {
  if (!an || !out || !format) return PROF_EINVAL;
  int rc;
  if (strcmp(format, "text") == 0) {
    FILE *t = prof__term_open(out); /* names from the trace must not drive the terminal */
    if (!t) return PROF_ENOMEM;
    rc = prof__report_text(an, t);
    int crc = prof__term_close(t);
    if (rc == 0) rc = crc;
  }
  else if (strcmp(format, "json") == 0) rc = prof__report_json(an, out);
  else if (strcmp(format, "html") == 0) rc = prof__report_html(an, out);
  else return PROF_EINVAL;
  if (rc == 0 && (fflush(out) != 0 || ferror(out))) rc = PROF_EIO;
  return rc;
}

/* Write one report to `<trace><suffix>` through a fresh temporary file
 * (trace/outfile.h), so a reader never sees half a report and nothing is
 * written through a planted symlink. */
static int write_one(prof__an *an, const char *trace, const char *suffix, const char *format, char *err) {
  size_t n = strlen(trace) + strlen(suffix) + 1;
  char *path = malloc(n);
  if (!path) {
    snprintf(err, PROF_ERR_MAX, "out of memory");
    return PROF_ENOMEM;
  }
  snprintf(path, n, "%s%s", trace, suffix);
  prof__outf o;
  int rc = PROF_EIO;
  if (prof__out_fopen(&o, path, 0600, err) == 0) {
    rc = prof__report_write(an, format, o.f);
    if (rc) snprintf(err, PROF_ERR_MAX, "cannot write report '%s': %s", path, rc == PROF_EIO ? strerror(errno) : prof_strerror(rc));
    if (prof__out_fclose(&o, rc == 0, err) != 0 && rc == 0) rc = PROF_EIO;
  }
  free(path);
  return rc;
}

int prof__report_files(const char *trace_path, char *err) { return prof__report_files_by(trace_path, NULL, err); }

int prof__report_files_by(const char *trace_path, const char *written_by, char *err) {
  err[0] = 0;
  prof__an *an;
  int rc = prof__an_run_opts(&an, trace_path, 1, err);
  if (rc) return rc;
  an->written_by = written_by;
  prof__xfsz_guard xg; /* a file size limit fails the write, never kills the process */
  prof__xfsz_block(&xg);
  rc = write_one(an, trace_path, ".report.txt", "text", err);
  if (rc == 0) rc = write_one(an, trace_path, ".report.json", "json", err);
  if (rc == 0) rc = write_one(an, trace_path, ".report.html", "html", err);
  prof__xfsz_restore(&xg);
  prof__an_free(an);
  return rc;
}
