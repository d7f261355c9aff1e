/* ring.h — one single-producer, single-consumer ring of events per thread.
 *
 * The owning thread writes without locks or syscalls; the writer thread
 * reads. A full ring drops the event and counts it: the producer never
 * waits. The ring holds 8-byte slots. The hot events (range begin/end,
 * marks: no payload) take one slot: the clock ticks since the thread's
 * previous event (32 bits) and the type, category and name packed in the
 * other 32. Anything else — a payload (`a`, `b`, `aux`), a gap of 2^32
 * ticks or more, a name id of 2^22 or more — takes an extended record of
 * five slots with every field in full. `head` counts slots and is written
 * only by the producer, `tail` only by the consumer.
 */
#ifndef PROF_RING_H
#define PROF_RING_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define PROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define PROF_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Packed word of a short slot: type (6 bits), category (3), extended (1),
 * name (22). */
#define PROF_SLOT_EXT (1u << 9)
#define PROF_SLOT_NAME_BITS 22
#define PROF_SLOT_EXT_SLOTS 5 /* header, ts, name+aux, a, b */

typedef uint64_t prof__slot;

typedef struct prof__ring {
  /* producer side */
  uint64_t head;        /* next slot to write (published with release) */
  uint64_t tail_cache;  /* producer's last view of tail */
  uint64_t dropped;     /* events dropped because the ring was full */
  uint64_t last;        /* ticks of the last event written */
  prof__slot *slot;
  uint64_t mask;        /* slots - 1 (a power of two) */
  char pad[64 - 6 * 8];
  /* consumer side */
  uint64_t tail;        /* next slot to read (published with release) */
  uint64_t cons_last;   /* ticks of the last event read */
} prof__ring;

/* Allocate a ring of at least `bytes` (rounded up to a power of two number
 * of 16-byte slots, at least 16). Returns 0 or PROF_ENOMEM. */
int prof__ring_init(prof__ring *r, size_t bytes);
void prof__ring_free(prof__ring *r);

/* Is there room for `n` slots? Refreshes the cached tail when needed. */
static inline int prof__ring_room(prof__ring *r, uint64_t h, unsigned n) {
  if (PROF_LIKELY(h + n - r->tail_cache <= r->mask + 1)) return 1;
  r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
  return h + n - r->tail_cache <= r->mask + 1;
}

/* Producer: count an event dropped (ring full, or its range's begin lost). */
static inline void prof__ring_drop(prof__ring *r) {
  __atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
}

/* Out of line: the five-slot record (payload, long gap, large name id). */
int prof__ring_put_ext(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux, uint32_t name,
                       uint64_t ts, uint64_t a, uint64_t b);

/* Append one event without payload; returns 1, or 0 when full (counted). */
static inline int prof__ring_put1(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name,
                                  uint64_t ts) {
  uint64_t dt = ts - r->last;
  if (PROF_UNLIKELY((dt >> 32) | (name >> PROF_SLOT_NAME_BITS)))
    return prof__ring_put_ext(r, type, cat, 0, name, ts, 0, 0);
  uint64_t h = r->head;
  if (PROF_UNLIKELY(!prof__ring_room(r, h, 1))) {
    prof__ring_drop(r);
    return 0;
  }
  uint32_t w = (uint32_t)type | (uint32_t)cat << 6 | name << 10;
  r->slot[h & r->mask] = dt | (uint64_t)w << 32;
  r->last = ts;
  __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
  return 1;
}

/* Append one event with `aux` and a payload; returns 1, or 0 when full. */
static inline int prof__ring_put_aux(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux,
                                     uint32_t name, uint64_t ts, uint64_t a, uint64_t b) {
  return prof__ring_put_ext(r, type, cat, aux, name, ts, a, b);
}

/* Append one event; payload-free events take one slot. */
static inline int prof__ring_put(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name,
                                 uint64_t ts, uint64_t a, uint64_t b) {
  if (a == 0 && b == 0) return prof__ring_put1(r, type, cat, name, ts);
  return prof__ring_put_ext(r, type, cat, 0, name, ts, a, b);
}

/* Consumer: slots waiting to be read. */
static inline uint64_t prof__ring_count(const prof__ring *r) {
  return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
}
static inline uint64_t prof__ring_dropped(const prof__ring *r) {
  return __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
}
/* Capacity in slots (= events without payload). */
static inline size_t prof__ring_capacity(const prof__ring *r) { return (size_t)r->mask + 1; }

/* Consumer: decode up to `max` events into `out`, release their slots, and
 * return how many events were decoded. */
size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max);

#endif
