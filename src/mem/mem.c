/* mem.c — memory profiling state: the mode, the sampling mean, per-thread
 * counters and their totals (the RSS comes from core/procfile).
 *
 * Counters live in a static table of per-thread slots (no allocation, so
 * the allocator interposer can use them from the very first malloc). A
 * thread's slot is folded into shared totals when the thread exits; later
 * calls on that thread (exit-time frees) update the shared totals with
 * atomics.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "mem/mem.h"

#define TC_SLOTS 4096
#define DEFAULT_SAMPLE_BYTES (512u * 1024u)

int prof__mem_mode = PROF_MEM_SAMPLED;
int prof__mem_interposed;
uintptr_t prof__mem_text_lo, prof__mem_text_hi;
__thread prof__mem_tc *prof__mem_self PROF_MEM_IE;

static prof__mem_tc slots[TC_SLOTS];
static unsigned slot_hint;
static unsigned slots_end; /* one past the highest slot ever claimed: totals read no further */
static prof__mem_totals shared; /* retired threads and slot-less threads */
static uint64_t sample_bytes = DEFAULT_SAMPLE_BYTES;
static pthread_key_t exit_key;
static int exit_key_state; /* 0 none, 1 creating, 2 ready, 3 failed */

void prof__mem_mode_resolve(void) {
  int m = prof__ev_mem_mode_parse(prof__env("MEM"));
  if (m >= 0) __atomic_store_n(&prof__mem_mode, m, __ATOMIC_RELAXED);
  uint64_t v = prof__mem_sample_bytes_parse(prof__env("MEM_SAMPLE_BYTES"));
  if (v) sample_bytes = v;
}

uint64_t prof__mem_sample_bytes_parse(const char *s) {
  if (!s || *s < '0' || *s > '9') return 0; /* strtoull would take " 5" and negate "-1" */
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  return !errno && *end == 0 && v >= 1 && v <= PROF_MEM_SAMPLE_BYTES_MAX ? v : 0;
}

uint64_t prof__mem_sample_bytes_default(void) { return DEFAULT_SAMPLE_BYTES; }

uint64_t prof__mem_sample_bytes(void) { return sample_bytes; }

static void add_shared(prof__mem_tc *tc) {
  __atomic_fetch_add(&shared.live, tc->live, __ATOMIC_RELAXED);
  __atomic_fetch_add(&shared.allocs, tc->allocs, __ATOMIC_RELAXED);
  __atomic_fetch_add(&shared.frees, tc->frees, __ATOMIC_RELAXED);
  __atomic_fetch_add(&shared.bytes, tc->bytes, __ATOMIC_RELAXED);
}

/* Thread exit: fold the slot into the shared totals and free it. */
static void on_thread_exit(void *arg) {
  prof__mem_tc *tc = arg;
  prof__mem_self = PROF_MEM_TC_DEAD;
  add_shared(tc);
  __atomic_store_n(&tc->live, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->allocs, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->frees, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->bytes, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&tc->used, 0, __ATOMIC_RELEASE);
}

static int exit_key_ready(void) {
  int st = __atomic_load_n(&exit_key_state, __ATOMIC_ACQUIRE);
  if (st >= 2) return st == 2;
  int expect = 0;
  if (!__atomic_compare_exchange_n(&exit_key_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return 0; /* another thread is creating it: this thread goes without */
  int ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
  __atomic_store_n(&exit_key_state, ok ? 2 : 3, __ATOMIC_RELEASE);
  return ok;
}

static prof__mem_tc *claim_slot(void) {
  unsigned start = __atomic_fetch_add(&slot_hint, 1, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < TC_SLOTS; i++) {
    prof__mem_tc *tc = &slots[(start + i) % TC_SLOTS];
    int expect = 0;
    if (__atomic_load_n(&tc->used, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(&tc->used, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      unsigned end = (unsigned)(tc - slots) + 1, cur = __atomic_load_n(&slots_end, __ATOMIC_RELAXED);
      while (cur < end && !__atomic_compare_exchange_n(&slots_end, &cur, end, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
      return tc;
    }
  }
  return NULL;
}

prof__mem_tc *prof__mem_tc_get(void) {
  prof__mem_tc *tc = prof__mem_self;
  if (tc) return tc;
  prof__guard_depth++; /* pthread_setspecific may allocate */
  prof__mem_self = PROF_MEM_TC_DEAD; /* until set up: no recursion */
  tc = exit_key_ready() ? claim_slot() : NULL;
  if (tc) {
    tc->stack_ready = 0;
    tc->had_ring = 0;
    tc->rng = ((uintptr_t)tc * 0x9E3779B97F4A7C15ull) ^ (uint64_t)prof__ticks() ^ 0x5bd1e995u;
    if (!tc->rng) tc->rng = 1;
    prof__mem_sample_draw(tc);
    if (pthread_setspecific(exit_key, tc) != 0) {
      __atomic_store_n(&tc->used, 0, __ATOMIC_RELEASE);
      tc = NULL;
    }
  }
  prof__mem_self = tc ? tc : PROF_MEM_TC_DEAD;
  prof__guard_depth--;
  return prof__mem_self;
}

void prof__mem_count_shared(int64_t live, uint64_t bytes, int is_alloc) {
  __atomic_fetch_add(&shared.live, live, __ATOMIC_RELAXED);
  if (is_alloc) {
    __atomic_fetch_add(&shared.allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&shared.bytes, bytes, __ATOMIC_RELAXED);
  } else {
    __atomic_fetch_add(&shared.frees, 1, __ATOMIC_RELAXED);
  }
}

void prof__mem_totals_get(prof__mem_totals *t) {
  t->live = __atomic_load_n(&shared.live, __ATOMIC_RELAXED);
  t->allocs = __atomic_load_n(&shared.allocs, __ATOMIC_RELAXED);
  t->frees = __atomic_load_n(&shared.frees, __ATOMIC_RELAXED);
  t->bytes = __atomic_load_n(&shared.bytes, __ATOMIC_RELAXED);
  unsigned end = __atomic_load_n(&slots_end, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < end; i++) {
    const prof__mem_tc *tc = &slots[i];
    t->live += __atomic_load_n(&tc->live, __ATOMIC_RELAXED);
    t->allocs += __atomic_load_n(&tc->allocs, __ATOMIC_RELAXED);
    t->frees += __atomic_load_n(&tc->frees, __ATOMIC_RELAXED);
    t->bytes += __atomic_load_n(&tc->bytes, __ATOMIC_RELAXED);
  }
}

