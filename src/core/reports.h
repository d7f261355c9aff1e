/* reports.h — who writes the reports of a closed trace (README "Reports",
 * docs/host-safety.md): the host only records.
 *
 *  - Under `mlprof run` the launcher does, after the program exited: the
 *    library tells it the path of every trace it writes (announce).
 *  - Else the library starts the `mlprof` command (MLPROF_CLI, or the one
 *    installed beside the library), detached: the program's exit does not
 *    wait for it (MLPROF_REPORT_WAIT=1 waits, bounded).
 *  - Else (no command, or it cannot start) the library writes them itself,
 *    in-process: the fallback.
 * Each report names its writer (`written_by`: launcher, cli, in-process).
 */
#ifndef PROF_REPORTS_H
#define PROF_REPORTS_H

#include <stddef.h>

#include "trace/errbuf.h"

/* Who writes a trace's reports. */
enum { PROF_REP_NONE, PROF_REP_LAUNCHER, PROF_REP_CLI, PROF_REP_INPROC };

/* A started mlprof command and what it said on its status pipe. */
typedef struct prof__report_job {
  int fd; /* the status pipe (read end, non-blocking); -1 once the command ended */
  size_t len;
  char line[320];
  unsigned oks, errors; /* "ok TRACE" and "error MESSAGE" lines */
  char msg[PROF_ERR_MAX]; /* the first error, or why no line came */
} prof__report_job;

/* ---- report_spawn.c --------------------------------------------------------- */

/* Start exe (argv, envp) detached, as the file comment of report_spawn.c
 * says; keep_stderr: it may write to this process's standard error when
 * that is a terminal or a file. 0, or a negative error with the reason in
 * err (PROF_ERR_MAX bytes). */
int prof__report_spawn(const char *exe, char **argv, char **envp, int keep_stderr, prof__report_job *job, char *err);
/* Read the job's status lines, waiting up to ms (0: never blocks). 1 when
 * the command has ended, 0 while it runs. */
int prof__report_job_check(prof__report_job *job, int ms);
/* Stop listening; the command goes on alone. */
void prof__report_job_forget(prof__report_job *job);

/* ---- reports.c ------------------------------------------------------------------ */

/* Under `mlprof run` (MLPROF_RUN_TRACES): add the trace `path` of this
 * process ("trace" or "capture") to the launcher's list. 1 when the
 * launcher will write its reports, else 0. */
int prof__reports_announce(const char *path, const char *kind);

/* Orphans come back to this process (it is PID 1 of its namespace, or a
 * child subreaper): the command would be its child and end with it, so
 * the exit waits for it as with MLPROF_REPORT_WAIT=1. */
int prof__reports_adopted_here(void);

/* How long the program's exit waits for the command writing its reports:
 * 5 minutes with MLPROF_REPORT_WAIT=1 (tests read the reports right after)
 * or when the command would be this process's child
 * (prof__reports_adopted_here), else 0. Read once. */
int prof__reports_wait_ms(void);

/* Writes the reports of the closed trace `trace_path` in this process (the
 * reader's entry point, which the assembly src/lib hands the core:
 * assembly.h); 0 or a negative error with the reason in err (PROF_ERR_MAX
 * bytes). */
typedef int (*prof__report_fn)(const char *trace_path, char *err);
/* At prof_init: the in-process writer of this build (NULL: none). */
void prof__reports_setup(prof__report_fn in_process);
/* Write the reports of `path` in-process now: 0, or a negative error with
 * the reason in err (PROF_ERR_MAX bytes; "this build has no analyzer" when
 * none was set up). */
int prof__reports_in_process(const char *path, char *err);

typedef struct prof__report_run {
  int by;   /* PROF_REP_CLI or PROF_REP_INPROC; PROF_REP_NONE: nothing was written */
  int done; /* finished: in-process always, the command when it was waited for */
  int ok;   /* finished and every report written */
  prof__report_job job; /* the command, while it may still run */
  char err[PROF_ERR_MAX];  /* why the reports were not written */
  char note[PROF_ERR_MAX]; /* in-process: why the command was not used */
} prof__report_run;

/* Write the reports of the closed trace `path`: start the command (and
 * wait for it up to wait_ms), or write them in-process when it cannot be
 * started. */
void prof__reports_start(const char *path, int wait_ms, prof__report_run *r);

/* ---- captures (schedule cycles, on-demand) --------------------------------------- */

/* Captures begun and not yet finished (written, and reported when reports
 * are on) at any time; a cycle that finds no room is not captured. */
#define PROF_CAPTURES_IN_FLIGHT 4

/* Writer thread: start the command on the closed capture `path`. 1 when it
 * runs (prof__capture_done follows from the writer thread), 0 when it
 * cannot start (why in note, PROF_ERR_MAX bytes): the caller writes the
 * reports in-process. */
int prof__reports_capture_start(const char *path, char *note);
/* After the writer stopped: wait up to wait_ms for the commands still
 * writing capture reports (0: leave them to finish alone). */
void prof__reports_capture_end(int wait_ms);

#endif /* PROF_REPORTS_H */
