/* cmd_live.h — what `mlprof top`, `trigger` and `resume` share: finding a
 * running job's live page by its pid. */
#ifndef MLPROF_CMD_LIVE_H
#define MLPROF_CMD_LIVE_H

#include "trace/live_page.h"

/* Parse a pid argument; returns it or -1 after printing why. */
int live_pid_arg(const char *cmd, const char *arg);
/* Map the live page of pid; NULL after printing why. */
prof__live_page *live_attach(const char *cmd, int pid);
/* Is the process still there? */
int live_alive(int pid);
/* Is pid a process of this user (real uid) running with the profiler? With
 * its live page `p`: the process is not younger than the page (a page left
 * by a dead job whose pid was reused does not count); without: MLPROF_* in
 * its environment or libmlprof mapped. With `stopped`, it must also be
 * stopped (SIGSTOP). 1 or 0. */
int live_own_job(int pid, const prof__live_page *p, int stopped);
/* live_attach, for commands that act on the job: only a live mlprof job of
 * this user (trigger, resume). */
prof__live_page *live_attach_own(const char *cmd, int pid);

#endif
