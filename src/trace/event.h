/* event.h — the fixed-size event every producer writes and the trace stores.
 *
 * One layout serves the per-thread rings (where `ts` holds raw clock ticks)
 * and the reader (where `ts` is nanoseconds on CLOCK_MONOTONIC). Producers
 * added later (memory, CPU samples, model metrics) use new `type` values and
 * the generic `a`/`b` payload, so the trace format never breaks; large
 * records (stacks, GPU activity) travel in chunks of their own.
 */
#ifndef PROF_EVENT_H
#define PROF_EVENT_H

#include <stdint.h>

typedef struct prof__event {
  uint64_t ts;   /* ring: clock ticks; trace: ns (CLOCK_MONOTONIC) */
  uint8_t type;  /* PROF_EV_* */
  uint8_t cat;   /* PROF_CAT_* for ranges and marks; producer-defined otherwise */
  uint16_t aux;  /* small producer-defined value (0 for core events) */
  uint32_t name; /* string id (ranges, marks, counters) or stack id */
  uint64_t a;    /* payload, see the table below */
  uint64_t b;
} prof__event;

/* Event types. Values are part of the trace format: never renumber.
 *                          name          a                  b
 *  RANGE_BEGIN             range name    -                  -
 *  RANGE_END               range name    -                  -
 *  MARK                    mark name     -                  -
 *  COUNTER                 counter name  double bits        -
 *  STEP_BEGIN              -             step number        -
 *  STEP_END                -             step number        -
 * The other types belong to an event family, each defined once in its own
 * header that the producer and the reader both compile:
 *  ALLOC, FREE             trace/ev_mem.h     (modes, flags, pools, keys)
 *  SAMPLE                  trace/ev_sample.h  (stacks: trace/rec_stacks.h)
 *  SCALAR                  trace/ev_health.h  (histograms: trace/rec_hist.h)
 *  COMM                    trace/ev_comm.h
 *  GRAPH                   trace/ev_graph.h
 *  COUNTER of resources    trace/rec_res.h    (metric code and GPU in aux)
 *  GPU activity            trace/rec_gpu.h    (its own chunks)  */
enum {
  PROF_EV_NONE = 0,
  PROF_EV_RANGE_BEGIN = 1,
  PROF_EV_RANGE_END = 2,
  PROF_EV_MARK = 3,
  PROF_EV_COUNTER = 4,
  PROF_EV_STEP_BEGIN = 5,
  PROF_EV_STEP_END = 6,
  PROF_EV_ALLOC = 7,    /* name: stack id, a: address, b: size, aux: pool */
  PROF_EV_FREE = 8,     /* a: address, aux: pool */
  PROF_EV_SAMPLE = 9,   /* name: stack id, a: innermost range id, b: weight, aux: 0 cpu / 1 wall */
  PROF_EV_SCALAR = 10,  /* name: tag id, a: double bits (per-step metric) */
  PROF_EV_COMM = 11,    /* name: op name id, a: bytes; aux 0 (a call): b = comm size | (peer+1) << 32;
                           aux 1 (a nonblocking op completed): b = hidden ns (docs/multi-rank.md) */
  PROF_EV_GRAPH = 12,   /* model graph (docs/graph.md); aux 0 edge: name = from id, a = to id;
                           aux 1 node: name = node id, a = kind id, b = parent id (0: none);
                           aux 2 node size: name = node id, a = parameters, b = parameter bytes */
  PROF_EV_TYPE_MAX = 63
};

/* Doubles travel in the `a` field bit for bit. */
static inline uint64_t prof__f64_bits(double v) {
  union { double d; uint64_t u; } x;
  x.d = v;
  return x.u;
}
static inline double prof__bits_f64(uint64_t u) {
  union { double d; uint64_t u; } x;
  x.u = u;
  return x.d;
}

#endif /* PROF_EVENT_H */
