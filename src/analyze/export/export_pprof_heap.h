/* export_pprof_heap.h — the allocation sites of the memory section as a
 * pprof heap profile (export_pprof_heap.c). */
#ifndef PROF_EXPORT_PPROF_HEAP_H
#define PROF_EXPORT_PPROF_HEAP_H

#include <stdio.h>

#include "analyze/analyze.h"

/* Whether the trace has allocation sites to export: ALLOC events recorded
 * in sampled or full mode (MLPROF_MEM=sampled|full). */
int prof__pprof_heap_available(prof__an *an);

/* Write the heap profile (profile.proto, uncompressed): one sample per
 * allocation site with alloc_objects, alloc_space, inuse_objects and
 * inuse_space (default), and a `pool` label. Returns 0 or a negative
 * error. */
int prof__export_pprof_heap(prof__an *an, FILE *out);

#endif
