/* sec_functions.h — what the "functions" section shares with the stack
 * exporters (folded, pprof, flame graph): the sampled stacks and their
 * weights, plus a small u64 -> u64 hash map used by both. */
#ifndef PROF_SEC_FUNCTIONS_H
#define PROF_SEC_FUNCTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "analyze/util/hashmap.h"
#include "mlprof.h"

typedef struct prof__sampled_stack {
  uint32_t stack;  /* stack id (symbols.h) */
  uint64_t weight; /* sampling periods */
} prof__sampled_stack;

/* Sampled stacks of the mode the report uses (CPU samples when there are
 * any, else wall-clock samples), merged over ranges and threads; *mode is
 * 0 (cpu) or 1 (wall), *period_ns the sampling period. Returns the count
 * (0 when the trace has no samples or the section is absent). */
size_t prof__functions_stacks(prof__an *an, const prof__sampled_stack **out, int *mode, double *period_ns);

/* Exporters of sampled stacks (export_*.c). Return 0 or a negative error. */
int prof__export_folded(prof__an *an, FILE *out);
int prof__export_pprof(prof__an *an, FILE *out);
int prof__export_flamegraph(prof__an *an, FILE *out);

/* Frames of a sampled stack, outermost first, profiler frames dropped, as
 * function names; returns the count (<= max). Used by the exporters. */
int prof__sec_stacks_func_names(prof__an *an, uint32_t stack, const char **names, int max);

#endif
