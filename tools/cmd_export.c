/* cmd_export.c — `mlprof export`: convert a trace for other viewers. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv) {
  const char *out_path = NULL, *trace = NULL;
  int chrome = 0, quiet = 0, npos;
  const cli_opt opts[] = {{"chrome", 0, NULL, &chrome}, {"output", 'o', &out_path, NULL},
                          {"quiet", 'q', NULL, &quiet}, {NULL, 0, NULL, NULL}};
  if (cli_parse("export", argc, argv, opts, &trace, 1, &npos)) return CLI_USAGE;
  if (npos != 1 || !chrome) {
    cli_error("export", npos != 1 ? "expected one trace file" : "choose a format: --chrome");
    return CLI_USAGE;
  }
  char *def = NULL;
  if (!out_path) { /* default: beside the trace */
    size_t n = strlen(trace) + 16;
    def = malloc(n);
    if (!def) return CLI_OUTPUT;
    snprintf(def, n, "%s.chrome.json", trace);
    out_path = def;
  }
  prof__an *an;
  int rc = cli_analyze("export", trace, quiet, &an);
  FILE *out = rc ? NULL : cli_open_out("export", out_path);
  if (!rc && !out) rc = CLI_OUTPUT;
  if (out) {
    int wrc = prof__export_chrome(an, out);
    if (wrc && !ferror(out)) { /* the trace itself failed on the second read */
      cli_error("export", "cannot read trace '%s': %s", trace, prof__reader_error(an->reader));
      if (out != stdout) {
        fclose(out);
        remove(out_path);
      }
      rc = CLI_BADTRACE;
    } else {
      rc = cli_close_out("export", out_path, out, wrc);
    }
  }
  if (rc == CLI_OK && out != stdout && !quiet) fprintf(stderr, "mlprof export: wrote %s\n", out_path);
  prof__an_free(an);
  free(def);
  return rc;
}

const mlprof_cmd mlprof_cmd_export = {
    "export", "convert a trace: --chrome for Perfetto / chrome://tracing",
    "usage: mlprof export --chrome [-o FILE] [--quiet] TRACE\n\n"
    "Write TRACE as Chrome Trace Event JSON, which ui.perfetto.dev and\n"
    "chrome://tracing open: ranges as complete events per thread, marks as\n"
    "instant events, counters as counter tracks, steps on a track of their own.\n"
    "Timestamps are microseconds since the first event.\n\n"
    "  --chrome         Chrome Trace Event format (the only format so far)\n"
    "  -o, --output F   output file (default: TRACE.chrome.json; '-' for standard output)\n"
    "  -q, --quiet      no progress display and no 'wrote' line\n",
    run};
