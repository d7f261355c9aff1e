/* snapshot.h — what the report entry points of the library share
 * (snapshot.c, report_api.c). */
#ifndef PROF_LIB_SNAPSHOT_H
#define PROF_LIB_SNAPSHOT_H

#include "analyze/analyze.h"

/* The analysis of the trace a running program is still writing: its
 * missing footer is no truncation; a `live_snapshot` finding says the
 * report covers what was recorded so far. */
void prof__snapshot_mark_live(prof__an *an);

#endif
