/* header.h — the header of the session's traces (header.c). */
#ifndef PROF_HEADER_H
#define PROF_HEADER_H

#include <stddef.h>

#include "trace/trace.h"

/* Create a trace at `path` (n bytes) or the first free name after it
 * (trace/tracename.h), with the session's header: the process, the clock,
 * the rank, the configuration, and the modules' pairs; `path` becomes the
 * name taken. `own`: the session's own trace, which names the trace this
 * process wrote before it and is named for the ones after it (tracepath.h),
 * and is refused when the output folder was; 0: a capture segment, which
 * does neither. NULL with the reason in err (PROF_ERR_MAX bytes). */
prof__tw *prof__header_open(char *path, size_t n, int own, char *err);

#endif /* PROF_HEADER_H */
