/* hugepage.c — large buffers on huge pages (hugepage.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trace/hugepage.h"

void prof__hugepage_advise(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t b = ((uintptr_t)p + PROF_HUGEPAGE - 1) & ~(uintptr_t)(PROF_HUGEPAGE - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(PROF_HUGEPAGE - 1);
  if (p && e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
  (void)p, (void)n;
#endif
}

void *prof__hugepage_alloc(size_t n) {
  if (n < PROF_HUGEPAGE) return malloc(n ? n : 1);
  if (n > SIZE_MAX - PROF_HUGEPAGE) return NULL;
  size_t whole = (n + PROF_HUGEPAGE - 1) & ~(PROF_HUGEPAGE - 1);
  void *p = aligned_alloc(PROF_HUGEPAGE, whole);
  prof__hugepage_advise(p, whole);
  return p;
}

void *prof__hugepage_calloc(size_t n) {
  if (n < PROF_HUGEPAGE) return calloc(1, n ? n : 1);
  void *p = prof__hugepage_alloc(n);
  if (p) memset(p, 0, n);
  return p;
}

void *prof__hugepage_realloc(void *p, size_t old, size_t n) {
  if (n < PROF_HUGEPAGE) return realloc(p, n ? n : 1);
  void *q = prof__hugepage_alloc(n);
  if (!q) return NULL;
  if (p) memcpy(q, p, old < n ? old : n);
  free(p);
  return q;
}
