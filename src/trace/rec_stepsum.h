/* rec_stepsum.h — per-step summaries of a bounded trace (MLPROF_MAX_MB):
 * the PROF_CHUNK_STEPSUM payload, its codec, and the summariser that turns
 * a stream of events into one record per completed step.
 *
 * A bounded trace keeps the full detail of its most recent window only; the
 * summaries keep every step of the whole run (number, thread, begin, length
 * and the step-time breakdown by category, as the analyzer attributes it),
 * so the report still counts and charts every step. Older summaries may be
 * stored coarser (rounded) to stay within the bound.
 * docs/trace-format.md ("STEPSUM payload") is the byte-level reference;
 * docs/long-runs.md the user's view.
 */
#ifndef PROF_REC_STEPSUM_H
#define PROF_REC_STEPSUM_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define PROF_SS_VERSION 1
#define PROF_SS_BUCKETS 6   /* compute, data, comm, io, other ranges, untracked (PROF_BD_*) */
#define PROF_SS_LEVELS 4    /* precision levels 0 (exact microseconds) .. 3 (coarsest) */

/* One completed step; times in microseconds on the trace's clock. */
typedef struct prof__ss_rec {
  uint64_t number;
  uint32_t tid;
  uint64_t begin_us, dur_us;
  uint64_t bd_us[PROF_SS_BUCKETS];
} prof__ss_rec;

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
} prof__ss_iter;

int prof__ss_open(prof__ss_iter *it, const uint8_t *p, size_t len);
int prof__ss_next(prof__ss_iter *it, prof__ss_rec *r);

/* ---- the summariser ------------------------------------------------------ */

#define PROF_SS_THREADS 64 /* threads whose ranges it follows (the first seen) */
#define PROF_SS_DEPTH 32   /* range nesting it follows per thread */

typedef struct prof__ss_thread {
  uint32_t tid;
  uint32_t depth, over;
  uint8_t stack[PROF_SS_DEPTH];
  int open;
  uint64_t number, begin, attr;
  uint64_t bd[PROF_SS_BUCKETS];
} prof__ss_thread;

typedef struct prof__ss_state {
  prof__ss_thread t[PROF_SS_THREADS];
  int nt, last;
  uint64_t steps; /* records made */
} prof__ss_state;

/* Feed events of thread `tid` (ts in ns, in the thread's order); each
 * completed step is passed to emit. */
typedef void (*prof__ss_emit)(void *arg, const prof__ss_rec *r);
void prof__ss_observe(prof__ss_state *s, uint32_t tid, const prof__event *ev, size_t n, prof__ss_emit emit,
                      void *arg);

#endif /* PROF_REC_STEPSUM_H */
