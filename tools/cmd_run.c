/* cmd_run.c — `mlprof run [options] -- PROGRAM ARGS...`: run any program
 * with libmlprof.so preloaded (no code change, no rebuild), then analyze
 * its trace, write the report files beside it and name them on stderr
 * (stdout stays the program's; -f prints a report there on request).
 *
 * The whole run is one recording window: the preloaded library starts the
 * profiler from a constructor (MLPROF_PRELOAD=1) and stops it at exit.
 * Programs that call the API themselves keep working (prof_init is
 * idempotent). Children that exec inherit the preload and write their own
 * traces, "<program>.<pid>.mlpt" in the folder of the main trace, unless
 * --no-children is given; forked children that do not exec record nothing.
 * Only the main process's traces are reported here: the launcher learns
 * their paths from the library (run_reports.c), so it finds each image's
 * trace wherever it went (no trace is written over: a taken name gets the
 * next numbered one), and the reports say written_by "launcher".
 * With -q and --no-report nothing is left to do after the program, so it
 * replaces this process (exec, no fork and wait): its start-up pays for no
 * launcher, and its exit status and signals are its own. The `mlprof`
 * front (tools/front/main.c) does that case itself, with the same code
 * (run_exec.c), before this command would be loaded at all.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlprof.h"
#include "cli.h"
#include "run_exec.h"
#include "run_reports.h"
#include "run_trace.h"
#include "trace/settings.h"

/* MLPROF_REPORT as the library reads it: a switch, on unless it says off. */
static int reports_wanted(void) { return prof__flag_parse(prof__env("REPORT")) != 0; }

/* Write the report files beside the trace. Standard output stays the
 * program's: the files are named on standard error, and a report is printed
 * on standard output only when -f asks for one. */
static int report(const run_opts *o, const char *trace, int wanted, int print) {
  if (!cli_readable(trace)) {
    cli_error("run", "the program wrote no trace '%s' (did it exit before the library loaded?)", trace);
    return CLI_BADTRACE;
  }
  if (!wanted && !o->format) { /* MLPROF_REPORT=0 or --no-report: no analysis */
    if (!o->quiet)
      fprintf(stderr, "mlprof: trace %s (no report: %s)\n", trace, o->no_report ? "--no-report" : "MLPROF_REPORT=0");
    return CLI_OK;
  }
  char err[PROF_ERR_MAX] = "";
  int files = wanted ? prof__report_files_by(trace, "launcher", err) : -1;
  if (wanted && files != 0) cli_error("run", "could not write the report files: %s", err);
  int rc = CLI_OK;
  if (print && o->format) {
    prof__an *an;
    rc = cli_analyze("run", trace, o->quiet, &an);
    if (rc) return rc;
    rc = prof__report_write(an, o->format, stdout) ? CLI_OUTPUT : CLI_OK;
    prof__an_free(an);
  }
  if (files == 0)
    fprintf(stderr,
            "mlprof: trace %s\n"
            "mlprof: reports %s.report.txt, %s.report.json, %s.report.html\n"
            "mlprof: read it with 'mlprof report %s' or open the .html in a browser\n",
            trace, trace, trace, trace, trace);
  else fprintf(stderr, "mlprof: trace %s\n", trace);
  return rc;
}

/* The reports of every trace the main process wrote (each image its own,
 * in order), then of its captures; without a list, of the trace at the
 * path the launcher chose. A format (-f) prints the last trace's. */
static int report_all(const run_opts *o, const run_list *list, pid_t pid, const char *prog, int status) {
  char **traces, **caps, trace[PATH_MAX];
  size_t n = run_list_traces(list, pid, "trace", &traces), ncaps = run_list_traces(list, pid, "capture", &caps);
  int rc = CLI_OK, wanted = !o->no_report && reports_wanted();
  if (n == 0) {
    run_trace_path(o, prog, pid, trace, sizeof trace);
    rc = status == 127 && !cli_readable(trace) ? CLI_OK : report(o, trace, wanted, 1);
  }
  for (size_t i = 0; i < n; i++) {
    int r = report(o, traces[i], wanted, i + 1 == n);
    if (rc == CLI_OK) rc = r;
  }
  size_t written = 0;
  for (size_t i = 0; i < ncaps && wanted; i++) {
    char err[PROF_ERR_MAX] = "";
    if (prof__report_files_by(caps[i], "launcher", err) == 0) written++;
    else cli_error("run", "no report for the capture %s: %s", caps[i], err);
  }
  if (written)
    fprintf(stderr, "mlprof: reports of %zu capture%s beside them, from %s\n", written, written > 1 ? "s" : "", caps[0]);
  run_list_free(traces, n);
  run_list_free(caps, ncaps);
  return rc;
}

static int wait_child(pid_t pid) {
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
  sigaction(SIGINT, &ign, &old_int); /* the terminal's ^C goes to the program */
  sigaction(SIGQUIT, &ign, &old_quit);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* --mpi: this process is one rank (mpirun starts `mlprof run --mpi` once per
 * rank). The rank's trace goes into the output folder under the rank-aware
 * default name; the merged report is `mlprof report FOLDER`. */
static int run_mpi(const run_opts *o, const char *lib, char **prog) {
  const char *dir = o->output ? o->output : "mlprof-mpi";
  mkdir(dir, 0755);
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    cli_error("run", "--mpi needs -o to name a folder for the rank traces ('%s' is not one)", dir);
    return CLI_USAGE;
  }
  char mpi[PATH_MAX];
  if (!run_find_mpi_library(lib, mpi, sizeof mpi)) {
    cli_error("run", "--mpi: libmlprof_mpi.so not found beside %s (built when MPI is found)", lib);
    return CLI_USAGE;
  }
  char folder[PATH_MAX];
  snprintf(folder, sizeof folder, "%s/", dir);
  run_child_env(o, lib, folder);
  if (!o->no_report && reports_wanted()) setenv("MLPROF_REPORT", "1", 1); /* each rank writes its own report files */
  fflush(NULL);
  run_execvp(prog);
  fprintf(stderr, "mlprof run: cannot run '%s': %s\n", prog[0], strerror(errno));
  return 127;
}

static int run(int argc, char **argv) {
  run_opts o;
  int prog = 0;
  char lib[PATH_MAX];
  int rc = run_opts_check(argc, argv, &o, &prog, lib, sizeof lib);
  if (rc) return rc;
  if (o.mpi) return run_mpi(&o, lib, argv + prog);
  if (run_opts_replaces(&o)) return run_replace(&o, lib, argv + prog); /* nothing to do after the program */
  rc = run_refused_exec(&o, argv + prog);
  if (rc) return rc;
  run_list list;
  run_list_open(&list);
  pid_t pid = fork();
  if (pid < 0) {
    cli_error("run", "cannot start a process: %s", strerror(errno));
    return CLI_USAGE;
  }
  if (pid == 0) {
    run_exec_profiled(&o, lib, argv + prog, list.fd >= 0 ? list.env : NULL);
    fprintf(stderr, "mlprof run: cannot run '%s': %s\n", argv[prog], strerror(errno));
    _exit(127);
  }
  int status = wait_child(pid);
  rc = report_all(&o, &list, pid, argv[prog], status);
  run_list_close(&list);
  return status ? status : rc;
}

const mlprof_cmd mlprof_cmd_run = {
    "run", "run a program with the profiler preloaded, then report",
    "usage: mlprof run [options] -- PROGRAM [ARGS...]\n\n"
    "Run PROGRAM with libmlprof.so preloaded: no code change or rebuild. The\n"
    "whole run is one recording window (programs that call the mlprof API keep\n"
    "their own steps and ranges). Memory is profiled by interposing malloc\n"
    "(docs/memory.md). When the program ends, the trace is analyzed and the\n"
    "report files <trace>.report.txt, .report.json and .report.html are written\n"
    "and named on standard error; standard output stays the program's. The exit\n"
    "status is the program's (or the report's when the program succeeded).\n\n"
    "The documented variables hold as for any profiled program: MLPROF_OUTPUT\n"
    "names the trace (a file, or a folder: existing or ending in '/'; missing\n"
    "folders are created) when -o is not given, and MLPROF_REPORT=0 means no\n"
    "analysis and no report files.\n\n"
    "Children that exec inherit the preload and each write their own trace,\n"
    "<program>.<pid>.mlpt in the folder of the main trace; forked children that\n"
    "do not exec record nothing (forked Python workers, a DataLoader's, are\n"
    "sampled by the parent instead). Only the program's own traces are reported:\n"
    "each image's when it execs itself, wherever it went, and its captures\n"
    "(MLPROF_SCHEDULE, triggers); the reports say written_by \"launcher\". No\n"
    "trace is written over: a taken name gets the next numbered one (x.1.mlpt,\n"
    "...), and a report names the trace before it. The trace's folder must be\n"
    "the user's own or root's; otherwise the program runs without the profiler.\n\n"
    "  -o, --output F   trace path or folder (default: MLPROF_OUTPUT, else\n"
    "                   <program>.<pid>.mlpt here)\n"
    "      --mem MODE   memory profiling: off, counts, sampled (default), full\n"
    "      --max-mb N   keep each trace within N MiB for a long run: the latest\n"
    "                   detail and a summary of every step (MLPROF_MAX_MB)\n"
    "      --no-children  do not profile child processes\n"
    "      --mpi        one rank of an MPI job: `mpirun -np N mlprof run --mpi -o DIR\n"
    "                   -- PROGRAM` preloads the PMPI wrappers too and writes each\n"
    "                   rank's trace into DIR; `mlprof report DIR` merges them\n"
    "      --library P  the profiler library (default: next to this command or\n"
    "                   in its install prefix; also MLPROF_LIBRARY)\n"
    "  -f, --format F   also print the report on standard output: text or json\n"
    "      --no-report  no analysis and no report files: only the trace\n"
    "  -q, --quiet      no progress display; with --no-report the program\n"
    "                   replaces mlprof (no process waits for it, and a\n"
    "                   missing trace is not reported)\n",
    run};
