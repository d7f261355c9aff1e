/* cmd_export.c — `mlprof export`: convert a trace for other viewers:
 * Chrome Trace Event JSON (optionally gzip'ed, capped or windowed for big
 * runs), Perfetto protobuf traces, TensorBoard event files, sampled stacks
 * (folded, pprof, flame graph), the pprof heap profile and the model graph
 * as Graphviz DOT. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "analyze/export/gzfile.h"
#include "analyze/sections/graph/sec_graph.h" /* --dot */
#include "cli_ranks.h" /* several traces: one process per rank */
#include "cli_stacks.h" /* --folded, --pprof, --flamegraph */
#include "cli_perfetto.h" /* --perfetto, --pprof-heap */

/* Every format, for the usage line and the error naming them. */
#define EXPORT_FORMATS \
  "--chrome, --perfetto, --tensorboard DIR, --folded, --pprof, --pprof-heap, --flamegraph F, --dot"

typedef struct export_args {
  const char *trace, *out_path, *tb_dir, *max_events, *window;
  int chrome, quiet;
  prof__chrome_opts co;
  int folded, pprof, dot;
  const char *flame;
  int perfetto, pprof_heap;
} export_args;

/* "A:B" in seconds since the first event; either side may be empty. */
static int parse_window(const char *s, prof__chrome_opts *o) {
  const char *colon = strchr(s, ':');
  if (!colon) return -1;
  char *end;
  double b = colon == s ? 0 : strtod(s, &end);
  if (colon != s && end != colon) return -1;
  double e = colon[1] ? strtod(colon + 1, &end) : 0;
  if (colon[1] && *end) return -1;
  if (!(b >= 0 && e >= 0 && b <= 1e9 && e <= 1e9) || (colon[1] && e <= b)) return -1;
  o->window_begin_ns = (uint64_t)(b * 1e9);
  o->window_end_ns = (uint64_t)(e * 1e9);
  return 0;
}

static int check_args(export_args *a, int npos) {
  if (npos != 1 || (!a->chrome && !a->tb_dir) || (a->chrome && a->tb_dir)) {
    cli_error("export", npos != 1 ? "expected one trace file" : "choose one format: " EXPORT_FORMATS);
    return CLI_USAGE;
  }
  if (a->max_events) {
    char *end;
    unsigned long long v = strtoull(a->max_events, &end, 10);
    if (*end || !*a->max_events || a->max_events[0] == '-' || v == 0) {
      cli_error("export", "--max-events needs a positive number, got '%s'", a->max_events);
      return CLI_USAGE;
    }
    a->co.max_events = v;
  }
  if (a->window && parse_window(a->window, &a->co)) {
    cli_error("export", "--window needs BEGIN:END in seconds since the trace start, got '%s'", a->window);
    return CLI_USAGE;
  }
  return CLI_OK;
}

static int do_tensorboard(export_args *a, prof__an *an) {
  char err[PROF_ERR_MAX] = "", path[1024];
  int rc = prof__export_tensorboard(an, a->tb_dir, path, sizeof path, err);
  if (rc) {
    cli_error("export", "%s", err[0] ? err : "cannot write the TensorBoard events");
    return CLI_OUTPUT;
  }
  if (!a->quiet) fprintf(stderr, "mlprof export: wrote %s\n", path);
  return CLI_OK;
}

static FILE *open_chrome_out(const char *path) {
  if (!prof__gz_wanted(path)) return cli_open_out("export", path);
  char err[PROF_ERR_MAX];
  FILE *f = prof__gz_open(path, err);
  if (!f) cli_error("export", "%s", err);
  return f;
}

static int do_chrome(export_args *a, prof__an *an) {
  FILE *out = open_chrome_out(a->out_path);
  if (!out) return CLI_OUTPUT;
  int wrc = prof__export_chrome_opts(an, out, &a->co);
  if (wrc && !ferror(out)) { /* the trace itself failed on the second read */
    cli_error("export", "cannot read trace '%s': %s", a->trace, prof__reader_error(an->reader));
    if (out != stdout) {
      fclose(out);
      remove(a->out_path);
    }
    return CLI_BADTRACE;
  }
  int rc = cli_close_out("export", a->out_path, out, wrc);
  if (rc == CLI_OK && out != stdout && !a->quiet) fprintf(stderr, "mlprof export: wrote %s\n", a->out_path);
  return rc;
}

/* --dot: the model graph, default TRACE.dot. */
static int do_dot(const char *trace, const char *out_path, int quiet) {
  char def[4096];
  if (!out_path) {
    snprintf(def, sizeof def, "%s.dot", trace);
    out_path = def;
  }
  prof__an *an = NULL;
  int rc = cli_analyze("export", trace, quiet, &an);
  if (rc != CLI_OK) {
    if (an) prof__an_free(an);
    return rc;
  }
  if (!prof__graph_of(an)) {
    cli_error("export", "trace '%s' has no graph (no ranges and no declared nodes or edges)", trace);
    prof__an_free(an);
    return CLI_USAGE;
  }
  FILE *out = cli_open_out("export", out_path);
  if (!out) {
    prof__an_free(an);
    return CLI_OUTPUT;
  }
  rc = cli_close_out("export", out_path, out, prof__export_dot(an, out));
  if (rc == CLI_OK && strcmp(out_path, "-") != 0 && !quiet) fprintf(stderr, "mlprof export: wrote %s\n", out_path);
  prof__an_free(an);
  return rc;
}

static int run(int argc, char **argv) {
  export_args a = {0};
  int npos;
  const cli_opt opts[] = {{"chrome", 0, NULL, &a.chrome},     {"tensorboard", 0, &a.tb_dir, NULL},
                          {"output", 'o', &a.out_path, NULL}, {"max-events", 0, &a.max_events, NULL},
                          {"window", 0, &a.window, NULL},     {"quiet", 'q', NULL, &a.quiet},
                          {"folded", 0, NULL, &a.folded},     {"pprof", 0, NULL, &a.pprof},
                          {"flamegraph", 0, &a.flame, NULL},  {"dot", 0, NULL, &a.dot},
                          {"perfetto", 0, NULL, &a.perfetto}, {"pprof-heap", 0, NULL, &a.pprof_heap},
                          {NULL, 0, NULL, NULL}};
  static const char *pos[CLI_RANKS_MAX_ARGS]; /* multi-rank: several traces or a directory */
  if (cli_parse("export", argc, argv, opts, pos, CLI_RANKS_MAX_ARGS, &npos)) return CLI_USAGE;
  a.trace = pos[0];
  int others = a.chrome + !!a.tb_dir + a.folded + a.pprof + !!a.flame + a.dot;
  if (a.perfetto || a.pprof_heap) {
    if (a.max_events || a.window) {
      cli_error("export", "--max-events and --window apply to --chrome only");
      return CLI_USAGE;
    }
    if (npos == 1 && !others && a.perfetto + a.pprof_heap == 1)
      return a.perfetto ? cli_export_perfetto(a.trace, a.out_path, a.quiet) : cli_export_pprof_heap(a.trace, a.out_path, a.quiet);
    cli_error("export", npos != 1 ? "expected one trace file" : "choose one format: " EXPORT_FORMATS);
    return CLI_USAGE;
  }
  if ((a.folded || a.pprof || a.flame) && npos == 1 && !a.chrome && !a.tb_dir && a.folded + a.pprof + !!a.flame == 1)
    return cli_export_stacks(a.trace, a.pprof ? 'p' : a.flame ? 's' : 'f', a.flame ? a.flame : a.out_path, a.quiet);
  if (a.dot && npos == 1 && !a.chrome && !a.tb_dir && !a.folded && !a.pprof && !a.flame)
    return do_dot(a.trace, a.out_path, a.quiet);
  if (a.chrome && cli_ranks_wanted(pos, npos)) return cli_ranks_export("export", pos, npos, a.out_path, a.quiet);
  if (check_args(&a, npos)) return CLI_USAGE;
  char *def = NULL;
  if (a.chrome && !a.out_path) { /* default: beside the trace */
    size_t n = strlen(a.trace) + 16;
    def = malloc(n);
    if (!def) return CLI_OUTPUT;
    snprintf(def, n, "%s.trace.json", a.trace);
    a.out_path = def;
  }
  prof__an *an = NULL;
  int rc = cli_analyze("export", a.trace, a.quiet, &an);
  if (rc == CLI_OK) rc = a.tb_dir ? do_tensorboard(&a, an) : do_chrome(&a, an);
  if (an) prof__an_free(an);
  free(def);
  return rc;
}

const mlprof_cmd mlprof_cmd_export = {
    "export", "convert a trace: " EXPORT_FORMATS,
    "usage: mlprof export --chrome [-o FILE] [--max-events N] [--window A:B] [--quiet] TRACE...|DIR\n"
    "       mlprof export --perfetto [-o FILE.pftrace] [--quiet] TRACE\n"
    "       mlprof export --tensorboard DIR [--quiet] TRACE\n"
    "       mlprof export --folded|--pprof|--pprof-heap [-o FILE] [--quiet] TRACE\n"
    "       mlprof export --flamegraph FILE.svg [--quiet] TRACE\n"
    "       mlprof export --dot [-o FILE.dot] [--quiet] TRACE\n\n"
    "Write TRACE as Chrome Trace Event JSON, which ui.perfetto.dev and\n"
    "chrome://tracing open: ranges as complete events per thread, marks as\n"
    "instant events, counters as counter tracks, steps on a track of their own.\n"
    "Timestamps are microseconds since the first event. Several traces, or a\n"
    "directory, give one process per rank on a common time axis (default\n"
    "output: merged.trace.json).\n\n"
    "An output name ending in .gz is written gzip-compressed (Perfetto opens it\n"
    "as is). Report sections add their tracks (GPU streams, flow arrows from\n"
    "launches to kernels).\n\n"
    "--perfetto writes Perfetto's own protobuf trace format (default\n"
    "TRACE.pftrace; .gz names are gzip'ed), several times smaller than the\n"
    "JSON and streamed in bounded memory: steps and ranges as slices on named\n"
    "thread tracks, counter tracks, GPU streams with flows from the launches,\n"
    "and the CPU samples with their call stacks (a flame graph per selection).\n\n"
    "--pprof labels each sample with its innermost range ('range') and step\n"
    "('step'): 'pprof -tagfocus=range=backward'. --pprof-heap writes the\n"
    "allocation sites (MLPROF_MEM=sampled|full) as a heap profile with\n"
    "alloc_objects, alloc_space, inuse_objects and inuse_space (default\n"
    "TRACE.heap.pb.gz).\n\n"
    "--tensorboard DIR writes DIR/events.out.tfevents.* with per-step scalars\n"
    "(step time, breakdown, peak memory, GPU utilisation, counters, metrics)\n"
    "and tensor histograms; open it with 'tensorboard --logdir DIR'.\n\n"
    "--dot writes the model graph (the report's graph section: modules or\n"
    "ranges, with their times per step) as Graphviz DOT, default TRACE.dot;\n"
    "render it with 'dot -Tsvg TRACE.dot -o graph.svg'.\n\n"
    "  --chrome         Chrome Trace Event format\n"
    "  --perfetto       Perfetto protobuf trace (default output TRACE.pftrace)\n"
    "  --folded         sampled call stacks as folded text (flamegraph.pl, speedscope)\n"
    "  --pprof          sampled call stacks as gzip'd profile.proto (TRACE.pb.gz; 'pprof' reads it),\n"
    "                   labelled with range and step\n"
    "  --pprof-heap     allocation sites as a gzip'd pprof heap profile (TRACE.heap.pb.gz)\n"
    "  --flamegraph F   SVG flame graph of the sampled call stacks in file F\n"
    "  --tensorboard D  TensorBoard event file in directory D (created if missing)\n"
    "  --dot            the model graph as Graphviz DOT (default output TRACE.dot)\n"
    "  -o, --output F   output file (default: TRACE.trace.json; '-' for standard output)\n"
    "  --max-events N   keep at most N timed events, so a big trace stays loadable\n"
    "  --window A:B     keep events overlapping seconds A to B since the trace start\n"
    "                   (either side may be empty: '10:' or ':2.5')\n"
    "  -q, --quiet      no progress display and no 'wrote' line\n",
    run};
