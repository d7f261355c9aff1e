/* cmd_diff.c — `mlprof diff BASE NEW`: compare two runs; with
 * --fail-if-slower PCT the exit status guards a CI pipeline. */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "cli.h"
#include "analyze/diff/diff.h"

/* Exit status when the median step got slower than --fail-if-slower allows. */
#define CLI_SLOWER 4

static int parse_pct(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0) || v > 1e6) return -1;
  *out = v;
  return 0;
}

static int compare(const char *format, const char *out_path, size_t top, prof__an *b, prof__an *c, double *pct) {
  prof__diff d;
  if (prof__diff_compute(&d, b, c)) {
    prof__diff_free(&d);
    cli_error("diff", "out of memory");
    return CLI_OUTPUT;
  }
  *pct = d.median_pct;
  FILE *out = cli_open_out("diff", out_path);
  int rc = out ? cli_close_out("diff", out_path, out, prof__diff_write(&d, format, top, out)) : CLI_OUTPUT;
  prof__diff_free(&d);
  return rc;
}

static int run(int argc, char **argv) {
  const char *format = "text", *out_path = NULL, *fail = NULL, *top_s = NULL, *pos[2];
  int quiet = 0, npos;
  double limit = -1, pct = 0;
  const cli_opt opts[] = {{"format", 'f', &format, NULL}, {"output", 'o', &out_path, NULL},
                          {"fail-if-slower", 0, &fail, NULL}, {"top", 0, &top_s, NULL},
                          {"quiet", 'q', NULL, &quiet}, {NULL, 0, NULL, NULL}};
  if (cli_parse("diff", argc, argv, opts, pos, 2, &npos)) return CLI_USAGE;
  if (npos != 2) {
    cli_error("diff", "expected two traces: BASE NEW (see 'mlprof diff --help')");
    return CLI_USAGE;
  }
  if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "html")) {
    cli_error("diff", "unknown format '%s' (text, json, html)", format);
    return CLI_USAGE;
  }
  if (fail && parse_pct(fail, &limit)) {
    cli_error("diff", "--fail-if-slower needs a percentage, got '%s'", fail);
    return CLI_USAGE;
  }
  long top = top_s ? strtol(top_s, NULL, 10) : 20;
  if (top <= 0 || top > 100000) {
    cli_error("diff", "--top needs a positive number");
    return CLI_USAGE;
  }
  prof__an *b = NULL, *c = NULL;
  int rc = cli_analyze("diff", pos[0], quiet, &b);
  if (rc == CLI_OK) rc = cli_analyze("diff", pos[1], quiet, &c);
  if (rc == CLI_OK) rc = compare(format, out_path, (size_t)top, b, c, &pct);
  if (rc == CLI_OK && limit >= 0 && pct > limit) {
    cli_error("diff", "the median step is %.1f%% slower (limit %.1f%%)", pct, limit);
    rc = CLI_SLOWER;
  }
  if (b) prof__an_free(b);
  if (c) prof__an_free(c);
  return rc;
}

const mlprof_cmd mlprof_cmd_diff = {
    "diff", "compare two runs: step time, ranges, functions, kernels, memory",
    "usage: mlprof diff [--format text|json|html] [-o FILE] [--fail-if-slower PCT] [--top N] BASE NEW\n\n"
    "Compare two traces: the change of the median and p95 step time (warm-up\n"
    "step left out) with a noise estimate from the per-step spread, ranges,\n"
    "functions and GPU kernels ranked by the change of their self time per\n"
    "step, memory peak and leak changes, findings that appeared or\n"
    "disappeared, and each finding of BASE that NEW fixed with its predicted\n"
    "saving next to the realised drop of the mean step (docs/html-report.md).\n\n"
    "  -f, --format F        text (default), json or html\n"
    "  -o, --output F        write to F instead of standard output\n"
    "  --fail-if-slower PCT  exit with status 4 when the median step of NEW is\n"
    "                        more than PCT percent slower than BASE\n"
    "  --top N               changes listed (default 20)\n"
    "  -q, --quiet           no progress display on a terminal\n",
    run};
