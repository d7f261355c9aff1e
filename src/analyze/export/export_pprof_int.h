/* export_pprof_int.h — the pprof profile builder (profile.proto) shared by
 * the CPU profile (export_pprof.c) and the heap profile
 * (export_pprof_heap.c): the string table, one mapping per recorded
 * module, functions and locations of the stacks the samples use, and
 * samples with values and labels. Internal to those files.
 */
#ifndef PROF_EXPORT_PPROF_INT_H
#define PROF_EXPORT_PPROF_INT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/util/hashmap.h"
#include "trace/trace.h"

typedef struct prof__pp {
  prof__an *an;
  prof__buf out;
  prof__u64map strs;  /* string hash -> index + 1 */
  const char **strv;
  size_t nstr, strcap;
  prof__u64map locs;  /* pc -> location id */
  prof__u64map funcs; /* (name idx << 32 | file idx) -> function id */
  uint64_t nloc, nfunc;
  prof__buf tail;     /* locations and functions, after the samples */
  prof__stacks_st *st; /* recorded modules */
  uint64_t mlprof_loc; /* location id of "[mlprof]" (0: none yet) */
  char **owned;        /* strings made here, freed at the end */
  size_t nowned;
  int nvalues;         /* sample types declared */
} prof__pp;

/* A label of a sample: a string (str != NULL) or a number. */
typedef struct prof__pp_label {
  const char *key, *str;
  int64_t num;
} prof__pp_label;

/* Start a profile of `an` (writes the mappings). */
void prof__pp_init(prof__pp *p, prof__an *an);
/* Index of s in the string table (0 is ""); s must outlive the builder
 * (prof__pp_own() makes a copy that does). */
uint64_t prof__pp_str(prof__pp *p, const char *s);
const char *prof__pp_own(prof__pp *p, const char *s);
/* Declare the next sample type. */
void prof__pp_sample_type(prof__pp *p, const char *type, const char *unit);
/* One sample of stack `stack` (trace stack id; 0: no frames) with one value
 * per sample type and `nlabels` labels. Frames of mlprof itself are
 * treated as everywhere (prof__an_stack_frames): dropped, a run of them at
 * the leaf one "[mlprof]" location. */
void prof__pp_sample(prof__pp *p, uint32_t stack, const int64_t *values, const prof__pp_label *labels, int nlabels);
/* Finish: period type and period, time and duration of the trace, the
 * default sample type, the string table; write it all to `out` and free
 * the builder. Returns 0 or a negative error. */
int prof__pp_finish(prof__pp *p, FILE *out, const char *period_type, const char *period_unit, int64_t period,
                    const char *default_type);

#endif
