/* tracepath.h — which trace came before this one in the same process.
 *
 * When a session opens its trace, the library sets MLPROF_PREV_TRACE to
 * "<pid>:<absolute trace path>" in the process environment. A later image
 * of the same process (after exec, which keeps the pid) or a later session
 * in it (libmlprof loaded again) finds its predecessor there and records it
 * in its trace header as `previous_trace`. Other processes inherit the
 * variable too but ignore it: its pid is not theirs.
 */
#ifndef PROF_TRACEPATH_H
#define PROF_TRACEPATH_H

#include <stddef.h>

/* The trace this process wrote before (from MLPROF_PREV_TRACE), or "";
 * prof__first_trace (producer.h) says afterwards whether there was one. */
void prof__prev_trace(char *out, size_t n);

/* Name `path` as this process's latest trace, for its successors. */
void prof__prev_trace_set(const char *path);

#endif
