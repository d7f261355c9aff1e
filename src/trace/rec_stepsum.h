/* rec_stepsum.h — per-step summaries of a bounded trace (MLPROF_MAX_MB):
 * the PROF_CHUNK_STEPSUM payload, its codec, and the summariser that turns
 * a stream of events into one record per completed step.
 *
 * A bounded trace keeps the full detail of its most recent window only; the
 * summaries keep every step of the whole run (number, thread, begin, length
 * and the step-time breakdown by category, as the analyzer attributes it;
 * since version 2 also the step thread's CPU time and the process's peak
 * RSS and live heap while the step was open), so the report still counts
 * and charts every step. Older summaries may be stored coarser (rounded) to
 * stay within the bound.
 * docs/trace-format.md ("STEPSUM payload") is the byte-level reference;
 * docs/long-runs.md the user's view.
 */
#ifndef PROF_REC_STEPSUM_H
#define PROF_REC_STEPSUM_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define PROF_SS_VERSION 2     /* written; version 1 payloads are still read */
#define PROF_SS_BUCKETS 6   /* compute, data, comm, io, other ranges, untracked (PROF_BD_*) */
#define PROF_SS_LEVELS 4    /* precision levels 0 (exact microseconds) .. 3 (coarsest) */

/* One completed step; times in microseconds on the trace's clock. */
typedef struct prof__ss_rec {
  uint64_t number;
  uint32_t tid;
  uint64_t begin_us, dur_us;
  uint64_t bd_us[PROF_SS_BUCKETS];
  /* version 2: optional, each present when its PROF_SS_HAS_* bit is set */
  unsigned have;
  uint64_t cpu_us;     /* CPU time of the step's thread during the step */
  uint64_t rss_bytes;  /* highest process RSS while the step was open */
  uint64_t live_bytes; /* highest live heap while the step was open */
} prof__ss_rec;

#define PROF_SS_HAS_CPU 1u
#define PROF_SS_HAS_RSS 2u
#define PROF_SS_HAS_LIVE 4u
#define PROF_SS_HAS_ALL 7u

/* The peak of a step function given by readings (ts ascending) over
 * [b, e]: the highest of the reading in effect at b (the last with ts <= b)
 * and those in (b, e]; for a step before the first reading, the first
 * reading. Returns 0 when there are no readings. The writer's summariser
 * and the analyzer's detail steps share this rule. */
int prof__ss_peak(const uint64_t *ts, const double *v, size_t n, uint64_t b, uint64_t e, double *peak);

/* The chunk's header: its precision and the bound's totals when written. */
typedef struct prof__ss_hdr {
  unsigned level;            /* 0: exact; higher: rounded (prof__ss_level_*) */
  uint64_t max_bytes;        /* the bound */
  uint64_t dropped_bytes;    /* detail chunks' bytes dropped so far */
  uint64_t dropped_chunks;
  uint64_t compactions;      /* times the file was rewritten */
  uint64_t count;            /* records in this chunk */
} prof__ss_hdr;

/* Precision of a level: significant bits kept of lengths (0: all) and the
 * unit of begin times (1 << shift microseconds). */
unsigned prof__ss_level_sig(unsigned level);
unsigned prof__ss_level_shift(unsigned level);

/* An encoder: records delta-coded against the previous one of the same
 * encoder, rounded to its level. */
typedef struct prof__ss_enc {
  prof__buf b;
  unsigned level;
  uint64_t n;
  uint32_t tid;
  uint64_t number, qbegin;
  uint64_t rss, live; /* the previous record's (rounded) values: deltas */
} prof__ss_enc;

void prof__ss_enc_put(prof__ss_enc *e, const prof__ss_rec *r);
void prof__ss_enc_reset(prof__ss_enc *e, unsigned level); /* empty, keeps the buffer */
void prof__ss_enc_free(prof__ss_enc *e);
/* A chunk payload: the header (h->count and h->level from e) and e's records. */
void prof__ss_payload(prof__buf *out, const prof__ss_enc *e, const prof__ss_hdr *h);

/* Decoding a payload: open reads the header, next returns 1 with a record,
 * 0 at the end, -1 when the payload is malformed. */
typedef struct prof__ss_iter {
  prof__cur c;
  prof__ss_hdr h;
  uint64_t left;
  uint32_t tid;
  uint64_t number, qbegin;
  uint64_t rss, live;
  unsigned version;
} prof__ss_iter;

int prof__ss_open(prof__ss_iter *it, const uint8_t *p, size_t len);
int prof__ss_next(prof__ss_iter *it, prof__ss_rec *r);

/* ---- the summariser ------------------------------------------------------ */

#define PROF_SS_THREADS 64 /* threads whose ranges it follows (the first seen) */
#define PROF_SS_DEPTH 32   /* range nesting it follows per thread */

#define PROF_SS_PEND_MAX 65536 /* completed steps held for their CPU and memory readings */
#define PROF_SS_WAIT_CYCLES 40 /* nor longer than this many writer cycles (prof__ss_cycle) */
#define PROF_SS_NOMEM_CYCLES 2 /* when no memory reading was ever written (memory not recorded) */
#define PROF_SS_WAIT_NS 10000000000ull /* without cycles: trace time (the newest event seen) */

typedef struct prof__ss_thread {
  uint32_t tid;
  uint32_t depth, over;
  uint8_t stack[PROF_SS_DEPTH];
  int open;
  uint64_t number, begin, attr;
  uint64_t bd[PROF_SS_BUCKETS];
  /* CPU clock: the last boundary reading not yet taken by a STEP_BEGIN, the
   * open step's begin value, and the held step waiting for its end value. */
  int cpu_have, cpu_begun;
  double cpu_v, cpu_begin;
  uint64_t cpu_wait; /* held step's sequence number + 1 */
} prof__ss_thread;

/* A completed step held until its readings arrived. */
typedef struct prof__ss_held {
  prof__ss_rec r;
  uint64_t begin_ns, end_ns;
  double cpu_begin;
  int cpu_wait;
  uint64_t cycle; /* writer cycles seen when it was completed */
} prof__ss_held;

/* Readings of a process-wide counter (ts ascending), kept back to the
 * oldest step not yet emitted. */
typedef struct prof__ss_series {
  uint64_t *ts;
  double *v;
  size_t n, cap;
} prof__ss_series;

typedef struct prof__ss_state {
  prof__ss_thread t[PROF_SS_THREADS];
  int nt, last;
  uint64_t steps; /* records made */
  /* version 2 fields: the counters' string ids (prof__ss_name) */
  uint32_t id_cpu, id_rss, id_live;
  prof__ss_series rss, live;
  prof__ss_held *held; /* ring of completed steps, oldest at held_head */
  size_t held_head, nheld, held_cap;
  uint64_t held_seq;   /* sequence number of the oldest held step */
  uint64_t now;        /* the newest event time seen */
  uint64_t cycles;     /* writer cycles (prof__ss_cycle) */
  int oom;
} prof__ss_state;

/* A string the trace defines: the summariser learns the ids of the
 * counters it reads. */
void prof__ss_name(prof__ss_state *s, uint32_t id, const char *str, size_t len);

/* Feed events of thread `tid` (ts in ns, in the thread's order). Completed
 * steps are held until their CPU and memory readings arrived; each one is
 * passed to emit by prof__ss_settle. */
typedef void (*prof__ss_emit)(void *arg, const prof__ss_rec *r);
void prof__ss_observe(prof__ss_state *s, uint32_t tid, const prof__event *ev, size_t n, prof__ss_emit emit,
                      void *arg);
/* The writer's hooks ran (one writer cycle). */
void prof__ss_cycle(prof__ss_state *s);
/* Emit the held steps whose readings are in (all of them with `force`),
 * oldest first. Steps held past PROF_SS_PEND_MAX, or PROF_SS_WAIT_CYCLES
 * writer cycles after their end (PROF_SS_NOMEM_CYCLES while no memory
 * reading came at all; PROF_SS_WAIT_NS of trace time when the writer does
 * not count cycles), go out with what is known. */
void prof__ss_settle(prof__ss_state *s, int force, prof__ss_emit emit, void *arg);
void prof__ss_free(prof__ss_state *s);

#endif /* PROF_REC_STEPSUM_H */
