/* settings.h — how the MLPROF_* environment settings are read, one rule
 * for the whole project (the recorder, the trace reader, the mlprof
 * command):
 *  - prof__env("NAME") is MLPROF_NAME; an empty value counts as unset. It
 *    is the only reader of MLPROF_* variables (tests/check_structure.sh);
 *    setting them (setenv) stays with whoever sets them.
 *  - A switch takes 1/true/yes/on or 0/false/no/off, in any case, nothing
 *    else (prof__flag_parse).
 * The recorder checks values and says once which are ignored with the
 * helpers of core/config.h, built on these. docs/configuration.md lists
 * the variables.
 */
#ifndef PROF_SETTINGS_H
#define PROF_SETTINGS_H

#include <stddef.h>

/* MLPROF_<name>, or NULL when it is unset or empty. */
const char *prof__env(const char *name);

/* MLPROF_PRELOAD=1, exactly: `mlprof run` preloaded the library, and its
 * constructor starts the session (mem/shared_preload.c). */
int prof__env_preload(void);

/* 1 in a process that `mlprof run` did not start itself but that inherited
 * its preload (a child that exec'd: MLPROF_RUN_PID names another pid). Such
 * a process writes its own trace, and leaves the run's one-time notes to
 * the top process. */
int prof__env_run_child(void);

/* LD_PRELOAD's entries, as the loader splits them (colons or spaces): the
 * next one at or after *p, its length in *len, and *p moved past it; NULL
 * when none is left. */
const char *prof__preload_next(const char **p, size_t *len);

/* A switch's text: 1, 0, or -1 when it is none of the words above (NULL
 * too). */
int prof__flag_parse(const char *v);

#endif /* PROF_SETTINGS_H */
