/* cli_stacks.c — the sampled-stack formats of `mlprof export` (see
 * cli_stacks.h): folded stacks, pprof and an SVG flame graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/export/gzfile.h"
#include "analyze/sections/functions/sec_functions.h"
#include "cli.h"
#include "cli_stacks.h"

static FILE *open_out(const char *path, int gz) {
  if (!gz || strcmp(path, "-") == 0) return cli_open_out("export", path);
  char err[PROF_ERR_MAX];
  FILE *f = prof__gz_open(path, err);
  if (!f) cli_error("export", "%s", err);
  return f;
}

int cli_export_stacks(const char *trace, int format, const char *out_path, int quiet) {
  char def[4096];
  if (!out_path) {
    snprintf(def, sizeof def, "%s%s", trace, format == 'p' ? ".pb.gz" : format == 's' ? ".svg" : ".folded");
    out_path = def;
  }
  prof__an *an = NULL;
  int rc = cli_analyze("export", trace, quiet, &an);
  if (rc != CLI_OK) {
    if (an) prof__an_free(an);
    return rc;
  }
  if (!prof__functions_stacks(an, NULL, NULL, NULL)) {
    cli_error("export", "trace '%s' has no CPU samples with stacks (was MLPROF_SAMPLE_HZ=0?)", trace);
    prof__an_free(an);
    return CLI_USAGE;
  }
  FILE *out = open_out(out_path, format == 'p');
  if (!out) {
    prof__an_free(an);
    return CLI_OUTPUT;
  }
  int wrc = format == 'p' ? prof__export_pprof(an, out) : format == 's' ? prof__export_flamegraph(an, out)
                                                                        : prof__export_folded(an, out);
  rc = cli_close_out("export", out_path, out, wrc);
  if (rc == CLI_OK && strcmp(out_path, "-") != 0 && !quiet) fprintf(stderr, "mlprof export: wrote %s\n", out_path);
  prof__an_free(an);
  return rc;
}
