/* ring.c — allocation and the consumer side of the event ring (ring.h). */
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

size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max) {
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->tail;
  size_t n = 0;
  while (tail < head && n < max) {
    const prof__slot *s = &r->slot[tail & r->mask];
    prof__event *e = &out[n++];
    e->ts = s->h.ts;
    e->name = s->h.name;
    e->type = s->h.type & (uint8_t)~PROF_SLOT_PAYLOAD;
    e->cat = s->h.cat;
    e->aux = s->h.aux;
    if (s->h.type & PROF_SLOT_PAYLOAD) {
      const prof__slot *p = &r->slot[(tail + 1) & r->mask];
      e->a = p->p.a;
      e->b = p->p.b;
      tail += 2;
    } else {
      e->a = e->b = 0;
      tail += 1;
    }
  }
  __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
  return n;
}
