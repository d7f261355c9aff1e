/* test_spill.c — the analyzer's spilling arrays (util/spill.h): items come
 * back in append order across the temporary file and memory, memory stays
 * within the budget, and a missing file, a failed write or a failed read
 * degrade as documented. The temporary file's calls are mocked. */
// wrap: tmpfile pwrite pread
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/util/spill.h"

typedef struct item {
  uint64_t a;
  double b;
} item;

static int no_tmpfile;     /* tmpfile() returns NULL */
static int writes_left = -1; /* pwrite fails once this reaches 0 (-1: never) */
static int fail_reads;     /* pread fails */

FILE *__real_tmpfile(void);
FILE *__wrap_tmpfile(void) { return no_tmpfile ? NULL : __real_tmpfile(); }

ssize_t __real_pwrite(int fd, const void *b, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *b, size_t n, off_t off) {
  if (writes_left == 0) return -1;
  if (writes_left > 0) writes_left--;
  return __real_pwrite(fd, b, n, off);
}

ssize_t __real_pread(int fd, void *b, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *b, size_t n, off_t off) {
  return fail_reads ? -1 : __real_pread(fd, b, n, off);
}

static int reset(void **state) {
  (void)state;
  no_tmpfile = 0;
  writes_left = -1;
  fail_reads = 0;
  return 0;
}

static item nth(uint64_t k, int which) { return (item){k * 2 + (uint64_t)which, (double)k / 3 + which}; }

/* Push n items to each of two arrays, interleaved. */
static void fill(prof__spill_pool *p, prof__spill *v, size_t n) {
  for (size_t k = 0; k < n; k++)
    for (int w = 0; w < 2; w++) {
      item x = nth(k, w);
      assert_int_equal(prof__spill_push(p, &v[w], &x), 0);
    }
}

/* Every item of array `which` in order; returns how many came back. */
static size_t check_order(prof__spill_pool *p, const prof__spill *v, int which, int *err) {
  prof__spill_iter it;
  prof__spill_iter_begin(&it, p, v);
  size_t k = 0;
  for (const item *x; (x = prof__spill_next(&it)); k++) {
    item want = nth(k, which);
    assert_true(x->a == want.a && x->b == want.b);
  }
  *err = prof__spill_iter_end(&it);
  return k;
}

static void items_come_back_in_order_across_the_file(void **state) {
  (void)state;
  enum { N = 200000 };
  const size_t budget = 64 * 1024;
  prof__spill_pool p;
  prof__spill_pool_init(&p, budget);
  prof__spill v[2] = {PROF_SPILL_INIT(sizeof(item)), PROF_SPILL_INIT(sizeof(item))};
  fill(&p, v, N);
  assert_non_null(p.file);
  assert_true(p.spilled > N); /* most of the 2 N items are in the file */
  assert_true(v[0].nblk > 1 && v[1].nblk > 1);
  /* memory: the budget, and at most one doubling of each array past it */
  assert_true(p.mem <= 2 * (budget + 2 * PROF_SPILL_MIN_BLOCK * sizeof(item)));
  for (int w = 0; w < 2; w++) {
    int err;
    assert_int_equal(check_order(&p, &v[w], w, &err), N);
    assert_int_equal(err, 0);
    assert_int_equal(v[w].n, N);
  }
  prof__spill_free(&p, &v[0]);
  prof__spill_free(&p, &v[1]);
  assert_int_equal(p.mem, 0);
  prof__spill_pool_free(&p);
}

static void within_the_budget_nothing_is_written(void **state) {
  (void)state;
  prof__spill_pool p;
  prof__spill_pool_init(&p, 4 << 20);
  prof__spill v[2] = {PROF_SPILL_INIT(sizeof(item)), PROF_SPILL_INIT(sizeof(item))};
  fill(&p, v, 20000); /* 2 x 320 KB of items in a 4 MB budget */
  assert_null(p.file);
  assert_int_equal(p.spilled, 0);
  int err;
  assert_int_equal(check_order(&p, &v[1], 1, &err), 20000);
  assert_int_equal(err, 0);
  prof__spill_free(&p, &v[0]);
  prof__spill_free(&p, &v[1]);
  prof__spill_pool_free(&p);
}

static void without_a_temporary_file_items_stay_in_memory(void **state) {
  (void)state;
  no_tmpfile = 1;
  prof__spill_pool p;
  prof__spill_pool_init(&p, 16 * 1024);
  prof__spill v[2] = {PROF_SPILL_INIT(sizeof(item)), PROF_SPILL_INIT(sizeof(item))};
  fill(&p, v, 50000);
  assert_true(p.no_file);
  assert_int_equal(p.spilled, 0);
  assert_true(p.mem >= 2 * 50000 * sizeof(item)); /* all of it in memory */
  int err;
  assert_int_equal(check_order(&p, &v[0], 0, &err), 50000);
  assert_int_equal(err, 0);
  prof__spill_free(&p, &v[0]);
  prof__spill_free(&p, &v[1]);
  prof__spill_pool_free(&p);
}

static void a_failed_write_keeps_what_was_written_and_the_rest_in_memory(void **state) {
  (void)state;
  writes_left = 3; /* a disk that fills after three blocks */
  prof__spill_pool p;
  prof__spill_pool_init(&p, 16 * 1024);
  prof__spill v[2] = {PROF_SPILL_INIT(sizeof(item)), PROF_SPILL_INIT(sizeof(item))};
  fill(&p, v, 60000);
  assert_true(p.no_file);
  assert_int_equal(v[0].nblk + v[1].nblk, 3);
  assert_true(p.spilled > 0);
  for (int w = 0; w < 2; w++) {
    int err;
    assert_int_equal(check_order(&p, &v[w], w, &err), 60000);
    assert_int_equal(err, 0);
  }
  prof__spill_free(&p, &v[0]);
  prof__spill_free(&p, &v[1]);
  prof__spill_pool_free(&p);
}

static void a_block_that_cannot_be_read_ends_the_iteration_with_an_error(void **state) {
  (void)state;
  prof__spill_pool p;
  prof__spill_pool_init(&p, 16 * 1024);
  prof__spill v[2] = {PROF_SPILL_INIT(sizeof(item)), PROF_SPILL_INIT(sizeof(item))};
  fill(&p, v, 30000);
  assert_true(v[0].nblk > 0);
  fail_reads = 1;
  int err;
  assert_int_equal(check_order(&p, &v[0], 0, &err), 0);
  assert_int_equal(err, -1);
  prof__spill_free(&p, &v[0]);
  prof__spill_free(&p, &v[1]);
  prof__spill_pool_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(items_come_back_in_order_across_the_file, reset),
      cmocka_unit_test_setup(within_the_budget_nothing_is_written, reset),
      cmocka_unit_test_setup(without_a_temporary_file_items_stay_in_memory, reset),
      cmocka_unit_test_setup(a_failed_write_keeps_what_was_written_and_the_rest_in_memory, reset),
      cmocka_unit_test_setup(a_block_that_cannot_be_read_ends_the_iteration_with_an_error, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
