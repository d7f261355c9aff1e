/* array.c — the growable-array helper (see array.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/util/array.h"
#include "trace/hugepage.h"

void *prof__arr_room(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap : 4;
  while (c < need) {
    if (c > SIZE_MAX / 2) return NULL;
    c *= 2;
  }
  if (elem && c > SIZE_MAX / elem) return NULL;
  void *q = prof__hugepage_realloc(p, *cap * elem, c * elem);
  if (!q) return NULL;
  memset((char *)q + *cap * elem, 0, (c - *cap) * elem);
  *cap = c;
  return q;
}

int prof__arr_grow_slow(void **arr, size_t *cap, size_t need, size_t elem) {
  void *q = prof__arr_room(*arr, cap, need, elem);
  if (!q) return -1;
  *arr = q;
  return 0;
}
