/* test_alloc_mark.c — how the CPU sampler's handler tells that it
 * interrupted the allocator (prof__in_allocator): the counted mark
 * (prof__in_alloc) of the general wrappers, and the return-address mark
 * that malloc and free leave before jumping into glibc. A sample is inside
 * the allocator only when its pc lies in the allocator's library, its stack
 * pointer is below the marked slot (and not far), and the slot still holds
 * the marked return address; a slot that cannot be read counts as inside.
 * Fixtures save and restore the mark and the library range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>
#include <unistd.h>

#include "core/session.h"

#define LIB_LO ((uintptr_t)0x10000)
#define LIB_HI ((uintptr_t)0x20000)
#define IN_LIB (LIB_LO + 0x123)
#define RA_VALUE ((uintptr_t)0x7f00deadbeefull)

static prof__alloc_mark saved_mark;
static uintptr_t saved_lo, saved_hi;
static volatile uintptr_t slot_word; /* stands for the caller's return-address slot */

static int setup(void **state) {
  (void)state;
  saved_mark = prof__alloc_at;
  saved_lo = prof__alloc_text_lo;
  saved_hi = prof__alloc_text_hi;
  prof__alloc_text_lo = LIB_LO;
  prof__alloc_text_hi = LIB_HI;
  slot_word = RA_VALUE;
  prof__alloc_at.slot = (uintptr_t)&slot_word;
  prof__alloc_at.ra = RA_VALUE;
  prof__in_alloc = 0;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  prof__alloc_at = saved_mark;
  prof__alloc_text_lo = saved_lo;
  prof__alloc_text_hi = saved_hi;
  prof__in_alloc = 0;
  return 0;
}

static uintptr_t below_slot(uintptr_t bytes) { return (uintptr_t)&slot_word - bytes; }

static void marked_call_in_progress_is_inside(void **state) {
  (void)state;
  assert_int_equal(prof__in_allocator(IN_LIB, below_slot(256)), 1);
  assert_int_equal(prof__in_allocator(IN_LIB, (uintptr_t)&slot_word), 1);
}

static void pc_outside_the_library_is_not_inside(void **state) {
  (void)state;
  assert_int_equal(prof__in_allocator(LIB_HI, below_slot(256)), 0);
  assert_int_equal(prof__in_allocator(LIB_LO - 1, below_slot(256)), 0);
}

static void returned_call_is_not_inside(void **state) {
  (void)state;
  /* The caller went on and called something else from that frame: the
   * slot holds another return address now. */
  slot_word = RA_VALUE + 5;
  assert_int_equal(prof__in_allocator(IN_LIB, below_slot(256)), 0);
  slot_word = RA_VALUE;
  /* The stack pointer is above the slot: the frame was popped. */
  assert_int_equal(prof__in_allocator(IN_LIB, (uintptr_t)&slot_word + 16), 0);
  /* Far below the slot: deeper than any allocator call goes. */
  assert_int_equal(prof__in_allocator(IN_LIB, below_slot((uintptr_t)1 << 20)), 0);
}

static void no_mark_or_no_range_is_not_inside(void **state) {
  (void)state;
  prof__alloc_at.slot = 0;
  assert_int_equal(prof__in_allocator(IN_LIB, below_slot(256)), 0);
  prof__alloc_at.slot = (uintptr_t)&slot_word;
  prof__alloc_text_lo = prof__alloc_text_hi = 0; /* the mark is not in use */
  assert_int_equal(prof__in_allocator(IN_LIB, below_slot(256)), 0);
}

static void counted_mark_is_always_inside(void **state) {
  (void)state;
  prof__in_alloc = 1;
  assert_int_equal(prof__in_allocator(LIB_HI + 99, below_slot(256)), 1);
  prof__alloc_text_lo = prof__alloc_text_hi = 0;
  assert_int_equal(prof__in_allocator(0, 0), 1);
}

static void unreadable_slot_counts_as_inside(void **state) {
  (void)state;
  long page = sysconf(_SC_PAGESIZE);
  void *p = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  prof__alloc_at.slot = (uintptr_t)p + 64;
  assert_int_equal(prof__in_allocator(IN_LIB, (uintptr_t)p), 1);
  munmap(p, (size_t)page);
  /* Unmapped: still answered without a fault. */
  assert_int_equal(prof__in_allocator(IN_LIB, (uintptr_t)p), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(marked_call_in_progress_is_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(pc_outside_the_library_is_not_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(returned_call_is_not_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(no_mark_or_no_range_is_not_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(counted_mark_is_always_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(unreadable_slot_counts_as_inside, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
