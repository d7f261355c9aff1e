/* chrome_range.h — ranges in Chrome Trace Event JSON, written so that
 * viewers nest them as they were recorded. The one place for the two rules
 * every Chrome writer (the single-trace export, the merged multi-rank
 * export, the GPU section's tracks) follows:
 *  - a range is a complete event ("ph":"X"), but a zero-length one is a
 *    begin/end pair: speedscope's importer orders ends before begins at
 *    equal times, so it would end a zero-length complete event before
 *    beginning it whenever another range begins at that time; a begin and
 *    an end of one time and one name (and args) it takes in file order;
 *  - ranges closed at one instant (left open at the end of a trace, or
 *    closed by the end of a range that holds them) end 1 ns apart,
 *    innermost first: speedscope adds ts and dur in doubles, and equal ends
 *    can come out with the child's a rounding error after its parent's,
 *    which makes it nest the rest of the thread wrongly. A nanosecond is far
 *    above that error for traces of up to days;
 *  - for the same reason a range that begins at the nanosecond the previous
 *    complete event of its track ended (a pop and a push read the clock a
 *    few ns apart, and both can fall in one ns) begins 1 ns later: its
 *    predecessor's ts + dur could otherwise come out after it.
 * prof__exp_crange_write() writes one range; a prof__exp_crange_track keeps
 * a track's last end; a prof__exp_crange_stack holds the open ranges of one
 * thread and applies all three rules. */
#ifndef PROF_CHROME_RANGE_H
#define PROF_CHROME_RANGE_H

#include <stdint.h>

#include "analyze/util/json.h"

/* Writes the members of a range's "args" object (ctx: the caller's). */
typedef void (*prof__exp_crange_args)(prof__json *j, const void *ctx);

/* Write the range [b_ns, e_ns] (ns since the export's time zero; an end
 * before the begin counts as the begin) named `name`, of category `cat`, on
 * track (pid, tid) of the array `j` is in: a complete event, or a
 * begin/end pair when it has zero length (both carry the args, so that the
 * pair's end matches its begin in speedscope). `args` (NULL: none) writes
 * the event's args. Timestamps are in µs with three decimals. */
void prof__exp_crange_write(prof__json *j, long long pid, uint64_t tid, const char *name, const char *cat,
                            uint64_t b_ns, uint64_t e_ns, prof__exp_crange_args args, const void *ctx);

/* The last end written on one track (zero-initialised: none yet). */
typedef struct prof__exp_crange_track {
  uint64_t last_end;
  int any;
} prof__exp_crange_track;

/* The begin to write for a range of track t that begins at b: b, or 1 ns
 * after the track's last end when b is not after it. */
uint64_t prof__exp_crange_track_begin(const prof__exp_crange_track *t, uint64_t b);
/* A range [b, e] of track t was written (a zero-length one, a begin/end
 * pair whose end is exact, does not count). */
void prof__exp_crange_track_end(prof__exp_crange_track *t, uint64_t b, uint64_t e);

/* An open range. */
typedef struct prof__exp_crange {
  uint32_t name;  /* string id in the trace */
  uint8_t cat;    /* prof_cat, PROF_CAT_OTHER when out of range */
  uint8_t tagged; /* a and b hold what the writer attached (e.g. a COMM record) */
  uint64_t begin; /* ns, on the writer's clock */
  uint64_t a, b;
} prof__exp_crange;

/* The open ranges of one thread, innermost last. Zero-initialised is empty;
 * ranges begun beyond the depth limit (the model's) are counted in overflow
 * and their ends skipped, as the model does. */
typedef struct prof__exp_crange_stack {
  prof__exp_crange *f;
  uint32_t depth, cap;
  uint64_t overflow;
  prof__exp_crange_track track; /* the thread's last end: begins move past it */
} prof__exp_crange_stack;

/* Called for each range as it closes, with its end time (writer's clock). */
typedef void (*prof__exp_crange_out)(void *ctx, const prof__exp_crange *r, uint64_t end);

/* Open range `name` of category `cat` at `ts` (1 ns after the thread's last
 * end when not after it). */
void prof__exp_crange_begin(prof__exp_crange_stack *s, uint32_t name, uint8_t cat, uint64_t ts);
/* The innermost open range (NULL: none, or it was not kept). */
prof__exp_crange *prof__exp_crange_top(prof__exp_crange_stack *s);
/* The end of range `name` at `ts`: closes the innermost of the 8 innermost
 * open ranges with that name, and first the ones it holds (which never
 * ended), each 1 ns after the one it holds. An end that matches none is
 * ignored (nothing to draw). */
void prof__exp_crange_end(prof__exp_crange_stack *s, uint32_t name, uint64_t ts, prof__exp_crange_out out, void *ctx);
/* Close every open range at `ts`, innermost first, 1 ns apart. */
void prof__exp_crange_close_all(prof__exp_crange_stack *s, uint64_t ts, prof__exp_crange_out out, void *ctx);
void prof__exp_crange_stack_free(prof__exp_crange_stack *s);

#endif
