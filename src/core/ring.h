/* ring.h — one single-producer, single-consumer ring of fixed-size events.
 *
 * The owning thread writes without locks or syscalls; the writer thread
 * reads. A full ring drops the event and counts it: the producer never
 * waits. `head` is written only by the producer and `tail` only by the
 * consumer; each side caches the other's index to touch shared cache lines
 * as rarely as possible.
 */
#ifndef PROF_RING_H
#define PROF_RING_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define PROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define PROF_UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef struct prof__ring {
  /* producer side */
  uint64_t head;        /* next slot to write (published with release) */
  uint64_t tail_cache;  /* producer's last view of tail */
  uint64_t dropped;     /* events dropped because the ring was full */
  prof__event *ev;
  uint64_t mask;        /* capacity - 1 (capacity is a power of two) */
  char pad[64 - 5 * 8];
  /* consumer side */
  uint64_t tail;        /* next slot to read (published with release) */
} prof__ring;

/* Allocate a ring of at least `bytes` of events (rounded to a power of two
 * number of events, at least 16). Returns 0 or PROF_ENOMEM. */
int prof__ring_init(prof__ring *r, size_t bytes);
void prof__ring_free(prof__ring *r);

/* Append one event with a producer value in `aux`; returns 1, or 0 when
 * the ring was full (counted). */
static inline int prof__ring_put_aux(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux,
                                     uint32_t name, uint64_t ts, uint64_t a, uint64_t b) {
  uint64_t h = r->head;
  if (PROF_UNLIKELY(h - r->tail_cache > r->mask)) {
    r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (h - r->tail_cache > r->mask) {
      __atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
      return 0;
    }
  }
  prof__event *e = &r->ev[h & r->mask];
  e->ts = ts;
  e->type = type;
  e->cat = cat;
  e->aux = aux;
  e->name = name;
  e->a = a;
  e->b = b;
  __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
  return 1;
}

/* Append one event; returns 1, or 0 when the ring was full (counted). */
static inline int prof__ring_put(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name,
                                 uint64_t ts, uint64_t a, uint64_t b) {
  return prof__ring_put_aux(r, type, cat, 0, name, ts, a, b);
}

/* Producer: count an event dropped for another reason (e.g. its range's
 * begin was dropped). */
static inline void prof__ring_drop(prof__ring *r) {
  __atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
}

/* Consumer: events available to read. */
static inline uint64_t prof__ring_count(const prof__ring *r) {
  return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
}
static inline uint64_t prof__ring_dropped(const prof__ring *r) {
  return __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
}
static inline size_t prof__ring_capacity(const prof__ring *r) { return (size_t)r->mask + 1; }

/* Consumer: copy up to `max` events into `out`, release their slots, and
 * return how many were copied. */
size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max);

#endif
