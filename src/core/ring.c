/* ring.c — allocation and the consumer side of the event ring (ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

#include "mlprof.h"

int prof__ring_init(prof__ring *r, size_t bytes) {
  memset(r, 0, sizeof *r);
  size_t n = 16;
  while (n * sizeof(prof__event) < bytes && n < ((size_t)1 << 30)) n <<= 1;
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(prof__event)) != 0) return PROF_ENOMEM;
  memset(p, 0, n * sizeof(prof__event)); /* touch pages now, not on the hot path */
  r->ev = p;
  r->mask = n - 1;
  return 0;
}

void prof__ring_free(prof__ring *r) {
  free(r->ev);
  r->ev = NULL;
}

size_t prof__ring_read(prof__ring *r, prof__event *out, size_t max) {
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->tail;
  size_t n = (size_t)(head - tail);
  if (n > max) n = max;
  for (size_t i = 0; i < n; i++) out[i] = r->ev[(tail + i) & r->mask];
  __atomic_store_n(&r->tail, tail + n, __ATOMIC_RELEASE);
  return n;
}
