/* events.c — the memory events: ALLOC/FREE with call stacks, Poisson byte
 * sampling, and the table of live sampled blocks.
 *
 * In sampled mode a FREE is written only for blocks whose ALLOC was
 * written. Every free checks one bit of a Bloom filter over the live
 * sampled addresses (32 KiB, usually in cache); only a hit takes the lock
 * of the exact table. Stacks come from the stack producer's capture
 * service (stack/stack.h).
 */
#include <math.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/producer.h"
#include "mem/mem.h"
#include "stack/stack.h"

#define TAB_SIZE (1u << 16)
#define TAB_MAX (TAB_SIZE / 4 * 3)

uint64_t prof__mem_bloom[PROF_MEM_BLOOM_BITS / 64];
static uint16_t bloom_count[PROF_MEM_BLOOM_BITS];
static uintptr_t tab[TAB_SIZE];
static uint32_t tab_n;
static int tab_lock;
static uint64_t tab_full; /* sampled blocks not recorded: table full */
static int atfork_done;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void lock(void) {
  while (__atomic_exchange_n(&tab_lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&tab_lock, __ATOMIC_RELAXED)) cpu_relax();
}
static void unlock(void) { __atomic_store_n(&tab_lock, 0, __ATOMIC_RELEASE); }
static void child_unlock(void) { __atomic_store_n(&tab_lock, 0, __ATOMIC_RELEASE); }

uint64_t prof__mem_table_full(void) { return __atomic_load_n(&tab_full, __ATOMIC_RELAXED); }

/* ---- exponential draws --------------------------------------------------- */

static double uniform01(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *s = x;
  return ((double)(x >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* (0, 1) */
}

void prof__mem_sample_draw(prof__mem_tc *tc) {
  double d = -log(uniform01(&tc->rng)) * (double)prof__mem_sample_bytes();
  tc->countdown = d > 9e18 ? INT64_MAX : (int64_t)d;
}

/* ---- the table of live sampled blocks ------------------------------------ */

static uint32_t slot_of(uintptr_t a) { return prof__mem_hash((const void *)a) & (TAB_SIZE - 1); }

static int tab_insert(uintptr_t a) {
  if (tab_n >= TAB_MAX) return 0;
  uint32_t i = slot_of(a);
  while (tab[i] && tab[i] != a) i = (i + 1) & (TAB_SIZE - 1);
  if (tab[i] == a) return 1;
  tab[i] = a;
  tab_n++;
  uint32_t h = prof__mem_hash((const void *)a);
  if (bloom_count[h]++ == 0) __atomic_fetch_or(&prof__mem_bloom[h >> 6], 1ull << (h & 63), __ATOMIC_RELAXED);
  return 1;
}

/* Linear probing with backward-shift deletion. */
static int tab_remove(uintptr_t a) {
  uint32_t i = slot_of(a);
  while (tab[i] && tab[i] != a) i = (i + 1) & (TAB_SIZE - 1);
  if (!tab[i]) return 0;
  tab[i] = 0;
  tab_n--;
  for (uint32_t j = (i + 1) & (TAB_SIZE - 1); tab[j]; j = (j + 1) & (TAB_SIZE - 1)) {
    uint32_t home = slot_of(tab[j]);
    if (((j - home) & (TAB_SIZE - 1)) >= ((j - i) & (TAB_SIZE - 1))) {
      tab[i] = tab[j];
      tab[j] = 0;
      i = j;
    }
  }
  uint32_t h = prof__mem_hash((const void *)a);
  if (--bloom_count[h] == 0) __atomic_fetch_and(&prof__mem_bloom[h >> 6], ~(1ull << (h & 63)), __ATOMIC_RELAXED);
  return 1;
}

/* ---- events -------------------------------------------------------------- */

/* Events may be written now: the session runs and the thread is not past
 * its exit (a thread that had a ring and lost it is being torn down). */
static int may_emit(prof__mem_tc *tc) {
  if (!__atomic_load_n(&prof__enabled, __ATOMIC_ACQUIRE)) return 0;
  int real_tc = (uintptr_t)tc > 1;
  if (prof__self) {
    if (real_tc) tc->had_ring = 1;
    return 1;
  }
  return real_tc && !tc->had_ring;
}

/* Stack id of the current allocation (0: none), or UINT32_MAX when the
 * allocation was made by the profiler itself. */
static uint32_t capture(prof__mem_tc *tc) {
  if ((uintptr_t)tc > 1 && !tc->stack_ready) {
    prof__stack_thread_init();
    tc->stack_ready = 1;
  }
  uintptr_t pcs[PROF_STACK_MAX_DEPTH];
  int d = prof__stack_capture(pcs, PROF_STACK_MAX_DEPTH, 0);
  int i = 0;
  while (i < d && prof__mem_from_profiler((const void *)pcs[i])) i++;
  for (int k = i; k < d; k++)
    if (prof__mem_from_profiler((const void *)pcs[k])) return UINT32_MAX;
  if (d > i) d = i + prof__stack_rewrite(pcs + i, d - i, PROF_STACK_MAX_DEPTH - i); /* Python frames */
  return d > i ? prof__stack_intern(pcs + i, d - i) : 0;
}

static void ensure_atfork(void) {
  if (__atomic_exchange_n(&atfork_done, 1, __ATOMIC_ACQ_REL)) return;
  pthread_atfork(lock, unlock, child_unlock);
}

/* The event paths mark the thread as inside the allocator (prof__in_alloc):
 * the CPU sampler's handler then keeps only the interrupted PC instead of
 * unwinding on top of the unwinder or the table lock. */
void prof__mem_event_alloc(prof__mem_tc *tc, const void *p, size_t n, int sampled) {
  if (sampled) prof__mem_sample_draw(tc);
  if (!may_emit(tc)) return;
  prof__in_alloc++;
  prof__guard_depth++;
  uint32_t st = capture(tc);
  if (st != UINT32_MAX) {
    int ok = 1;
    if (sampled) {
      ensure_atfork();
      lock();
      ok = tab_insert((uintptr_t)p);
      unlock();
      if (!ok) __atomic_fetch_add(&tab_full, 1, __ATOMIC_RELAXED);
    }
    if (ok) prof__emit_aux(PROF_EV_ALLOC, sampled ? PROF_MEM_CAT_SAMPLED : 0, 0, st, (uintptr_t)p, n);
  }
  prof__guard_depth--;
  prof__in_alloc--;
}

void prof__mem_event_free(const void *p) {
  if (!may_emit(prof__mem_self)) return;
  prof__in_alloc++;
  prof__guard_depth++;
  prof__emit_aux(PROF_EV_FREE, 0, 0, 0, (uintptr_t)p, 0);
  prof__guard_depth--;
  prof__in_alloc--;
}

void prof__mem_sample_free(const void *p) {
  prof__in_alloc++;
  prof__guard_depth++;
  lock();
  int found = tab_remove((uintptr_t)p);
  unlock();
  if (found && may_emit(prof__mem_self)) prof__emit_aux(PROF_EV_FREE, 0, 0, 0, (uintptr_t)p, 0);
  prof__guard_depth--;
  prof__in_alloc--;
}

/* A block listed before the session began (big.c), recorded now with its
 * caller as a one-frame stack; not a sample (weight 1), but in sampled
 * mode its FREE is tracked like a sampled block's. */
void prof__mem_event_early(const void *p, size_t n, uintptr_t ra) {
  if (!may_emit(prof__mem_self)) return;
  prof__in_alloc++;
  prof__guard_depth++;
  uint32_t st = ra ? prof__stack_intern(&ra, 1) : 0;
  int ok = 1;
  if (prof__mem_mode == PROF_MEM_SAMPLED) {
    ensure_atfork();
    lock();
    ok = tab_insert((uintptr_t)p);
    unlock();
    if (!ok) __atomic_fetch_add(&tab_full, 1, __ATOMIC_RELAXED);
  }
  if (ok) prof__emit_aux(PROF_EV_ALLOC, 0, 0, st, (uintptr_t)p, n);
  prof__guard_depth--;
  prof__in_alloc--;
}

/* Pool events: every one is recorded (stacks in sampled and full modes). */
void prof__mem_pool_event(int alloc, int pool, const void *p, size_t n) {
  prof__mem_tc *tc = prof__mem_self;
  if (!may_emit(tc)) return;
  prof__guard_depth++;
  uint32_t st = 0;
  if (alloc && prof__mem_mode >= PROF_MEM_SAMPLED) {
    st = capture(tc);
    if (st == UINT32_MAX) st = 0;
  }
  prof__emit_aux(alloc ? PROF_EV_ALLOC : PROF_EV_FREE, 0, (uint16_t)pool, st, (uintptr_t)p, alloc ? n : 0);
  prof__guard_depth--;
}
