/* test_intern.c — the name table and the per-thread pointer cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/session.h"

static void same_content_same_id(void **state) {
  (void)state;
  char a[] = "forward", b[] = "forward";
  uint32_t ia = prof__intern(a), ib = prof__intern(b);
  assert_true(ia > 0);
  assert_int_equal(ia, ib);
  assert_int_not_equal(prof__intern("backward"), ia);
  assert_int_equal(prof__intern_len("forwardXYZ", 7), ia);
  assert_int_equal(prof__intern(NULL), 0);
}

static void ids_are_dense_and_survive_growth(void **state) {
  (void)state;
  uint32_t first = prof__intern_count() + 1;
  char buf[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(buf, sizeof buf, "name-%d", i);
    assert_int_equal(prof__intern(buf), first + (uint32_t)i);
  }
  for (int i = 0; i < 5000; i += 97) {
    snprintf(buf, sizeof buf, "name-%d", i);
    assert_int_equal(prof__intern(buf), first + (uint32_t)i);
  }
}

static void pointer_cache_hits_after_first_miss(void **state) {
  (void)state;
  static prof__thread t;
  const char *name = "optimizer";
  uint32_t id = prof__name_id(&t, name);
  assert_int_equal(id, prof__intern("optimizer"));
  unsigned slot = prof__name_slot_of(name);
  assert_ptr_equal(t.cache[slot].p, name);
  assert_int_equal(t.cache[slot].id, id);
  assert_int_equal(prof__name_id(&t, name), id);
}

static void *intern_many(void *arg) {
  uint32_t *ids = arg;
  char buf[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(buf, sizeof buf, "shared-%d", i);
    ids[i] = prof__intern(buf);
  }
  return NULL;
}

static void concurrent_interning_agrees(void **state) {
  (void)state;
  static uint32_t ids[4][1000];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, intern_many, ids[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int k = 1; k < 4; k++) assert_memory_equal(ids[0], ids[k], sizeof ids[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_content_same_id),
      cmocka_unit_test(ids_are_dense_and_survive_growth),
      cmocka_unit_test(pointer_cache_hits_after_first_miss),
      cmocka_unit_test(concurrent_interning_agrees),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
