/* ring.h — one single-producer, single-consumer ring of events per thread.
 *
 * The owning thread writes without locks or syscalls; the writer thread
 * reads. The ring holds 8-byte slots. The hot events (range begin/end,
 * marks: no payload) take one slot: the clock ticks since the thread's
 * previous event (32 bits) and the type, category and name packed in the
 * other 32. Anything else — a payload (`a`, `b`, `aux`), a gap of 2^32
 * ticks or more, a name id of 2^22 or more — takes an extended record of
 * five slots with every field in full. `head` counts slots and is written
 * only by the producer, `tail` only by the consumer.
 *
 * The producer's fast path is one compare of the new head against `limit`:
 * the slot count at which it must look again. Below the high-water mark
 * (half the ring) `limit` is the mark; crossing it wakes the writer once
 * (prof__ring_wake) and moves `limit` to the end of the ring; the mark is
 * armed again once the writer has drained the ring below it. A ring that is
 * really full either drops the event and counts it (the default), or, when
 * prof__ring_full_wait is set, waits for the writer: bounded, and never on
 * the writer thread itself, in a thread marked prof__ring_nowait (signal
 * handlers), after shutdown began or in a forked child (prof__ring_waitable
 * is 0 there).
 *
 * Range pairs stay whole: a recorded range begin holds back room for its
 * end (PROF_RING_END_SLOTS, enough for the longest record), counted in
 * `reserve`. Every other event, and every further begin, must fit in the
 * ring beside the reserved room; a begin that does not fit together with
 * its own end is refused (dropped and counted), and so is then its end. The
 * end of a recorded begin gives its reservation back and always fits. So a
 * ring never holds more than `capacity - reserve` slots of other events;
 * `limit` is kept below that (`limit` = base - reserve, where base is the
 * mark or the ring's end as seen from some tail).
 *
 * Memory: the slots are mapped, not zeroed: the kernel commits a page when
 * it is first written. The writer commits the pages ahead of a live
 * producer (prof__ring_commit_ahead), so a long-lived thread rarely takes a
 * page fault in an event, and a short-lived one commits only the pages it
 * used. prof__ring_reset makes a drained ring as good as new, keeping its
 * memory, for a thread that starts later (threads.c recycles them).
 */
#ifndef PROF_RING_H
#define PROF_RING_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

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
  uint64_t limit;       /* head may grow to this without looking at tail */
  uint64_t dropped;     /* events dropped because the ring was full */
  uint64_t last;        /* ticks of the last event written */
  prof__slot *slot;
  uint64_t mask;        /* slots - 1 (a power of two) */
  uint32_t high;        /* high-water mark in slots */
  uint32_t woken;       /* the writer was woken since the mark was armed */
  uint64_t waits;       /* times the producer waited for room */
  uint64_t stall_tail;  /* tail + 1 when a wait timed out (0: none) */
  uint64_t reserve;     /* slots held back for the ends of recorded open ranges */
  char pad[128 - 10 * 8]; /* keep the consumer's fields off the producer's line */
  /* consumer side */
  uint64_t tail;        /* next slot to read (published) */
  uint64_t cons_last;   /* ticks of the last event read */
  uint32_t waiting;     /* the producer sleeps on wake_seq */
  uint32_t wake_seq;    /* bumped by the consumer when it frees room for a waiter */
  uint64_t committed;   /* slots known committed: by prof__ring_commit_ahead, or written before a reset */
} prof__ring;

/* Slots a range begin holds back for its end: the longest record (a gap of
 * 2^32 ticks or more between begin and end needs the extended one). */
#define PROF_RING_END_SLOTS PROF_SLOT_EXT_SLOTS

/* Full-ring policy (0: drop and count, 1: wait for the writer). */
extern int prof__ring_full_wait;
/* 1 while a writer runs that can make room (cleared at shutdown and in a
 * forked child). */
extern int prof__ring_waitable;
/* Nonzero on threads that must never wait (the writer, signal handlers). */
extern __thread int prof__ring_nowait __attribute__((tls_model("initial-exec")));
/* Called once per high-water crossing (the writer's wake-up); may be NULL.
 * Must be async-signal-safe. */
extern void (*prof__ring_wake)(void);
/* Longest wait for room, in milliseconds, before the event is dropped. */
#define PROF_RING_WAIT_MS 1000

/* Allocate a ring of at least `bytes` (rounded up to a power of two number
 * of 8-byte slots, at least 16). Maps the memory without touching it.
 * Returns 0 or PROF_ENOMEM. */
int prof__ring_init(prof__ring *r, size_t bytes);
/* The capacity in slots prof__ring_init gives for `bytes`. */
size_t prof__ring_slots_for(size_t bytes);
void prof__ring_free(prof__ring *r);
/* A drained ring whose producer is gone: empty it as new, keeping its
 * memory (and the pages committed). */
void prof__ring_reset(prof__ring *r);
/* Consumer: commit the pages the producer will write next (half a ring
 * ahead of its head), so it does not fault on them. No-op once the whole
 * ring was committed, or where the kernel cannot do it (then the producer
 * commits pages by writing them, as before). */
void prof__ring_commit_ahead(prof__ring *r);

/* Out of line: past `limit` (the mark, or a full ring). Returns 1 when
 * there is room for `n` slots (after waiting, under the wait policy). */
int prof__ring_room_slow(prof__ring *r, uint64_t h, unsigned n);

/* Is there room for `n` slots? One compare on the fast path. */
static inline int prof__ring_room(prof__ring *r, uint64_t h, unsigned n) {
  if (PROF_LIKELY(h + n <= r->limit)) return 1;
  return prof__ring_room_slow(r, h, n);
}

/* Producer: count an event dropped (ring full, or its range's begin lost). */
static inline void prof__ring_drop(prof__ring *r) {
  __atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
}

/* Out of line: the five-slot record (payload, long gap, large name id). */
int prof__ring_put_ext(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux, uint32_t name,
                       uint64_t ts, uint64_t a, uint64_t b);

/* Write a one-slot event at head `h` (room checked) and publish it. */
static inline void prof__ring_store1(prof__ring *r, uint64_t h, uint8_t type, uint8_t cat, uint32_t name,
                                     uint64_t ts) {
  uint32_t w = (uint32_t)type | (uint32_t)cat << 6 | name << 10;
  r->slot[h & r->mask] = (ts - r->last) | (uint64_t)w << 32;
  r->last = ts;
  __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

/* Out of line: a one-slot event past `limit` (wake, wait or drop). */
int prof__ring_put1_slow(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name, uint64_t ts);

/* Append one event without payload; returns 1, or 0 when full (counted).
 * Everything past `limit` is a tail call, so the fast path saves nothing. */
static inline int prof__ring_put1(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name,
                                  uint64_t ts) {
  uint64_t dt = ts - r->last;
  if (PROF_UNLIKELY((dt >> 32) | (name >> PROF_SLOT_NAME_BITS)))
    return prof__ring_put_ext(r, type, cat, 0, name, ts, 0, 0);
  uint64_t h = r->head;
  if (PROF_UNLIKELY(h + 1 > r->limit)) return prof__ring_put1_slow(r, type, cat, name, ts);
  prof__ring_store1(r, h, type, cat, name, ts);
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

/* Out of line: a begin past `limit`, or one that needs the long record. */
int prof__ring_begin_slow(prof__ring *r, uint8_t cat, uint32_t name, uint64_t ts);

/* Append a range begin and hold back room for its end; returns 1, or 0
 * when the ring cannot hold both beside the ends already held back (the
 * begin is dropped and counted; its end must then be dropped too). */
static inline int prof__ring_put_begin(prof__ring *r, uint8_t cat, uint32_t name, uint64_t ts) {
  uint64_t dt = ts - r->last, h = r->head;
  if (PROF_UNLIKELY((dt >> 32) | (name >> PROF_SLOT_NAME_BITS) | (h + 1 + PROF_RING_END_SLOTS > r->limit)))
    return prof__ring_begin_slow(r, cat, name, ts);
  prof__ring_store1(r, h, PROF_EV_RANGE_BEGIN, cat, name, ts);
  r->reserve += PROF_RING_END_SLOTS;
  r->limit -= PROF_RING_END_SLOTS;
  return 1;
}

/* Append the end of a range whose begin was recorded: its held-back room
 * is given back first, so it always fits. */
static inline void prof__ring_put_end(prof__ring *r, uint32_t name, uint64_t ts) {
  r->reserve -= PROF_RING_END_SLOTS;
  r->limit += PROF_RING_END_SLOTS;
  prof__ring_put1(r, PROF_EV_RANGE_END, 0, name, ts);
}

/* Consumer: slots waiting to be read. */
static inline uint64_t prof__ring_count(const prof__ring *r) {
  return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
}
static inline uint64_t prof__ring_dropped(const prof__ring *r) {
  return __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
}
/* Times the producer waited for the writer to make room. */
static inline uint64_t prof__ring_waits(const prof__ring *r) {
  return __atomic_load_n(&r->waits, __ATOMIC_RELAXED);
}
/* Capacity in slots (= events without payload). */
static inline size_t prof__ring_capacity(const prof__ring *r) { return (size_t)r->mask + 1; }

/* Consumer: decode up to `max` events into `out`, release their slots, and
 * return how many events were decoded. */
size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max);

#endif
