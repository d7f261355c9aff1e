/* run_exec.h — `mlprof run` up to the exec of the program: its options,
 * the library to preload, the environment the program gets and the exec
 * itself (tools/run_exec.c). Both halves of the command use it: the full
 * command (tools/cmd_run.c), which then waits and writes the reports, and
 * the small start-up front (tools/front/main.c), which handles `run -q
 * --no-report` alone so that a profiled program pays for no second loader.
 */
#ifndef MLPROF_RUN_EXEC_H
#define MLPROF_RUN_EXEC_H

#include <stddef.h>
#include <sys/types.h>

typedef struct run_opts {
  const char *output, *mem, *library, *format, *max_mb;
  int no_children, no_report, quiet, mpi;
} run_opts;

/* Parse and check `run`'s arguments (argv[0] is "run") and find the
 * library to preload into lib[n]. *prog is the index of the program in
 * argv. CLI_OK, or CLI_USAGE after one message. */
int run_opts_check(int argc, char **argv, run_opts *o, int *prog, char *lib, size_t n);

/* Whether nothing is left to do after the program (-q and --no-report,
 * not --mpi): it may then replace the calling process. */
int run_opts_replaces(const run_opts *o);

/* The main trace's path, by the library's naming rule (trace/tracename.h):
 * -o, else MLPROF_OUTPUT, names a file or a folder that gets the default
 * name of the program's process `pid`; missing folders are created. */
void run_trace_path(const run_opts *o, const char *prog, pid_t pid, char *out, size_t n);

/* The environment of a profiled program: the preload, its trace and the
 * options. */
void run_child_env(const run_opts *o, const char *lib, const char *trace);

/* libmlprof_mpi.so beside libmlprof.so `lib` into out[n] (for --mpi), or 0. */
int run_find_mpi_library(const char *lib, char *out, size_t n);

/* execvp(prog[0], prog), and on every C library POSIX's fallback for a
 * file that is no executable format: /bin/sh runs it (a script without
 * "#!"). Returns only when the exec failed (errno says why). */
void run_execvp(char **prog);

/* This process becomes the profiled program: its trace named by its own
 * pid, the preload set up (and `traces`, when given, for the launcher's
 * list of traces). Returns only when the exec failed (errno says why). */
void run_exec_profiled(const run_opts *o, const char *lib, char **prog, const char *traces);

/* The program replaces this process: profiled, or without the profiler
 * when the trace's folder may not be used (one message says so). Returns
 * 127 after a message when the exec failed. */
int run_replace(const run_opts *o, const char *lib, char **prog);

/* The trace's folder for the program `prog` is refused (run_trace.h): it
 * was said; the program then replaces this process without the profiler.
 * 0 when the folder may be used; else the exit status after a failed exec. */
int run_refused_exec(const run_opts *o, char **prog);

#endif
