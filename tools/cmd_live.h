/* cmd_live.h — what `mlprof top`, `trigger` and `resume` share: finding a
 * running job's live page by its pid. */
#ifndef MLPROF_CMD_LIVE_H
#define MLPROF_CMD_LIVE_H

#include "model/model.h"

/* Parse a pid argument; returns it or -1 after printing why. */
int live_pid_arg(const char *cmd, const char *arg);
/* Map the live page of pid; NULL after printing why. */
prof__live_page *live_attach(const char *cmd, int pid);
/* Is the process still there? */
int live_alive(int pid);

#endif
