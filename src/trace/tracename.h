/* tracename.h — the naming rule of traces, one for the whole project: the
 * library names its traces with it and `mlprof run` finds them by it.
 *
 * Where a trace goes (prof__trace_output_path): the output setting
 * (MLPROF_OUTPUT, prof_config.output, `mlprof run -o`) names a file, or a
 * folder (ending in '/', or an existing one) that gets the default name
 * (prof__trace_default_name): `<program>.<pid>.mlpt`, or, when a launcher
 * set a rank, `<program>.<host>.r<rank>.<pid>.mlpt`, so the processes of
 * one job never clash, also across hosts sharing a folder. Missing folders
 * are created, as TensorBoard's writers do; another user's is refused.
 * Without an output setting the default name goes in the working
 * directory. Traces named after a trace `x.mlpt` (prof__trace_sibling)
 * are `x.<tag>.mlpt`: a process's own trace beside one another live
 * process writes (`x.<pid>.mlpt`), capture segments (`x.cycle<N>.mlpt`,
 * `x.trigger<K>.mlpt`).
 *
 * No trace is ever written over another. A trace goes to its name `x.mlpt`
 * when that is free, else to the first
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

/* The length of `path` without a final ".mlpt" (its stem). */
size_t prof__trace_stem_len(const char *path);

/* The trace named after `path` with `tag`: "<stem>.<tag>.mlpt" into
 * out[0..n). 0, or -1 when it does not fit. */
int prof__trace_sibling(char *out, size_t n, const char *path, const char *tag);
/* Is `path` a trace named after `trace` whose tag begins with `tag_prefix`? */
int prof__trace_is_sibling(const char *path, const char *trace, const char *tag_prefix);

/* The default file name of process `pid`'s trace: "<program>.<pid>.mlpt",
 * or "<program>.<host>.r<rank>.<pid>.mlpt" when a rank is known (`host`
 * not NULL). */
void prof__trace_default_name(char *out, size_t n, const char *program, const char *host, long rank, long pid);

/* The path of a trace for the output setting `output` (NULL: none) and the
 * default file name `name`, as the file comment says; out[0..n) always
 * receives it. The folder it goes in is created when missing (with every
 * missing folder above it, prof__mkdirs). 0, or -1 when that folder cannot
 * be created or is another user's, with the reason in err (PROF_ERR_MAX
 * bytes): no trace may be written there. */
int prof__trace_output_path(char *out, size_t n, const char *output, const char *name, char *err);

/* The folder of the trace `path` into out[0..n): "." for a bare name, "/"
 * for a name at the root. 0, or -1 when it does not fit. */
int prof__trace_folder(const char *path, char *out, size_t n);

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
