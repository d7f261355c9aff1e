/* tracename.h — free names for new traces, so that no trace is ever written
 * over another.
 *
 * A trace goes to its name `x.mlpt` when that is free, else to the first
 * free numbered name `x.1.mlpt`, `x.2.mlpt`, ... (at most
 * PROF_TRACE_NAMES names in all). A program that execs itself keeps its pid
 * and so its default name; a second session in one process, or a second
 * `mlprof run -o x.mlpt`, keeps its MLPROF_OUTPUT: each gets a name of its
 * own. The launcher finds the traces a child wrote by the same rule.
 */
#ifndef PROF_TRACENAME_H
#define PROF_TRACENAME_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* The names tried for one trace: `x.mlpt` and x.1 to x.(PROF_TRACE_NAMES-1). */
#define PROF_TRACE_NAMES 1000

/* Name number k for the trace `base` into out[0..n): k = 0 is `base`
 * itself; k > 0 inserts ".k" before a final ".mlpt" (or appends it). 0, or
 * -1 when it does not fit. */
int prof__trace_name(const char *base, unsigned k, char *out, size_t n);

/* May a trace be written at `path`? Its folder (the working directory for
 * a bare name) must pass prof__out_dir_check: the user's own or root's. 0,
 * or -1 with a message in `err` (PROF_ERR_MAX bytes). */
int prof__trace_folder_check(const char *path, char *err);

/* Create a trace (prof__tw_create) at `path` or, when that name is taken by
 * a regular file of the user's, at the first free numbered name; `path`
 * (n bytes) is rewritten to the name taken. The folder must pass
 * prof__trace_folder_check; anything else at a name (a symlink, a folder,
 * another user's file) is refused, not passed by. NULL with a message in
 * `err` (PROF_ERR_MAX bytes) on failure. */
prof__tw *prof__trace_create_free(char *path, size_t n, const prof__kv *kv, size_t nkv, char *err);

/* The traces named after `base` (k = 0 .. PROF_TRACE_NAMES-1) that process
 * `pid` started at or after `since_ns` (CLOCK_REALTIME, header values
 * `pid` and `start_realtime_ns`), regular files of the user's: how many,
 * with the latest one's name in out[0..n) (untouched when there is none). */
int prof__trace_find(const char *base, long pid, uint64_t since_ns, char *out, size_t n);

#endif
