/* test_stack.c — call-stack capture, the lock-free stack table, and the
 * STACKS / MODULES chunks written for the analyzer. */
// wrap: readlink
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "stack/stack.h"

static int have_unwind(void) {
  uintptr_t pcs[8];
  prof__stack_thread_init();
  return prof__stack_capture(pcs, 8, 0) > 0;
}

/* Is the return address `pc` within the first bytes of function `fn`? (The
 * test's static functions are not in the dynamic symbol table.) */
static int inside(uintptr_t pc, void *fn) { return pc > (uintptr_t)fn && pc - (uintptr_t)fn < 256; }

__attribute__((noinline)) static int leaf(uintptr_t *pcs, int max) {
  int d = prof__stack_capture(pcs, max, 0);
  __asm__ volatile("" ::: "memory");
  return d;
}
__attribute__((noinline)) static int middle(uintptr_t *pcs, int max) {
  int d = leaf(pcs, max);
  __asm__ volatile("" ::: "memory");
  return d;
}

/* The innermost frame is a return address inside leaf(), the next inside middle(). */
static void capture_sees_the_callers(void **state) {
  (void)state;
  if (!have_unwind()) skip();
  uintptr_t pcs[PROF_STACK_MAX_DEPTH];
  int d = middle(pcs, PROF_STACK_MAX_DEPTH);
  assert_true(d >= 3);
  assert_true(inside(pcs[0], (void *)leaf));
  assert_true(inside(pcs[1], (void *)middle));
  /* skip = 1 drops leaf's frame */
  uintptr_t s[8];
  assert_true(prof__stack_capture(s, 8, 1) >= 1);
  assert_int_equal(prof__stack_capture(s, 0, 0), 0);
  assert_int_equal(prof__stack_capture(NULL, 8, 0), 0);
}

static void intern_dedups_and_separates(void **state) {
  (void)state;
  uintptr_t a[3] = {0x1000, 0x2000, 0x3000}, b[3] = {0x1000, 0x2000, 0x3001};
  uint32_t ia = prof__stack_intern(a, 3), ib = prof__stack_intern(b, 3);
  assert_true(ia >= 1);
  assert_true(ib >= 1);
  assert_int_not_equal(ia, ib);
  assert_int_equal(prof__stack_intern(a, 3), ia);
  assert_int_equal(prof__stack_intern(a, 2) == ia, 0); /* a prefix is another stack */
  assert_int_equal(prof__stack_intern(a, 0), 0);
  assert_int_equal(prof__stack_intern(NULL, 3), 0);
}

#define NTHR 4
#define PER 2000
static uint32_t ids[NTHR][PER];

static void *intern_many(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < PER; i++) {
    uintptr_t pcs[4] = {0x7000, 0x8000 + (uintptr_t)i, 0x9000, 0xa000};
    ids[t][i] = prof__stack_intern(pcs, 4);
  }
  return NULL;
}

/* Threads interning the same stacks get ids whose content is that stack;
 * duplicates (a race lost while a slot was being filled) stay rare. */
static void concurrent_interns_agree(void **state) {
  (void)state;
  pthread_t th[NTHR];
  for (int t = 0; t < NTHR; t++) pthread_create(&th[t], NULL, intern_many, (void *)(intptr_t)t);
  for (int t = 0; t < NTHR; t++) pthread_join(th[t], NULL);
  int differing = 0;
  for (int i = 0; i < PER; i++) {
    for (int t = 0; t < NTHR; t++) {
      const uintptr_t *p;
      assert_true(ids[t][i] >= 1);
      assert_int_equal(prof__stack_get(ids[t][i], &p), 4);
      assert_int_equal(p[1], 0x8000 + (uintptr_t)i);
      assert_int_equal(p[3], 0xa000);
      if (ids[t][i] != ids[0][i]) differing++;
    }
  }
  assert_true(differing < PER / 10);
  /* a second round finds every stack again */
  uintptr_t again[4] = {0x7000, 0x8000 + 17, 0x9000, 0xa000};
  uint32_t id = prof__stack_intern(again, 4);
  assert_true(id == ids[0][17] || id == ids[1][17] || id == ids[2][17] || id == ids[3][17]);
  assert_int_equal(prof__stack_get(0, NULL), 0);
  assert_int_equal(prof__stack_get(0x7fffffff, NULL), 0);
}

static uintptr_t sig_pcs[PROF_STACK_MAX_DEPTH];
static volatile int sig_depth;
static void on_sig(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si;
  sig_depth = prof__stack_capture_uc(uc, sig_pcs, PROF_STACK_MAX_DEPTH);
}
__attribute__((noinline)) static void raise_here(void) {
  raise(SIGUSR1);
  __asm__ volatile("" ::: "memory");
}

/* From a handler, the interrupted stack contains raise_here() below the
 * signal and not the handler itself. */
/* Which function (the nearest start below pc, among this file's functions
 * that can be on the stack of a signal) holds pc? */
static void capture_from_signal_context(void **state);
static void trace_cache_made_after_the_first_sample(void **state);
static uintptr_t owner(uintptr_t pc) {
  uintptr_t fns[] = {(uintptr_t)raise_here, (uintptr_t)on_sig, (uintptr_t)capture_from_signal_context,
                     (uintptr_t)trace_cache_made_after_the_first_sample};
  uintptr_t best = 0;
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (pc > fns[i] && pc - fns[i] < 4096 && fns[i] > best) best = fns[i];
  return best;
}

static void capture_from_signal_context(void **state) {
  (void)state;
  if (!have_unwind()) skip();
  struct sigaction sa = {0}, old;
  sa.sa_sigaction = on_sig;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, &old);
  raise_here();
  sigaction(SIGUSR1, &old, NULL);
  assert_true(sig_depth >= 2);
  int found = 0;
  for (int i = 0; i < sig_depth; i++) {
    if (owner(sig_pcs[i]) == (uintptr_t)raise_here) found = 1;
    if (owner(sig_pcs[i]) == (uintptr_t)on_sig) fail_msg("handler frame kept");
  }
  assert_true(found);
}

/* A thread gets its trace cache (the fast signal-side walk) only after a
 * sample marked it, at its next lazy point; before, the exact walk still
 * finds raise_here() below the signal. Run first, on the main thread: no
 * other test has made its cache yet (and a thread that made one and exits
 * runs libunwind's cache destructor, which ThreadSanitizer's runtime does
 * not survive). */
static void trace_cache_made_after_the_first_sample(void **state) {
  (void)state;
  if (!prof__stack_capture_available()) skip();
  assert_int_equal(prof__stack_thread_fast(), 0);
  prof__stack_lib_init();
  struct sigaction sa = {0}, old;
  sa.sa_sigaction = on_sig;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, &old);
  prof__stack_thread_lazy(); /* not sampled yet: nothing */
  assert_int_equal(prof__stack_thread_fast(), 0);
  sig_depth = 0;
  raise_here();
  assert_true(sig_depth >= 2);
  assert_int_equal(prof__stack_thread_fast(), 0); /* a signal never makes the cache */
  prof__stack_thread_lazy();
  assert_int_equal(prof__stack_thread_fast(), 1);
  sig_depth = 0;
  raise_here(); /* the fast path now */
  sigaction(SIGUSR1, &old, NULL);
  assert_true(sig_depth >= 2);
  int found = 0;
  for (int i = 0; i < sig_depth; i++)
    if (owner(sig_pcs[i]) == (uintptr_t)raise_here) found = 1;
  assert_true(found);
}

/* Emitted chunks decode to the interned stacks, and the module map names
 * this executable. The decoder here is independent of the analyzer's. */
static void emit_writes_stacks_and_modules(void **state) {
  (void)state;
  const char *path = th_tmp_path("stacks", ".mlpt");
  char err[256];
  prof__tw *tw = prof__tw_open(path, NULL, 0, err);
  assert_non_null(tw);
  uintptr_t s[2] = {0x4444, 0x5555};
  uint32_t id = prof__stack_intern(s, 2);
  assert_true(id >= 1);
  assert_int_equal(prof__stack_emit(tw), 0);
  assert_int_equal(prof__tw_close(tw, NULL, 0), 0);
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  int found_stack = 0, found_exe = 0, rc;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind != PROF_REC_CHUNK) continue;
    prof__cur c = {rec.data, rec.data + rec.len, 0};
    uint64_t count = prof__cur_varint(&c);
    for (uint64_t i = 0; i < count && !c.bad; i++) {
      if (rec.chunk_type == PROF_CHUNK_STACKS) {
        uint64_t sid = prof__cur_varint(&c), depth = prof__cur_varint(&c);
        uintptr_t prev = 0, got[PROF_STACK_MAX_DEPTH];
        for (uint64_t k = 0; k < depth && k < PROF_STACK_MAX_DEPTH; k++)
          got[k] = prev = prev + (uintptr_t)prof__cur_svarint(&c);
        if (sid == id && depth == 2 && got[0] == 0x4444 && got[1] == 0x5555) found_stack = 1;
      } else if (rec.chunk_type == PROF_CHUNK_MODULES) {
        size_t len;
        const char *p = prof__cur_str(&c, &len);
        uint64_t bias = prof__cur_varint(&c), start = prof__cur_varint(&c), size = prof__cur_varint(&c);
        size_t blen;
        prof__cur_str(&c, &blen);
        uintptr_t fn = (uintptr_t)emit_writes_stacks_and_modules;
        if (p && len == strlen(exe) && memcmp(p, exe, len) == 0 && fn >= start && fn < start + size) {
          found_exe = 1;
          assert_true(bias <= start);
        }
      }
    }
    assert_false(c.bad);
  }
  assert_int_equal(rc, 0);
  prof__reader_close(r);
  assert_true(found_stack);
  assert_true(found_exe);
}

/* readlink() goes through here: the module listing reads the executable's
 * path with it, so the count shows when the full listing ran. */
ssize_t __real_readlink(const char *path, char *buf, size_t n);
static int readlinks;
ssize_t __wrap_readlink(const char *path, char *buf, size_t n) {
  readlinks++;
  return __real_readlink(path, buf, n);
}

/* Count the MODULES chunks of a trace. */
static int module_chunks(const char *path) {
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  int n = 0;
  while (prof__reader_next(r, &rec) == 1)
    if (rec.kind == PROF_REC_CHUNK && rec.chunk_type == PROF_CHUNK_MODULES) n++;
  prof__reader_close(r);
  return n;
}

/* Every writer cycle emits; while nothing was loaded or unloaded the
 * module map is neither written again nor even listed (no walk over the
 * modules, no readlink); a dlopen brings the listing and one new map. */
static void unchanged_module_map_is_not_listed_again(void **state) {
  (void)state;
  const char *path = th_tmp_path("modmap", ".mlpt");
  char err[256];
  prof__tw *tw = prof__tw_open(path, NULL, 0, err);
  assert_non_null(tw);
  assert_int_equal(prof__stack_emit(tw), 0); /* the map, unless an earlier test wrote it */
  readlinks = 0;
  for (int i = 0; i < 5; i++) assert_int_equal(prof__stack_emit(tw), 0);
  assert_int_equal(readlinks, 0);
  assert_int_equal(prof__tw_close(tw, NULL, 0), 0);
  assert_true(module_chunks(path) <= 1);

  path = th_tmp_path("modmap2", ".mlpt");
  tw = prof__tw_open(path, NULL, 0, err);
  assert_non_null(tw);
  void *h = dlopen("libdl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!h) skip();
  for (int i = 0; i < 3; i++) assert_int_equal(prof__stack_emit(tw), 0);
  assert_int_equal(readlinks, 1);
  assert_int_equal(prof__tw_close(tw, NULL, 0), 0);
  assert_int_equal(module_chunks(path), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trace_cache_made_after_the_first_sample), /* first: see there */
      cmocka_unit_test(capture_sees_the_callers),
      cmocka_unit_test(intern_dedups_and_separates),
      cmocka_unit_test(concurrent_interns_agree),
      cmocka_unit_test(capture_from_signal_context),
      cmocka_unit_test(emit_writes_stacks_and_modules),
      cmocka_unit_test(unchanged_module_map_is_not_listed_again), /* last: it leaves the map written */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
