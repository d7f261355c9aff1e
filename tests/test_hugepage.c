/* test_hugepage.c — large buffers on huge pages (src/trace/hugepage.h):
 * small requests are plain heap blocks, large ones are aligned to and
 * rounded up to whole huge pages; calloc zeroes, realloc keeps the content
 * both below and across the huge-page size, and advising any block leaves
 * its content as it was. Whether the kernel grants huge pages is not
 * tested: it may not offer them, and the content is the contract. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace/hugepage.h"

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31 + seed);
}

static int same(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(i * 31 + seed)) return 0;
  return 1;
}

static void large_blocks_are_aligned_and_usable(void **state) {
  (void)state;
  size_t n = PROF_HUGEPAGE * 2 + 12345;
  unsigned char *p = prof__hugepage_alloc(n);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % PROF_HUGEPAGE, 0);
  fill(p, n, 7);
  assert_true(same(p, n, 7));
  free(p);
  unsigned char *s = prof__hugepage_alloc(100);
  assert_non_null(s);
  fill(s, 100, 3);
  assert_true(same(s, 100, 3));
  free(s);
}

static void calloc_zeroes_both_sizes(void **state) {
  (void)state;
  size_t sizes[] = {64, PROF_HUGEPAGE - 8, PROF_HUGEPAGE * 3 + 100};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    unsigned char *p = prof__hugepage_calloc(sizes[k]);
    assert_non_null(p);
    for (size_t i = 0; i < sizes[k]; i++)
      if (p[i]) fail_msg("byte %zu of %zu is %d", i, sizes[k], p[i]);
    free(p);
  }
}

/* Growing from small to large and on keeps every byte written so far. */
static void realloc_keeps_content_across_the_threshold(void **state) {
  (void)state;
  size_t n = 1000;
  unsigned char *p = prof__hugepage_realloc(NULL, 0, n);
  assert_non_null(p);
  fill(p, n, 11);
  while (n < PROF_HUGEPAGE * 4) {
    size_t m = n * 3;
    unsigned char *q = prof__hugepage_realloc(p, n, m);
    assert_non_null(q);
    assert_true(same(q, n, 11));
    fill(q, m, 11);
    p = q, n = m;
  }
  unsigned char *q = prof__hugepage_realloc(p, n, 500); /* shrinking keeps the head */
  assert_non_null(q);
  assert_true(same(q, 500, 11));
  free(q);
}

static void advice_keeps_content(void **state) {
  (void)state;
  size_t n = PROF_HUGEPAGE * 3;
  unsigned char *p = malloc(n);
  assert_non_null(p);
  fill(p, n, 5);
  prof__hugepage_advise(p, n);
  prof__hugepage_advise(p + 1, 10); /* too small: nothing to do */
  prof__hugepage_advise(NULL, n);
  assert_true(same(p, n, 5));
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(large_blocks_are_aligned_and_usable),
      cmocka_unit_test(calloc_zeroes_both_sizes),
      cmocka_unit_test(realloc_keeps_content_across_the_threshold),
      cmocka_unit_test(advice_keeps_content),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
