/* cmd_info.c — `mlprof info`: what a trace holds, without analysis: header,
 * counts, threads, chunks, footer and whether it is complete. */
#include "cli.h"
#include "analyze/util/termsafe.h"

#define U(x) ((unsigned long long)(x))
/* Text from the trace as one field (termsafe.h). */
#define TN(buf, s) prof__term_name(buf, sizeof buf, s)

static void print_kv(FILE *out, const char *title, const prof__kv *kv, size_t n) {
  fprintf(out, "%s:\n", title);
  if (!n) fprintf(out, "  (none)\n");
  char k[PROF_TERM_NAME], v[PROF_TERM_NAME];
  for (size_t i = 0; i < n; i++) fprintf(out, "  %-20s %s\n", TN(k, kv[i].key), TN(v, kv[i].value));
}

static void print_threads(FILE *out, const prof__an *an) {
  fprintf(out, "threads: %zu\n", an->nthreads);
  for (size_t i = 0; i < an->nthreads; i++) {
    const prof__thread_info *t = &an->threads[i];
    char nm[PROF_TERM_NAME];
    fprintf(out, "  tid %-10u %-20s %10llu events, lost %llu%s\n", t->tid, TN(nm, t->name ? t->name : "-"),
            U(t->events), U(t->lost), t->exited ? ", exited" : "");
  }
}

static void print_info(FILE *out, const prof__an *an) {
  char d[32], p[PROF_TERM_NAME];
  fprintf(out, "trace: %s\n", TN(p, an->path));
  fprintf(out, "size: %llu bytes in %llu chunks\n", U(prof__reader_size(an->reader)), U(an->chunks));
  if (an->truncated) fprintf(out, "state: TRUNCATED (%s)\n", TN(p, an->trunc_msg));
  else fprintf(out, "state: complete (footer present)\n");
  fprintf(out, "events: %llu\n", U(an->events));
  fprintf(out, "lost: %llu events\n", U(an->lost_events));
  fprintf(out, "steps: %zu complete, %llu unfinished\n", an->nsteps, U(an->unfinished_steps));
  fprintf(out, "time span: %s\n", prof__an_fmt_ns(d, sizeof d, an->last_ns - an->first_ns));
  print_kv(out, "header", an->header, an->header_count);
  if (an->meta_count) print_kv(out, "meta", an->meta, an->meta_count);
  print_kv(out, "footer", an->footer, an->footer_count);
  print_threads(out, an);
}

static int run(int argc, char **argv) {
  const char *trace = NULL;
  int npos;
  const cli_opt opts[] = {{NULL, 0, NULL, NULL}};
  if (cli_parse("info", argc, argv, opts, &trace, 1, &npos)) return CLI_USAGE;
  if (npos != 1) {
    cli_error("info", "expected one trace file (see 'mlprof info --help')");
    return CLI_USAGE;
  }
  prof__an *an;
  int rc = cli_analyze("info", trace, 1, &an);
  if (rc) return rc;
  /* Header values and thread names come from the trace: escape them. */
  FILE *out = prof__term_open(stdout);
  if (out) {
    print_info(out, an);
    rc = prof__term_close(out);
  }
  prof__an_free(an);
  return !out || rc || fflush(stdout) ? CLI_OUTPUT : CLI_OK;
}

const mlprof_cmd mlprof_cmd_info = {
    "info", "what a trace holds: header, counts, threads, truncation",
    "usage: mlprof info TRACE\n\n"
    "Print the header (program, pid, host, clock, ...), the number of events,\n"
    "lost events and chunks, whether the trace is complete or truncated, the\n"
    "footer totals and the threads.\n",
    run};
