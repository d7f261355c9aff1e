/* export_pprof_heap.c — the allocation sites the memory section recorded
 * as a pprof heap profile, as Go's heap profiles are laid out: sample types
 * alloc_objects (count), alloc_space (bytes), inuse_objects (count) and
 * inuse_space (bytes, the default), one sample per site (its call stack),
 * labelled `pool` with the pool's name ("heap" for malloc and friends, else
 * the name of a prof_pool_* pool), so `pprof -tagfocus=pool=heap` keeps
 * the heap alone.
 *
 * alloc_* count every allocation of the run; inuse_* the blocks still live
 * at the end of the trace (never freed: at exit, the leaks). In sampled
 * mode every figure is the estimate the memory section makes (each sampled
 * block weighted by the inverse of its sampling probability) and the period
 * is the mean sampling interval in bytes; in full mode figures are exact.
 * Sites whose call stacks read as the same functions were merged by the
 * memory section: the merged site carries the allocations, and live blocks
 * stay with the stack they were allocated at (pprof adds them up again by
 * function).
 */
#include <math.h>
#include <stdlib.h>

#include "mlprof.h"
#include "analyze/export/export_pprof_heap.h"
#include "analyze/export/export_pprof_int.h"
#include "analyze/sections/memory/sec_memory.h"

int prof__pprof_heap_available(prof__an *an) {
  const mem_state *s = prof__an_section(an, "memory");
  return s && prof__sec_mem_from_events(s) && s->nsites > 0;
}

static int64_t rounded(double v) { return v > 0 && v < 9e18 ? (int64_t)llround(v) : 0; }

int prof__export_pprof_heap(prof__an *an, FILE *out) {
  const mem_state *s = prof__an_section(an, "memory");
  if (!s || !out) return PROF_EINVAL;
  double *live = calloc(2 * s->nsites + 1, sizeof *live); /* objects, bytes per site */
  if (!live) return PROF_ENOMEM;
  for (size_t i = 0; i < s->live.cap; i++) {
    const mem_blk *b = &s->live.s[i];
    if (!b->addr || b->site >= s->nsites) continue;
    live[2 * b->site] += b->w;
    live[2 * b->site + 1] += (double)b->size * b->w;
  }
  prof__pp p;
  prof__pp_init(&p, an);
  prof__pp_sample_type(&p, "alloc_objects", "count");
  prof__pp_sample_type(&p, "alloc_space", "bytes");
  prof__pp_sample_type(&p, "inuse_objects", "count");
  prof__pp_sample_type(&p, "inuse_space", "bytes");
  for (size_t i = 0; i < s->nsites; i++) {
    const mem_site *x = &s->sites[i];
    int64_t v[4] = {rounded(x->calls), rounded(x->bytes), rounded(live[2 * i]), rounded(live[2 * i + 1])};
    if (!v[0] && !v[1] && !v[2] && !v[3]) continue; /* emptied by a merge, or nothing left after rounding */
    prof__pp_label l = {"pool", prof__sec_mem_pool_name(s, x->pool), 0};
    prof__pp_sample(&p, x->stack, v, &l, 1);
  }
  free(live);
  int sampled = !prof__sec_mem_exact(s);
  return prof__pp_finish(&p, out, "space", "bytes", sampled ? rounded(s->sample_bytes) : 0, "inuse_space");
}
