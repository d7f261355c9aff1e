/* cli_perfetto.c — the exports of `mlprof export` added beside the Chrome
 * and stack formats (see cli_perfetto.h): the Perfetto protobuf trace and
 * the pprof heap profile. */
#include <stdio.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_perfetto.h"
#include "analyze/export/export_pprof_heap.h"
#include "analyze/export/gzfile.h"
#include "cli.h"
#include "cli_perfetto.h"

/* gz: 1 always (pprof), 0 when the name ends in .gz. */
static FILE *open_out(const char *path, int gz) {
  if (strcmp(path, "-") == 0 || !(gz || prof__gz_wanted(path))) return cli_open_out("export", path);
  char err[PROF_ERR_MAX];
  FILE *f = prof__gz_open(path, err);
  if (!f) cli_error("export", "%s", err);
  return f;
}

static const char *default_out(const char *trace, const char *out_path, const char *ext, char *buf, size_t n) {
  if (out_path) return out_path;
  snprintf(buf, n, "%s%s", trace, ext);
  return buf;
}

static void wrote(const char *path, int quiet, const char *what) {
  if (!quiet && strcmp(path, "-") != 0) fprintf(stderr, "mlprof export: wrote %s%s\n", path, what);
}

int cli_export_perfetto(const char *trace, const char *out_path, int quiet) {
  char def[4096];
  out_path = default_out(trace, out_path, ".pftrace", def, sizeof def);
  prof__an *an = NULL;
  int rc = cli_analyze("export", trace, quiet, &an);
  if (rc != CLI_OK) {
    if (an) prof__an_free(an);
    return rc;
  }
  FILE *out = open_out(out_path, 0);
  if (!out) {
    prof__an_free(an);
    return CLI_OUTPUT;
  }
  prof__pf_stats st = {0};
  int wrc = prof__export_perfetto(an, out, &st);
  if (wrc && wrc != PROF_EIO && wrc != PROF_ENOMEM && !ferror(out)) { /* the trace failed on the second read */
    cli_error("export", "cannot read trace '%s': %s", trace, prof__reader_error(an->reader));
    if (out != stdout) {
      fclose(out);
      remove(out_path);
    }
    prof__an_free(an);
    return CLI_BADTRACE;
  }
  rc = cli_close_out("export", out_path, out, wrc);
  char what[160];
  snprintf(what, sizeof what, " (%llu slices, %llu counter values, %llu CPU samples)", (unsigned long long)st.slices,
           (unsigned long long)st.counters, (unsigned long long)st.samples);
  if (rc == CLI_OK) wrote(out_path, quiet, what);
  prof__an_free(an);
  return rc;
}

int cli_export_pprof_heap(const char *trace, const char *out_path, int quiet) {
  char def[4096];
  out_path = default_out(trace, out_path, ".heap.pb.gz", def, sizeof def);
  prof__an *an = NULL;
  int rc = cli_analyze("export", trace, quiet, &an);
  if (rc != CLI_OK) {
    if (an) prof__an_free(an);
    return rc;
  }
  if (!prof__pprof_heap_available(an)) {
    cli_error("export", "trace '%s' has no allocation sites (record with MLPROF_MEM=sampled or MLPROF_MEM=full)", trace);
    prof__an_free(an);
    return CLI_USAGE;
  }
  FILE *out = open_out(out_path, 1);
  if (!out) {
    prof__an_free(an);
    return CLI_OUTPUT;
  }
  rc = cli_close_out("export", out_path, out, prof__export_pprof_heap(an, out));
  if (rc == CLI_OK) wrote(out_path, quiet, "");
  prof__an_free(an);
  return rc;
}
