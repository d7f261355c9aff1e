/* ring.c — allocation, the extended (five-slot) record, and the consumer
 * side of the event ring (ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

#include "mlprof.h"

int prof__ring_init(prof__ring *r, size_t bytes) {
  memset(r, 0, sizeof *r);
  size_t n = 16;
  while (n * sizeof(prof__slot) < bytes && n < ((size_t)1 << 31)) n <<= 1;
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(prof__slot)) != 0) return PROF_ENOMEM;
  memset(p, 0, n * sizeof(prof__slot)); /* touch pages now, not on the hot path */
  r->slot = p;
  r->mask = n - 1;
  return 0;
}

void prof__ring_free(prof__ring *r) {
  free(r->slot);
  r->slot = NULL;
}

int prof__ring_put_ext(prof__ring *r, uint8_t type, uint8_t cat, uint16_t aux, uint32_t name,
                       uint64_t ts, uint64_t a, uint64_t b) {
  uint64_t h = r->head;
  if (PROF_UNLIKELY(!prof__ring_room(r, h, PROF_SLOT_EXT_SLOTS))) {
    prof__ring_drop(r);
    return 0;
  }
  uint32_t w = (uint32_t)type | (uint32_t)cat << 6 | PROF_SLOT_EXT;
  r->slot[h & r->mask] = (uint64_t)w << 32;
  r->slot[(h + 1) & r->mask] = ts;
  r->slot[(h + 2) & r->mask] = (uint64_t)name | (uint64_t)aux << 32;
  r->slot[(h + 3) & r->mask] = a;
  r->slot[(h + 4) & r->mask] = b;
  r->last = ts;
  __atomic_store_n(&r->head, h + PROF_SLOT_EXT_SLOTS, __ATOMIC_RELEASE);
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
  __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
  return n;
}
