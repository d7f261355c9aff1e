/* export_perfetto.h — a trace as Perfetto's native protobuf trace format
 * (a perfetto.protos.Trace: a stream of TracePackets), which
 * ui.perfetto.dev and trace_processor open directly. docs/perfetto.md
 * describes what goes where; export_perfetto.c writes it.
 */
#ifndef PROF_EXPORT_PERFETTO_H
#define PROF_EXPORT_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"

/* What an export wrote (any pointer may be NULL). */
typedef struct prof__pf_stats {
  uint64_t packets, bytes;
  uint64_t slices;   /* steps, ranges, GPU operations and API calls */
  uint64_t counters; /* counter values */
  uint64_t samples;  /* CPU samples with a call stack */
  uint64_t flows;    /* launch -> GPU operation arrows begun */
  uint64_t tracks;   /* track descriptors */
} prof__pf_stats;

/* Write the analysed trace `an` to `out`, reading it again from the start
 * and writing each packet as it goes: memory is bounded by the names,
 * threads, tracks and distinct call stacks, never by the number of events.
 * Returns 0 or a negative error (PROF_EIO when writing failed). */
int prof__export_perfetto(prof__an *an, FILE *out, prof__pf_stats *stats);

#endif
