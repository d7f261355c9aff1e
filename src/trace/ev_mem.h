/* ev_mem.h — the memory family of the event contract: ALLOC and FREE
 * events, their flags and pools, the recording modes and their names, and
 * the header keys and counter names the memory producer writes. The
 * producer (src/mem) and the memory section (src/analyze/sections/memory)
 * both compile this one definition. Values are part of the trace format.
 *
 *   ALLOC  name: stack id (0: none), a: address, b: size (bytes),
 *          aux: pool (PROF_MEM_POOL_HEAP or a prof_pool_* id),
 *          cat: PROF_MEM_CAT_* flags
 *   FREE   a: address, aux: pool; ts of a FREE never precedes its ALLOC
 */
#ifndef PROF_EV_MEM_H
#define PROF_EV_MEM_H

#include <stdint.h>
#include <string.h>

#include "trace/event.h"

/* Recording modes (MLPROF_MEM, header key PROF_MEM_KEY_MODE). */
enum {
  PROF_MEM_OFF = 0,     /* nothing */
  PROF_MEM_COUNTS = 1,  /* per-thread totals as counters; pool blocks only as events */
  PROF_MEM_SAMPLED = 2, /* ALLOC/FREE for blocks chosen by byte sampling */
  PROF_MEM_FULL = 3,    /* ALLOC/FREE for every block */
  PROF_MEM_NMODES = 4
};

/* ALLOC `cat` flag: the block was chosen by byte sampling; its weight is
 * 1 / (1 - exp(-size / sample_bytes)). */
#define PROF_MEM_CAT_SAMPLED 1u

/* ALLOC/FREE `aux`: the heap, else a pool registered by the program. */
#define PROF_MEM_POOL_HEAP 0
#define PROF_MEM_POOLS 256 /* pool ids are below this */

/* Header keys. */
#define PROF_MEM_KEY_MODE "mem.mode"
#define PROF_MEM_KEY_SAMPLE_BYTES "mem.sample_bytes"
#define PROF_MEM_KEY_INTERPOSER "mem.interposer"
/* META at shutdown, with the interposer: the heap when the session began
 * (live usable bytes, live blocks), the requested bytes of the large blocks
 * made before it that were recorded as ALLOC events at its start, and the
 * large blocks of that time left unrecorded (list full). */
#define PROF_MEM_META_START_LIVE "mem.start_live_bytes"
#define PROF_MEM_META_START_BLOCKS "mem.start_live_blocks"
#define PROF_MEM_META_START_LISTED "mem.start_listed_bytes"
#define PROF_MEM_META_START_UNLISTED "mem.start_unlisted_blocks"
/* Counter names (COUNTER events) share this prefix. */
#define PROF_MEM_COUNTER_PREFIX "mem."
#define PROF_MEM_COUNTER_LIVE "mem.live_bytes"
#define PROF_MEM_COUNTER_RSS "mem.rss_bytes"
#define PROF_MEM_COUNTER_CALLS "mem.alloc_calls"
#define PROF_MEM_COUNTER_BYTES "mem.alloc_bytes"

/* The name of a mode ("?" outside the table). */
static inline const char *prof__ev_mem_mode_name(int mode) {
  static const char *const names[PROF_MEM_NMODES] = {"off", "counts", "sampled", "full"};
  return (unsigned)mode < PROF_MEM_NMODES ? names[mode] : "?";
}

/* The mode named `s`, or -1. */
static inline int prof__ev_mem_mode_parse(const char *s) {
  for (int m = 0; s && m < PROF_MEM_NMODES; m++)
    if (strcmp(s, prof__ev_mem_mode_name(m)) == 0) return m;
  return -1;
}

/* Whether a mode records ALLOC/FREE events for heap blocks, and whether it
 * records every one of them (figures exact rather than estimated). */
static inline int prof__ev_mem_mode_has_events(int mode) { return mode >= PROF_MEM_SAMPLED; }
static inline int prof__ev_mem_mode_exact(int mode) { return mode == PROF_MEM_FULL; }

/* Whether an ALLOC was chosen by byte sampling. */
static inline int prof__ev_mem_sampled(const prof__event *ev) { return (ev->cat & PROF_MEM_CAT_SAMPLED) != 0; }

#endif /* PROF_EV_MEM_H */
