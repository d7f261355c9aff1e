/* cmd_report.c — `mlprof report`: analyze a trace and print the report. */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "cli.h"
#include "cli_ranks.h" /* several traces: the merged multi-rank report */

static int report_one(const char *trace, int npos, const char *format, const char *out_path, int quiet);

static int run(int argc, char **argv) {
  const char *format = "text", *out_path = NULL, *trace = NULL;
  int quiet = 0, npos;
  const cli_opt opts[] = {{"format", 'f', &format, NULL}, {"output", 'o', &out_path, NULL},
                          {"quiet", 'q', NULL, &quiet}, {NULL, 0, NULL, NULL}};
  static const char *pos[CLI_RANKS_MAX_ARGS]; /* multi-rank: several traces or a directory */
  if (cli_parse("report", argc, argv, opts, pos, CLI_RANKS_MAX_ARGS, &npos)) return CLI_USAGE;
  trace = pos[0];
  char *single = cli_ranks_wanted(pos, npos) ? cli_ranks_single(pos, npos) : NULL;
  if (single) { /* a directory with one trace: that trace's own, complete report */
    trace = pos[0] = single;
    npos = 1;
  } else if (cli_ranks_wanted(pos, npos) && (!strcmp(format, "text") || !strcmp(format, "json"))) {
    return cli_ranks_report("report", pos, npos, format, out_path);
  }
  int rc = report_one(trace, npos, format, out_path, quiet);
  free(single);
  return rc;
}

static int report_one(const char *trace, int npos, const char *format, const char *out_path, int quiet) {
  if (npos != 1) {
    cli_error("report", "expected one trace file (see 'mlprof report --help')");
    return CLI_USAGE;
  }
  if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0 && strcmp(format, "html") != 0) {
    cli_error("report", "unknown format '%s' (text, json, html)", format);
    return CLI_USAGE;
  }
  prof__an *an;
  int rc = cli_analyze("report", trace, quiet, &an);
  if (rc) return rc;
  FILE *out = cli_open_out("report", out_path);
  if (!out) rc = CLI_OUTPUT;
  else rc = cli_close_out("report", out_path, out, prof__report_write(an, format, out));
  prof__an_free(an);
  return rc;
}

const mlprof_cmd mlprof_cmd_report = {
    "report", "analyze a trace: steps, breakdown, ranges, findings",
    "usage: mlprof report [--format text|json|html] [-o FILE] [--quiet] TRACE...|DIR\n\n"
    "Analyze TRACE and print the bottleneck report: step statistics, the step-time\n"
    "breakdown by category, ranges ranked by self time and findings with advice.\n\n"
    "Several traces, or a directory of them, give one merged report of the\n"
    "ranks of a run (docs/multi-rank.md).\n\n"
    "  -f, --format F   text (default), json (schema: docs/report-schema.md) or\n"
    "                   html (one self-contained page with charts: docs/html-report.md)\n"
    "  -o, --output F   write to F instead of standard output\n"
    "  -q, --quiet      no progress display on a terminal\n",
    run};
