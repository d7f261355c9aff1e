/* test_ring.c — the single-producer ring: capacity, drops, wrap-around,
 * a producer racing the consumer with exact accounting, room held back for
 * the ends of open ranges, reuse of a drained ring, the high-water wake-up
 * (once per crossing) and the wait-for-room policy with its bounds
 * (no-wait threads, no writer, a stuck writer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/ring.h"

static int setup(void **state) {
  prof__ring *r = malloc(sizeof *r);
  if (!r || prof__ring_init(r, 16 * sizeof(prof__slot)) != 0) return -1;
  *state = r;
  return 0;
}

static int teardown(void **state) {
  prof__ring_free(*state);
  free(*state);
  return 0;
}

static void full_ring_drops_and_counts(void **state) {
  prof__ring *r = *state;
  assert_int_equal(prof__ring_capacity(r), 16);
  for (int i = 0; i < 20; i++) prof__ring_put(r, PROF_EV_MARK, 0, 1, (uint64_t)i, 0, 0);
  assert_int_equal(prof__ring_count(r), 16);
  assert_int_equal(prof__ring_dropped(r), 4);
  prof__event out[32];
  assert_int_equal(prof__ring_read(r, out, 32), 16);
  for (int i = 0; i < 16; i++) assert_int_equal(out[i].ts, i); /* the oldest are kept */
  assert_int_equal(prof__ring_count(r), 0);
}

static void payload_events_take_five_slots(void **state) {
  prof__ring *r = *state;
  for (int i = 0; i < 10; i++) prof__ring_put(r, PROF_EV_COUNTER, 0, 3, (uint64_t)i, 100 + (uint64_t)i, 0);
  assert_int_equal(prof__ring_count(r), 15); /* 3 events of 5 slots */
  assert_int_equal(prof__ring_dropped(r), 7);
  prof__event out[16];
  assert_int_equal(prof__ring_read(r, out, 16), 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(out[i].type, PROF_EV_COUNTER);
    assert_int_equal(out[i].ts, i);
    assert_int_equal(out[i].a, 100 + i);
    assert_int_equal(out[i].b, 0);
  }
  /* A partial read leaves the rest, and never splits an event. */
  prof__ring_put(r, PROF_EV_MARK, 0, 1, 1, 0, 0);
  prof__ring_put_aux(r, PROF_EV_ALLOC, 0, 7, 2, 2, 0x1000, 64);
  assert_int_equal(prof__ring_read(r, out, 1), 1);
  assert_int_equal(out[0].type, PROF_EV_MARK);
  assert_int_equal(prof__ring_read(r, out, 4), 1);
  assert_int_equal(out[0].a, 0x1000);
  assert_int_equal(out[0].b, 64);
  assert_int_equal(out[0].aux, 7);
  assert_int_equal(out[0].name, 2);
}

/* Short slots hold 32-bit time deltas and 22-bit names; a longer gap or a
 * larger id falls back to the full record, and times stay exact. */
static void long_gaps_and_large_names_keep_exact_values(void **state) {
  prof__ring *r = *state;
  const uint64_t ts[] = {5, 6, 6 + (1ull << 32), (1ull << 40) + 3, (1ull << 40) + 4, UINT64_MAX - 1};
  const uint32_t names[] = {1, (1u << 22) - 1, 3, 1u << 22, UINT32_MAX, 9};
  prof__event out[8];
  for (int i = 0; i < 6; i++) {
    assert_true(prof__ring_put(r, PROF_EV_RANGE_BEGIN, (uint8_t)(i % 5), names[i], ts[i], 0, 0));
    assert_int_equal(prof__ring_read(r, out, 8), 1); /* drain: room for the next */
    assert_true(out[0].ts == ts[i]);
    assert_int_equal(out[0].name, names[i]);
    assert_int_equal(out[0].cat, i % 5);
    assert_int_equal(out[0].type, PROF_EV_RANGE_BEGIN);
  }
  /* A gap that goes backwards (ticks of another core) is exact too. */
  assert_true(prof__ring_put(r, PROF_EV_MARK, 0, 4, 100, 0, 0));
  assert_int_equal(prof__ring_read(r, out, 8), 1);
  assert_int_equal(out[0].ts, 100);
}

static void wraps_around_preserving_order(void **state) {
  prof__ring *r = *state;
  prof__event out[8];
  uint64_t next = 0, expect = 0;
  for (int round = 0; round < 100; round++) {
    for (int i = 0; i < 3; i++) assert_true(prof__ring_put(r, PROF_EV_COUNTER, 2, 9, next++, 5, 6));
    for (int i = 0; i < 1; i++) assert_true(prof__ring_put(r, PROF_EV_MARK, 1, 9, next++, 0, 0));
    size_t n = prof__ring_read(r, out, 8);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(out[i].ts, expect++);
      assert_int_equal(out[i].cat, i < 3 ? 2 : 1);
      assert_int_equal(out[i].a, i < 3 ? 5 : 0);
    }
  }
  assert_int_equal(prof__ring_dropped(r), 0);
}

/* A recorded begin holds back room for its end (the longest record): the
 * ring fills with other events only up to that room, a begin that cannot
 * fit with its own end is refused, and the end always fits. */
static void open_ranges_keep_room_for_their_ends(void **state) {
  prof__ring *r = *state;
  assert_true(prof__ring_put_begin(r, 0, 7, 0));
  int marks = 0;
  for (int i = 0; i < 20; i++) marks += prof__ring_put(r, PROF_EV_MARK, 0, 1, (uint64_t)i + 1, 0, 0);
  assert_int_equal(marks, 16 - 1 - PROF_RING_END_SLOTS);
  assert_false(prof__ring_put_begin(r, 0, 8, 30)); /* no room for it and its end */
  assert_int_equal(prof__ring_dropped(r), 20 - marks + 1);
  prof__ring_put_end(r, 7, 1ull << 33); /* a gap past 2^32 ticks: the long record, still fits */
  assert_int_equal(prof__ring_dropped(r), 20 - marks + 1);
  prof__event out[32];
  size_t n = prof__ring_read(r, out, 32);
  assert_int_equal(n, (size_t)marks + 2);
  assert_int_equal(out[0].type, PROF_EV_RANGE_BEGIN);
  assert_int_equal(out[n - 1].type, PROF_EV_RANGE_END);
  assert_int_equal(out[n - 1].name, 7);
  assert_true(out[n - 1].ts == 1ull << 33);
  /* Nested: each open range holds its own room; closing gives it back. */
  assert_true(prof__ring_put_begin(r, 0, 1, 1ull << 33));
  assert_true(prof__ring_put_begin(r, 0, 2, (1ull << 33) + 1));
  marks = 0;
  for (int i = 0; i < 20; i++) marks += prof__ring_put(r, PROF_EV_MARK, 0, 1, (1ull << 33) + 2, 0, 0);
  assert_int_equal(marks, 16 - 2 - 2 * PROF_RING_END_SLOTS);
  prof__ring_put_end(r, 2, (1ull << 33) + 3);
  prof__ring_put_end(r, 1, (1ull << 33) + 4);
  n = prof__ring_read(r, out, 32);
  assert_int_equal(n, (size_t)marks + 4);
  assert_int_equal(out[n - 2].name, 2);
  assert_int_equal(out[n - 1].name, 1);
  /* Nothing held back any more: the whole ring is free again. */
  marks = 0;
  for (int i = 0; i < 20; i++) marks += prof__ring_put(r, PROF_EV_MARK, 0, 1, (1ull << 33) + 5, 0, 0);
  assert_int_equal(marks, 16);
}

/* A drained ring reset for a new thread is empty and whole, with its
 * memory; a long-lived producer's pages are committed ahead of it. */
static void reset_ring_is_as_new(void **state) {
  prof__ring *r = *state;
  prof__slot *mem = r->slot;
  assert_true(prof__ring_put_begin(r, 0, 7, 0));
  for (int i = 0; i < 40; i++) prof__ring_put(r, PROF_EV_MARK, 0, 1, 1, 0, 0);
  prof__event out[32];
  while (prof__ring_read(r, out, 32)) {}
  prof__ring_reset(r);
  assert_ptr_equal(r->slot, mem);
  assert_int_equal(prof__ring_count(r), 0);
  assert_int_equal(prof__ring_dropped(r), 0);
  int marks = 0;
  for (int i = 0; i < 20; i++) marks += prof__ring_put(r, PROF_EV_MARK, 0, 1, 2, 0, 0);
  assert_int_equal(marks, 16); /* no reserve left over from the open range */
  prof__ring_commit_ahead(r);
  assert_int_equal(r->committed, 16);
}

static void size_rounds_up_to_power_of_two(void **state) {
  (void)state;
  prof__ring r;
  assert_int_equal(prof__ring_init(&r, 100 * sizeof(prof__slot)), 0);
  assert_int_equal(prof__ring_capacity(&r), 128);
  prof__ring_free(&r);
  assert_int_equal(prof__ring_init(&r, 1), 0);
  assert_int_equal(prof__ring_capacity(&r), 16);
  prof__ring_free(&r);
}

#define RACE_N 200000
static int producer_done;
static void *producer(void *arg) {
  prof__ring *r = arg;
  for (uint64_t i = 0; i < RACE_N; i++) prof__ring_put(r, PROF_EV_MARK, 0, 1, i, i, 0);
  __atomic_store_n(&producer_done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void concurrent_consumer_sees_ordered_events_and_exact_losses(void **state) {
  (void)state;
  prof__ring r;
  assert_int_equal(prof__ring_init(&r, 64 * sizeof(prof__slot)), 0);
  pthread_t th;
  pthread_create(&th, NULL, producer, &r);
  prof__event out[64];
  uint64_t got = 0, last = 0;
  int done = 0;
  while (!done) {
    done = __atomic_load_n(&producer_done, __ATOMIC_ACQUIRE);
    size_t n = prof__ring_read(&r, out, 64);
    for (size_t i = 0; i < n; i++) {
      if (got) assert_true(out[i].ts > last);
      assert_int_equal(out[i].a, out[i].ts); /* never torn */
      last = out[i].ts;
      got++;
    }
  }
  pthread_join(th, NULL);
  got += prof__ring_read(&r, out, 64);
  assert_int_equal(got + prof__ring_dropped(&r), RACE_N);
  prof__ring_free(&r);
}

/* ---- high-water wake-up and waiting for room ------------------------------ */

static int wakes;
static void count_wake(void) { __atomic_fetch_add(&wakes, 1, __ATOMIC_RELAXED); }

static int policy_setup(void **state) {
  wakes = 0;
  prof__ring_wake = count_wake;
  prof__ring_full_wait = 0;
  prof__ring_waitable = 0;
  prof__ring_nowait = 0;
  return setup(state);
}

static int policy_teardown(void **state) {
  prof__ring_wake = NULL;
  prof__ring_full_wait = 0;
  prof__ring_waitable = 0;
  prof__ring_nowait = 0;
  return teardown(state);
}

static void put_marks(prof__ring *r, int n) {
  static uint64_t ts;
  for (int i = 0; i < n; i++) prof__ring_put(r, PROF_EV_MARK, 0, 1, ++ts, 0, 0);
}

static void crossing_the_high_water_mark_wakes_the_writer_once(void **state) {
  prof__ring *r = *state; /* 16 slots: the mark is at 8 */
  prof__event out[32];
  put_marks(r, 8);
  assert_int_equal(wakes, 0); /* at the mark, not past it */
  put_marks(r, 1);
  assert_int_equal(wakes, 1);
  put_marks(r, 7); /* up to full: no second wake */
  assert_int_equal(wakes, 1);
  put_marks(r, 3); /* full: dropped (drop policy), still no wake */
  assert_int_equal(wakes, 1);
  assert_int_equal(prof__ring_dropped(r), 3);
  assert_int_equal(prof__ring_read(r, out, 2), 2); /* drained a little: still above the mark */
  put_marks(r, 2);
  assert_int_equal(wakes, 1);
  assert_int_equal(prof__ring_read(r, out, 32), 16); /* drained: the mark is armed again */
  put_marks(r, 8);
  assert_int_equal(wakes, 1);
  put_marks(r, 1); /* the second crossing */
  assert_int_equal(wakes, 2);
  assert_int_equal(prof__ring_dropped(r), 3);
}

static void extended_records_cross_the_mark_too(void **state) {
  prof__ring *r = *state;
  for (int i = 0; i < 2; i++) prof__ring_put(r, PROF_EV_COUNTER, 0, 3, (uint64_t)i, 7, 0);
  assert_int_equal(wakes, 1); /* 10 slots: past 8 */
  prof__ring_put(r, PROF_EV_COUNTER, 0, 3, 2, 7, 0);
  assert_int_equal(wakes, 1);
  assert_int_equal(prof__ring_count(r), 15);
}

#define WAIT_N 200000
static void *slow_consumer(void *arg) {
  prof__ring *r = arg;
  prof__event out[8];
  uint64_t got = 0;
  while (got < WAIT_N) got += prof__ring_read(r, out, 8); /* small reads: the producer catches up */
  return NULL;
}

static void wait_policy_loses_nothing(void **state) {
  (void)state;
  prof__ring r;
  assert_int_equal(prof__ring_init(&r, 64 * sizeof(prof__slot)), 0);
  prof__ring_full_wait = 1;
  prof__ring_waitable = 1;
  pthread_t th;
  pthread_create(&th, NULL, slow_consumer, &r);
  for (uint64_t i = 0; i < WAIT_N; i++) prof__ring_put(&r, PROF_EV_MARK, 0, 1, i + 1, i + 1, 0);
  pthread_join(th, NULL);
  assert_int_equal(prof__ring_dropped(&r), 0);
  assert_int_equal(prof__ring_count(&r), 0);
  assert_true(wakes >= 1);
  prof__ring_free(&r);
}

static void no_wait_thread_drops_at_once(void **state) {
  prof__ring *r = *state;
  prof__ring_full_wait = 1;
  prof__ring_waitable = 1;
  prof__ring_nowait = 1; /* the writer thread, a signal handler */
  put_marks(r, 18);
  assert_int_equal(prof__ring_dropped(r), 2);
  assert_int_equal(prof__ring_waits(r), 0);
}

static void without_a_writer_a_full_ring_drops(void **state) {
  prof__ring *r = *state;
  prof__ring_full_wait = 1;
  prof__ring_waitable = 0; /* shutdown began, or a forked child */
  put_marks(r, 18);
  assert_int_equal(prof__ring_dropped(r), 2);
  assert_int_equal(prof__ring_waits(r), 0);
}

static void a_stuck_writer_bounds_the_wait_then_drops(void **state) {
  prof__ring *r = *state;
  prof__ring_full_wait = 1;
  prof__ring_waitable = 1; /* but nobody reads */
  put_marks(r, 16);
  put_marks(r, 1); /* waits up to PROF_RING_WAIT_MS, then drops */
  assert_int_equal(prof__ring_waits(r), 1);
  assert_int_equal(prof__ring_dropped(r), 1);
  assert_true(wakes >= 2); /* the crossing, and again while waiting */
  put_marks(r, 3); /* nothing moved since: dropped without waiting again */
  assert_int_equal(prof__ring_waits(r), 1);
  assert_int_equal(prof__ring_dropped(r), 4);
  prof__event out[16];
  assert_int_equal(prof__ring_read(r, out, 16), 16);
  put_marks(r, 17); /* the reader moved: the next full ring waits again (and times out) */
  assert_int_equal(prof__ring_waits(r), 2);
  assert_int_equal(prof__ring_dropped(r), 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(full_ring_drops_and_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(payload_events_take_five_slots, setup, teardown),
      cmocka_unit_test_setup_teardown(long_gaps_and_large_names_keep_exact_values, setup, teardown),
      cmocka_unit_test_setup_teardown(wraps_around_preserving_order, setup, teardown),
      cmocka_unit_test_setup_teardown(open_ranges_keep_room_for_their_ends, setup, teardown),
      cmocka_unit_test_setup_teardown(reset_ring_is_as_new, setup, teardown),
      cmocka_unit_test(size_rounds_up_to_power_of_two),
      cmocka_unit_test(concurrent_consumer_sees_ordered_events_and_exact_losses),
      cmocka_unit_test_setup_teardown(crossing_the_high_water_mark_wakes_the_writer_once, policy_setup,
                                      policy_teardown),
      cmocka_unit_test_setup_teardown(extended_records_cross_the_mark_too, policy_setup, policy_teardown),
      cmocka_unit_test_setup_teardown(wait_policy_loses_nothing, policy_setup, policy_teardown),
      cmocka_unit_test_setup_teardown(no_wait_thread_drops_at_once, policy_setup, policy_teardown),
      cmocka_unit_test_setup_teardown(without_a_writer_a_full_ring_drops, policy_setup, policy_teardown),
      cmocka_unit_test_setup_teardown(a_stuck_writer_bounds_the_wait_then_drops, policy_setup,
                                      policy_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
