/* ring.c — allocation (mapped, committed lazily and ahead of the producer
 * by the consumer), reuse, the extended (five-slot) record, the producer's
 * slow path (high-water wake-up, room held back for range ends, waiting for
 * room on a full ring) and the consumer side of the event ring (ring.h).
 *
 * Waiting uses a futex on the ring's wake_seq: the producer announces itself
 * in `waiting`, the consumer bumps wake_seq and wakes it after releasing
 * slots. Both sides order their store and their load with seq_cst, so a
 * wake is never lost; every sleep is also bounded (1 ms), and the whole wait
 * by PROF_RING_WAIT_MS. Everything here is async-signal-safe.
 */
#include "ring.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mlprof.h"

int prof__ring_full_wait;
int prof__ring_waitable;
__thread int prof__ring_nowait __attribute__((tls_model("initial-exec")));
void (*prof__ring_wake)(void);

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define COMMIT_STEP 8192u /* slots (64 KiB): the least the consumer commits at once */

size_t prof__ring_slots_for(size_t bytes) {
  size_t n = 16;
  while (n * sizeof(prof__slot) < bytes && n < ((size_t)1 << 31)) n <<= 1;
  return n;
}

int prof__ring_init(prof__ring *r, size_t bytes) {
  memset(r, 0, sizeof *r);
  size_t n = prof__ring_slots_for(bytes);
  /* Mapped, not zeroed: a thread that records a few events commits one
   * page, not the whole ring (its first event used to cost a megabyte of
   * page faults). */
  void *p = mmap(NULL, n * sizeof(prof__slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return PROF_ENOMEM;
  r->slot = p;
  r->mask = n - 1;
  r->high = (uint32_t)(n / 2);
  r->limit = r->high;
  return 0;
}

void prof__ring_reset(prof__ring *r) {
  prof__slot *slot = r->slot;
  /* The producer's writes committed the pages up to its head (all of them
   * after a lap); the consumer may have committed more. */
  uint64_t mask = r->mask, touched = r->head > mask ? mask + 1 : r->head;
  uint64_t committed = touched > r->committed ? touched : r->committed;
  memset(r, 0, sizeof *r);
  r->slot = slot;
  r->mask = mask;
  r->committed = committed;
  r->high = (uint32_t)((mask + 1) / 2);
  r->limit = r->high;
}

void prof__ring_commit_ahead(prof__ring *r) {
  uint64_t cap = r->mask + 1, done = r->committed;
  if (done >= cap) return;
  uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  /* The lead grows with what the producer wrote: a thread with a few
   * events gets one step, a busy one the half ring it may write before it
   * wakes the consumer again. */
  uint64_t lead = h < COMMIT_STEP ? COMMIT_STEP : h < r->high ? h : r->high;
  uint64_t want = (h + lead + COMMIT_STEP - 1) / COMMIT_STEP * COMMIT_STEP;
  if (h >= cap || want > cap) want = cap;
  if (want <= done) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)(r->slot + done) & ~(page - 1);
  uintptr_t hi = (uintptr_t)(r->slot + want);
  /* Faults the pages in without writing them: no race with the producer.
   * Where the kernel cannot, the producer's own writes commit them. */
  if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0) want = cap;
  r->committed = want;
}

static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The ring is full: wait for the consumer to free room for `n` slots, when
 * the policy and the thread allow it. Returns the tail seen last. */
static uint64_t wait_room(prof__ring *r, uint64_t h, unsigned n, uint64_t t) {
  uint64_t cap = r->mask + 1;
  if (!__atomic_load_n(&prof__ring_full_wait, __ATOMIC_RELAXED) || prof__ring_nowait ||
      !__atomic_load_n(&prof__ring_waitable, __ATOMIC_ACQUIRE))
    return t;
  if (r->stall_tail == t + 1) return t; /* timed out before and nothing moved since: the writer is stuck */
  __atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELAXED);
  uint64_t deadline = mono_ms() + PROF_RING_WAIT_MS;
  __atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
  for (;;) {
    uint32_t seq = __atomic_load_n(&r->wake_seq, __ATOMIC_SEQ_CST);
    t = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
    if (h + n - t <= cap || !__atomic_load_n(&prof__ring_waitable, __ATOMIC_ACQUIRE)) break;
    if (mono_ms() >= deadline) {
      r->stall_tail = t + 1;
      break;
    }
    void (*wake)(void) = __atomic_load_n(&prof__ring_wake, __ATOMIC_ACQUIRE);
    if (wake) wake();
    struct timespec ms = {0, 1000000};
    syscall(SYS_futex, &r->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ms, NULL, 0);
  }
  __atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
  return t;
}

/* Room for `n` slots beside the room held back for range ends (`reserve`,
 * ring.h): `limit` becomes the mark or the ring's end, less the reserve. */
int prof__ring_room_slow(prof__ring *r, uint64_t h, unsigned n) {
  uint64_t cap = r->mask + 1, need = n + r->reserve;
  uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
  if (h + need - t <= r->high) { /* below the mark: arm it again */
    r->woken = 0;
    r->limit = t + r->high - r->reserve;
    return 1;
  }
  if (!r->woken) { /* crossed the mark: wake the writer, once */
    r->woken = 1;
    void (*wake)(void) = __atomic_load_n(&prof__ring_wake, __ATOMIC_ACQUIRE);
    if (wake) wake();
  }
  if (h + need - t > cap) t = wait_room(r, h, (unsigned)need, t);
  if (h + need - t <= r->high) {
    r->woken = 0;
    r->limit = t + r->high - r->reserve;
  } else {
    r->limit = t + cap - r->reserve; /* reserve <= cap - (h - t): never below tail */
  }
  return h + need - t <= cap;
}

void prof__ring_free(prof__ring *r) {
  if (r->slot) munmap(r->slot, (r->mask + 1) * sizeof(prof__slot));
  r->slot = NULL;
}

int prof__ring_put1_slow(prof__ring *r, uint8_t type, uint8_t cat, uint32_t name, uint64_t ts) {
  uint64_t h = r->head;
  if (!prof__ring_room_slow(r, h, 1)) {
    prof__ring_drop(r);
    return 0;
  }
  prof__ring_store1(r, h, type, cat, name, ts);
  return 1;
}

static inline void store_ext(prof__ring *r, uint64_t h, uint8_t type, uint8_t cat, uint16_t aux, uint32_t name,
                             uint64_t ts, uint64_t a, uint64_t b) {
  uint32_t w = (uint32_t)type | (uint32_t)cat << 6 | PROF_SLOT_EXT;
  r->slot[h & r->mask] = (uint64_t)w << 32;
  r->slot[(h + 1) & r->mask] = ts;
  r->slot[(h + 2) & r->mask] = (uint64_t)name | (uint64_t)aux << 32;
  r->slot[(h + 3) & r->mask] = a;
  r->slot[(h + 4) & r->mask] = b;
  r->last = ts;
  __atomic_store_n(&r->head, h + PROF_SLOT_EXT_SLOTS, __ATOMIC_RELEASE);
}

/* Past `limit`: kept apart (and not inlined) so the fast path below saves
 * no registers. */
__attribute__((noinline)) static int put_ext_slow(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux,
                                                  uint32_t name, uint64_t ts, uint64_t a, uint64_t b) {
  uint64_t h = r->head;
  if (!prof__ring_room_slow(r, h, PROF_SLOT_EXT_SLOTS)) {
    prof__ring_drop(r);
    return 0;
  }
  store_ext(r, h, type, cat, aux, name, ts, a, b);
  return 1;
}

int prof__ring_begin_slow(prof__ring *r, uint8_t cat, uint32_t name, uint64_t ts) {
  uint64_t h = r->head;
  unsigned n = ((ts - r->last) >> 32) | (name >> PROF_SLOT_NAME_BITS) ? PROF_SLOT_EXT_SLOTS : 1;
  if (h + n + PROF_RING_END_SLOTS > r->limit && !prof__ring_room_slow(r, h, n + PROF_RING_END_SLOTS)) {
    prof__ring_drop(r);
    return 0;
  }
  if (n == 1) prof__ring_store1(r, h, PROF_EV_RANGE_BEGIN, cat, name, ts);
  else store_ext(r, h, PROF_EV_RANGE_BEGIN, cat, 0, name, ts, 0, 0);
  r->reserve += PROF_RING_END_SLOTS;
  r->limit -= PROF_RING_END_SLOTS;
  return 1;
}

int prof__ring_put_ext(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux, uint32_t name,
                       uint64_t ts, uint64_t a, uint64_t b) {
  uint64_t h = r->head;
  if (PROF_UNLIKELY(h + PROF_SLOT_EXT_SLOTS > r->limit)) return put_ext_slow(r, type, cat, aux, name, ts, a, b);
  store_ext(r, h, type, cat, aux, name, ts, a, b);
  return 1;
}

size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max) {
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->tail, last = r->cons_last;
  size_t n = 0;
  while (tail < head && n < max) {
    uint64_t s = r->slot[tail & r->mask];
    uint32_t w = (uint32_t)(s >> 32);
    prof__event *e = &out[n++];
    e->type = (uint8_t)(w & 63);
    e->cat = (uint8_t)((w >> 6) & 7);
    if (w & PROF_SLOT_EXT) {
      uint64_t na = r->slot[(tail + 2) & r->mask];
      e->ts = r->slot[(tail + 1) & r->mask];
      e->name = (uint32_t)na;
      e->aux = (uint16_t)(na >> 32);
      e->a = r->slot[(tail + 3) & r->mask];
      e->b = r->slot[(tail + 4) & r->mask];
      tail += PROF_SLOT_EXT_SLOTS;
    } else {
      e->ts = last + (uint32_t)s;
      e->name = w >> 10;
      e->aux = 0;
      e->a = e->b = 0;
      tail += 1;
    }
    last = e->ts;
  }
  r->cons_last = last;
  __atomic_store_n(&r->tail, tail, __ATOMIC_SEQ_CST);
  if (n && __atomic_load_n(&r->waiting, __ATOMIC_SEQ_CST)) { /* a producer waits for room */
    __atomic_fetch_add(&r->wake_seq, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &r->wake_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  }
  return n;
}
