/* mem.h — memory profiling state shared by the allocator interposer
 * (shared_malloc.c, shared library only), the pool API and the writer hook
 * (mem.c, both libraries).
 *
 * Modes (MLPROF_MEM): off, counts (per-thread live/usable bytes and calls,
 * no events), sampled (counts + Poisson byte sampling: one ALLOC event with
 * its stack per MLPROF_MEM_SAMPLE_BYTES allocated on average, and the FREE
 * of every sampled block), full (every ALLOC and FREE with its stack).
 *
 * The hot path lives here as inline functions so the interposer pays for no
 * call beyond the real allocator; everything rare is out of line in mem.c.
 */
#ifndef PROF_MEM_H
#define PROF_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "core/producer.h"

/* Modes, ALLOC flags, pools and header keys: the event contract's memory
 * family (trace/ev_mem.h). */
#include "trace/ev_mem.h"

#define PROF_MEM_IE __attribute__((tls_model("initial-exec")))

/* Per-thread counters, read (relaxed) by the writer thread. */
typedef struct prof__mem_tc {
  int64_t live;       /* usable bytes allocated minus freed by this thread */
  uint64_t allocs;    /* allocation calls */
  uint64_t frees;     /* free calls (non-NULL) */
  uint64_t bytes;     /* requested bytes allocated */
  int64_t countdown;  /* sampled mode: bytes until the next sample */
  uint64_t rng;       /* xorshift state for the exponential draws */
  int used;           /* slot taken by a live thread */
  int had_ring;       /* the thread had a profiler ring (to spot its exit) */
  int stack_ready;    /* prof__stack_thread_init() done */
} prof__mem_tc;

/* Sentinels for prof__mem_self: NULL = not yet set up; DEAD = the thread
 * exited (or no slot was free): counters go to the shared atomic totals. */
#define PROF_MEM_TC_DEAD ((prof__mem_tc *)1)

extern int prof__mem_mode;                /* PROF_MEM_*, fixed once resolved */
extern int prof__mem_interposed;          /* 1 when malloc goes through us */
extern uintptr_t prof__mem_text_lo, prof__mem_text_hi; /* the profiler's own code */
extern __thread prof__mem_tc *prof__mem_self PROF_MEM_IE;

/* Read MLPROF_MEM / MLPROF_MEM_SAMPLE_BYTES once (no allocation). */
void prof__mem_mode_resolve(void);
uint64_t prof__mem_sample_bytes(void);
/* MLPROF_MEM_SAMPLE_BYTES text as a mean in 1..PROF_MEM_SAMPLE_BYTES_MAX,
 * or 0 when it is none (a bad value, said by the module's start). */
#define PROF_MEM_SAMPLE_BYTES_MAX (1ull << 40)
uint64_t prof__mem_sample_bytes_parse(const char *s);
uint64_t prof__mem_sample_bytes_default(void);

/* Slow paths (mem.c). */
prof__mem_tc *prof__mem_tc_get(void);          /* set up the calling thread */
void prof__mem_count_shared(int64_t live, uint64_t bytes, int is_alloc);
void prof__mem_event_alloc(prof__mem_tc *tc, const void *p, size_t n, int sampled);
void prof__mem_event_free(const void *p);
void prof__mem_sample_free(const void *p);      /* bloom filter hit */
void prof__mem_sample_draw(prof__mem_tc *tc);   /* next countdown */

/* A pool event (prof_mem_alloc/free): always recorded while the session
 * runs and the mode is not off. */
void prof__mem_pool_event(int alloc, int pool, const void *p, size_t n);
/* Sampled blocks not recorded because the table of live samples was full. */
uint64_t prof__mem_table_full(void);

/* Bloom filter over live sampled addresses (one bit per hash). */
#define PROF_MEM_BLOOM_BITS (1u << 18)
extern uint64_t prof__mem_bloom[PROF_MEM_BLOOM_BITS / 64];
static inline uint32_t prof__mem_hash(const void *p) {
  return (uint32_t)((((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) >> 46) & (PROF_MEM_BLOOM_BITS - 1);
}

static inline int prof__mem_from_profiler(const void *ra) {
  return (uintptr_t)ra - prof__mem_text_lo < prof__mem_text_hi - prof__mem_text_lo;
}

/* Large blocks (big.c): a block of at least PROF_MEM_BIG_BYTES usable bytes
 * leaves the hot path once. Before the first session start it is listed
 * with its caller (up to PROF_MEM_EARLY_MAX blocks), so the session can
 * record it as an allocation made before recording began; while a session
 * runs, the live heap is summed and a new high-water mark is kept with its
 * time for the writer (mem.live_bytes at the moment of the peak). The free
 * of a listed block takes it off the list (prof__mem_early_n: blocks
 * listed now, read by every free of a large block). */
#define PROF_MEM_BIG_BYTES (256u * 1024u)
#define PROF_MEM_EARLY_MAX 256
extern int prof__mem_early_n;
void prof__mem_big_alloc(const void *p, size_t req, const void *ra);
void prof__mem_big_free(const void *p);
/* Session start (memory module): close the list of early blocks, keep the
 * live heap of this moment, and record the listed blocks as ALLOC events
 * (their caller as a one-frame stack; sampled mode also tracks their FREE). */
void prof__mem_session_begins(void);
/* Writer: the high-water mark reached since the last call (ticks of
 * prof__ticks()), then forgotten. Returns 0 when there is none. */
int prof__mem_high_water_take(int64_t *live, uint64_t *ticks);
/* At session start: live heap bytes (usable) and blocks then; the blocks
 * listed with their sites, their requested bytes; large blocks not listed
 * (list full). */
typedef struct prof__mem_start {
  int64_t live, blocks;
  uint64_t listed, listed_bytes, unlisted;
} prof__mem_start;
void prof__mem_start_get(prof__mem_start *s);
/* events.c: one early block as an ALLOC event of the current thread. */
void prof__mem_event_early(const void *p, size_t n, uintptr_t ra);

/* The counting of one allocation on the calling thread's slot, and the
 * sample or event it may take (mode: prof__mem_mode, not off). Shared by
 * prof__mem_on_alloc and the interposer's inline fast path. */
static inline void prof__mem_tc_alloc(prof__mem_tc *tc, const void *p, size_t req, size_t usable, int mode,
                                      const void *ra) {
  __atomic_store_n(&tc->live, tc->live + (int64_t)usable, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->allocs, tc->allocs + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->bytes, tc->bytes + req, __ATOMIC_RELAXED);
  if (PROF_UNLIKELY(usable >= PROF_MEM_BIG_BYTES)) prof__mem_big_alloc(p, req, ra);
  if (mode == PROF_MEM_SAMPLED) {
    tc->countdown -= (int64_t)req;
    if (PROF_UNLIKELY(tc->countdown < 0)) prof__mem_event_alloc(tc, p, req, 1);
  } else if (mode == PROF_MEM_FULL) {
    prof__mem_event_alloc(tc, p, req, 0);
  }
}

/* The counting of one free on the calling thread's slot. */
static inline void prof__mem_tc_free(prof__mem_tc *tc, const void *p, size_t usable) {
  __atomic_store_n(&tc->live, tc->live - (int64_t)usable, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->frees, tc->frees + 1, __ATOMIC_RELAXED);
  if (PROF_UNLIKELY(usable >= PROF_MEM_BIG_BYTES) && PROF_UNLIKELY(__atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED)))
    prof__mem_big_free(p);
}

/* The FREE event a free may take: a sampled block's (Bloom filter first),
 * or every one in full mode. */
static inline void prof__mem_free_events(const void *p, int mode) {
  if (mode == PROF_MEM_SAMPLED) {
    uint32_t h = prof__mem_hash(p);
    if (PROF_UNLIKELY(__atomic_load_n(&prof__mem_bloom[h >> 6], __ATOMIC_RELAXED) >> (h & 63) & 1))
      prof__mem_sample_free(p);
  } else if (mode == PROF_MEM_FULL) {
    prof__mem_event_free(p);
  }
}

/* Account one allocation of `req` requested / `usable` bytes at p, made by
 * code returning to `ra`. */
static inline void prof__mem_on_alloc(const void *p, size_t req, size_t usable, const void *ra) {
  if (PROF_UNLIKELY(!prof__mem_mode)) return;
  if (PROF_UNLIKELY(prof__guard_depth) || PROF_UNLIKELY(prof__mem_from_profiler(ra))) return;
  prof__mem_tc *tc = prof__mem_self;
  if (PROF_UNLIKELY((uintptr_t)tc <= 1)) {
    tc = prof__mem_tc_get();
    if (tc == PROF_MEM_TC_DEAD) {
      prof__mem_count_shared((int64_t)usable, req, 1);
      if (PROF_UNLIKELY(usable >= PROF_MEM_BIG_BYTES)) prof__mem_big_alloc(p, req, ra);
      return;
    }
  }
  prof__mem_tc_alloc(tc, p, req, usable, prof__mem_mode, ra);
}

/* Account the free of a block of `usable` bytes (call before the real free). */
static inline void prof__mem_on_free(const void *p, size_t usable, const void *ra) {
  if (PROF_UNLIKELY(!prof__mem_mode)) return;
  if (PROF_UNLIKELY(prof__guard_depth) || PROF_UNLIKELY(prof__mem_from_profiler(ra))) return;
  prof__mem_tc *tc = prof__mem_self;
  if (PROF_UNLIKELY((uintptr_t)tc <= 1)) tc = prof__mem_tc_get();
  if (tc != PROF_MEM_TC_DEAD) {
    prof__mem_tc_free(tc, p, usable);
  } else {
    prof__mem_count_shared(-(int64_t)usable, 0, 0);
    if (PROF_UNLIKELY(usable >= PROF_MEM_BIG_BYTES) && __atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED))
      prof__mem_big_free(p);
  }
  prof__mem_free_events(p, prof__mem_mode);
}

/* Totals over all threads (writer thread; approximate while threads run). */
typedef struct prof__mem_totals {
  int64_t live;
  uint64_t allocs, frees, bytes;
} prof__mem_totals;
void prof__mem_totals_get(prof__mem_totals *t);
/* A step ended (any thread, ticks of prof__ticks()): keep the live heap
 * bytes of this moment for the writer, which writes them as a
 * mem.live_bytes counter stamped at the step end, so growth is seen even
 * when steps are shorter than the writer period. Never blocks, never
 * allocates: a point that meets the writer draining is dropped and counted. */
void prof__mem_step_boundary(uint64_t ticks);


#endif
