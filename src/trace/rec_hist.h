/* rec_hist.h — one-pass tensor summaries (prof_histogram) and their encoding in
 * PROF_CHUNK_HIST chunks.
 *
 * A summary holds the count, min, max, mean, standard deviation, exact
 * zeros, NaN and Inf counts of a float tensor, and the number of values per
 * binary magnitude bucket: bucket e counts finite non-zero |x| in
 * [2^e, 2^(e+1)), e from -126 to 127, and every subnormal counts in
 * bucket -127. The producer computes it
 * inside the call with no allocation; the analyzer decodes it. The byte
 * layout is specified in docs/model-health.md.
 */
#ifndef PROF_REC_HIST_H
#define PROF_REC_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define PROF_HIST_EMIN (-127) /* bucket of every subnormal (|x| < 2^-126) */
#define PROF_HIST_EMAX 127
#define PROF_HIST_NB (PROF_HIST_EMAX - PROF_HIST_EMIN + 1)
#define PROF_HIST_FORMAT 1    /* first byte of every HIST chunk */

typedef struct prof__hsum {
  uint64_t count;           /* all values, NaN and Inf included */
  uint64_t zeros;           /* exact +0 / -0 */
  uint64_t nan, inf;        /* non-finite values (excluded from the moments) */
  double min, max;          /* over finite values; 0 when there are none */
  double mean, std;         /* population std over finite values */
  uint64_t bucket[PROF_HIST_NB]; /* index e - PROF_HIST_EMIN; finite non-zero only */
  uint64_t units;           /* prof_histogram_units(): units per row; 0 when not given */
  uint64_t dead_units;      /* ... units that are exactly zero in every row of the call */
} prof__hsum;

/* Summarise values[0..n) in one pass. Never allocates. values may be NULL
 * only when n == 0. */
void prof__rec_hist_summarise(const float *values, size_t n, prof__hsum *out);

/* Units of values[0..n) laid out as rows of `units` values (the unit is the
 * last, fastest dimension) that hold an exact zero in every row. Stops at
 * the first non-zero of each unit, so live units cost one read. Never
 * allocates. Returns 0 when units is 0 or does not divide n. */
uint64_t prof__rec_hist_dead_units(const float *values, size_t n, size_t units);

/* Root mean square of the finite values, from mean and std. */
double prof__rec_hist_rms(const prof__hsum *s);

/* One decoded record of a HIST chunk. */
typedef struct prof__hrec {
  uint64_t ts_ns;
  uint64_t step1;   /* step number + 1 at the call; 0: before the first step */
  uint32_t tid;
  uint32_t tag;     /* string id of the tag */
  int kind;         /* PROF_HIST_* */
  prof__hsum sum;
} prof__hrec;

/* Append one record (producer staging or chunk building). A record with
 * units sets bit 7 of its kind byte and carries units and dead_units as two
 * varints after the buckets (docs/model-health.md). */
void prof__rec_hist_encode(prof__buf *b, const prof__hrec *r);
/* Decode the next record; returns 1, 0 at the end, -1 on a malformed
 * payload (the rest of the chunk is ignored). */
int prof__rec_hist_decode(prof__cur *c, prof__hrec *r);

#endif
