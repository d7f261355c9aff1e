/* test_hashmap.c — the analyzer's hash maps (src/analyze/util/hashmap.h):
 * u64map sums by key across growth, prof__u64map_at's one-lookup update,
 * removal keeping the other keys findable; map32 put and get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analyze/util/hashmap.h"

#define N 5000

static void u64map_sums_survive_growth(void **state) {
  (void)state;
  prof__u64map m = {0};
  for (uint64_t k = 0; k < N; k++) assert_int_equal(prof__u64map_add(&m, k * 977, k + 1), 0);
  for (uint64_t k = 0; k < N; k += 2) assert_int_equal(prof__u64map_add(&m, k * 977, 10), 0);
  assert_int_equal(m.n, N);
  for (uint64_t k = 0; k < N; k++) assert_int_equal(prof__u64map_get(&m, k * 977), k + 1 + (k % 2 ? 0 : 10));
  assert_int_equal(prof__u64map_get(&m, 1), 0);
  prof__u64map_free(&m);
}

/* A new key reads 0 through prof__u64map_at; what is written there is what
 * get reads; the same key gives the same slot until an insertion. */
static void u64map_at_updates_in_place(void **state) {
  (void)state;
  prof__u64map m = {0};
  uint64_t *v = prof__u64map_at(&m, 42);
  assert_non_null(v);
  assert_int_equal(*v, 0);
  assert_int_equal(m.n, 1);
  *v = 7;
  assert_ptr_equal(prof__u64map_at(&m, 42), v);
  (*prof__u64map_at(&m, 42))++;
  assert_int_equal(prof__u64map_get(&m, 42), 8);
  for (uint64_t k = 100; k < 100 + N; k++) (*prof__u64map_at(&m, k)) += k;
  assert_int_equal(m.n, N + 1);
  assert_int_equal(prof__u64map_get(&m, 42), 8); /* survives the growth */
  for (uint64_t k = 100; k < 100 + N; k++) assert_int_equal(prof__u64map_get(&m, k), k);
  prof__u64map_free(&m);
}

static void u64map_del_keeps_the_rest(void **state) {
  (void)state;
  prof__u64map m = {0};
  for (uint64_t k = 0; k < N; k++) assert_int_equal(prof__u64map_add(&m, k, k + 1), 0);
  for (uint64_t k = 0; k < N; k += 3) prof__u64map_del(&m, k);
  for (uint64_t k = 0; k < N; k++) assert_int_equal(prof__u64map_get(&m, k), k % 3 ? k + 1 : 0);
  prof__u64map_free(&m);
}

static void map32_put_and_get(void **state) {
  (void)state;
  prof__map32 m = {0};
  for (uint32_t k = 1; k <= N; k++) assert_int_equal(prof__map32_put(&m, k * 31, k), 0);
  for (uint32_t k = 1; k <= N; k++) assert_int_equal(prof__map32_get(&m, k * 31), k);
  assert_int_equal(prof__map32_get(&m, 5), UINT32_MAX);
  prof__map32_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(u64map_sums_survive_growth),
      cmocka_unit_test(u64map_at_updates_in_place),
      cmocka_unit_test(u64map_del_keeps_the_rest),
      cmocka_unit_test(map32_put_and_get),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
