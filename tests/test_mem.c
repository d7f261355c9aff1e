/* test_mem.c — the memory module's own pieces, without the interposer
 * (tests link the static library): mode names, the counting hot path and
 * its re-entrancy guard, thread-exit folding, the exponential sampler, RSS
 * and the pool API's errors. End-to-end behaviour is in test_mem_run.c.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>

#include <cmocka.h>

#include "mlprof.h"
#include "mem/glibc_chunk.h"
#include "mem/mem.h"

static char block[256]; /* stands for a heap block: only its address is used */

static int64_t live_now(void) {
  prof__mem_totals t;
  prof__mem_totals_get(&t);
  return t.live;
}

static void mode_names_round_trip(void **state) {
  (void)state;
  for (int m = PROF_MEM_OFF; m <= PROF_MEM_FULL; m++)
    assert_int_equal(prof__ev_mem_mode_parse(prof__ev_mem_mode_name(m)), m);
  assert_int_equal(prof__ev_mem_mode_parse("everything"), -1);
  assert_int_equal(prof__ev_mem_mode_parse(NULL), -1);
}

static void counts_add_usable_bytes_and_calls(void **state) {
  (void)state;
  prof__mem_mode = PROF_MEM_COUNTS;
  prof__mem_totals a, b;
  prof__mem_totals_get(&a);
  prof__mem_on_alloc(block, 100, 112, NULL);
  prof__mem_totals_get(&b);
  assert_int_equal(b.live - a.live, 112);
  assert_int_equal(b.allocs - a.allocs, 1);
  assert_int_equal(b.bytes - a.bytes, 100);
  prof__mem_on_free(block, 112, NULL);
  prof__mem_totals_get(&b);
  assert_int_equal(b.live, a.live);
  assert_int_equal(b.frees - a.frees, 1);
}

static void profiler_allocations_are_never_counted(void **state) {
  (void)state;
  prof__mem_mode = PROF_MEM_COUNTS;
  int64_t before = live_now();
  prof__guard_begin(); /* nested guard: still inside after one end */
  prof__guard_begin();
  prof__mem_on_alloc(block, 50, 64, NULL);
  prof__guard_end();
  prof__mem_on_alloc(block, 50, 64, NULL);
  prof__guard_end();
  assert_int_equal(live_now(), before);
  /* a call returning into the profiler's own code is not counted either */
  prof__mem_text_lo = (uintptr_t)block;
  prof__mem_text_hi = (uintptr_t)block + sizeof block;
  prof__mem_on_alloc(block, 50, 64, block + 10);
  prof__mem_on_free(block, 64, block + 10);
  prof__mem_text_lo = prof__mem_text_hi = 0;
  assert_int_equal(live_now(), before);
  prof__mem_on_alloc(block, 50, 64, block + 10); /* outside the range now */
  assert_int_equal(live_now(), before + 64);
  prof__mem_on_free(block, 64, NULL);
}

static void off_mode_counts_nothing(void **state) {
  (void)state;
  prof__mem_mode = PROF_MEM_OFF;
  int64_t before = live_now();
  prof__mem_on_alloc(block, 10, 16, NULL);
  assert_int_equal(live_now(), before);
  prof__mem_mode = PROF_MEM_COUNTS;
}

static void *alloc_and_exit(void *arg) {
  (void)arg;
  prof__mem_on_alloc(block, 1000, 1008, NULL);
  return NULL;
}

static void thread_exit_keeps_its_counts(void **state) {
  (void)state;
  prof__mem_mode = PROF_MEM_COUNTS;
  int64_t before = live_now();
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, alloc_and_exit, NULL), 0);
  pthread_join(t, NULL);
  assert_int_equal(live_now(), before + 1008); /* folded into the shared totals */
  prof__mem_on_free(block, 1008, NULL);        /* freed by another thread */
  assert_int_equal(live_now(), before);
}

static void sampling_intervals_have_the_configured_mean(void **state) {
  (void)state;
  prof__mem_tc tc = {.rng = 12345};
  double sum = 0, sq = 0;
  enum { N = 200000 };
  for (int i = 0; i < N; i++) {
    prof__mem_sample_draw(&tc);
    assert_true(tc.countdown >= 0);
    sum += (double)tc.countdown;
    sq += (double)tc.countdown * (double)tc.countdown;
  }
  double r = (double)prof__mem_sample_bytes(), mean = sum / N, sd = sqrt(sq / N - mean * mean);
  assert_true(fabs(mean - r) < 0.02 * r); /* exponential: mean R ... */
  assert_true(fabs(sd - r) < 0.05 * r);   /* ... and standard deviation R */
}

static void pool_api_before_init_fails_cleanly(void **state) {
  (void)state;
  assert_int_equal(prof_mem_pool("arena"), PROF_ESTATE);
  assert_int_equal(prof_mem_pool(NULL), PROF_EINVAL);
  prof_mem_alloc(1, block, 10); /* ignored, no crash */
  prof_mem_free(1, block);
}

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

/* The interposer reads glibc's chunk header instead of calling
 * malloc_usable_size(): both must agree for small, large (mmapped) and
 * aligned blocks. Skipped when malloc is not glibc's (a sanitizer's). */
static void glibc_chunk_header_gives_the_usable_size(void **state) {
  (void)state;
  void *(*volatile m)(size_t) = malloc;
  void (*volatile f)(void *) = free;
  if (m != __libc_malloc || f != __libc_free) skip();
  static const size_t sizes[] = {0, 1, 8, 24, 25, 100, 1000, 4096, 70000, 200000, 1u << 20, 5u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = malloc(sizes[i]);
    assert_non_null(p);
    assert_int_equal(prof__glibc_usable(p), malloc_usable_size(p));
    void *q = realloc(p, sizes[i] * 2 + 1);
    assert_non_null(q);
    assert_int_equal(prof__glibc_usable(q), malloc_usable_size(q));
    free(q);
    void *c = calloc(1, sizes[i] + 3);
    assert_int_equal(prof__glibc_usable(c), malloc_usable_size(c));
    free(c);
    for (size_t align = 32; align <= 8192; align *= 16) {
      void *a = NULL;
      assert_int_equal(posix_memalign(&a, align, sizes[i] + 1), 0);
      assert_int_equal(prof__glibc_usable(a), malloc_usable_size(a));
      free(a);
      a = aligned_alloc(align, align * 3);
      assert_int_equal(prof__glibc_usable(a), malloc_usable_size(a));
      free(a);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mode_names_round_trip),
      cmocka_unit_test(counts_add_usable_bytes_and_calls),
      cmocka_unit_test(profiler_allocations_are_never_counted),
      cmocka_unit_test(off_mode_counts_nothing),
      cmocka_unit_test(thread_exit_keeps_its_counts),
      cmocka_unit_test(sampling_intervals_have_the_configured_mean),
      cmocka_unit_test(pool_api_before_init_fails_cleanly),
      cmocka_unit_test(glibc_chunk_header_gives_the_usable_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
