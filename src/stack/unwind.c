/* unwind.c — call-stack capture through libunwind (the only file that
 * includes it).
 *
 * prof__stack_capture() walks the caller's own stack (allocation sites);
 * prof__stack_capture_uc() walks the stack a signal interrupted (CPU
 * samples).
 *
 * libunwind's set-up is not thread-safe and not async-signal-safe, so none
 * of it may run lazily on a background thread or in a signal handler:
 * prof__stack_lib_init() selects the per-thread caching policy, which runs
 * libunwind's global init (register maps, memory validation); the stack
 * and CPU modules' starts call it inside prof_init(), on the caller's
 * thread. After that, walking from a signal is safe on any thread: the fast
 * unw_backtrace() path is taken only on threads whose trace cache already
 * exists (created outside signal context, by prof__stack_thread_init() or a
 * prof__stack_capture() call); creating it needs pthread_setspecific, which
 * may allocate. Other threads use the exact walk, which needs no
 * per-thread set-up.
 *
 * A trace cache is 256 KiB that libunwind fills at once: 64 page faults,
 * most of a trivial program's start-up cost. So prof_init() does not make
 * one: a thread's first sample marks it (a TLS flag, signal-safe), and
 * prof__stack_thread_lazy(), called at the thread's next step boundary,
 * makes it then (as does the thread's next allocation-site capture,
 * prof__stack_capture). Until then the exact walk serves.
 * Without libunwind both return 0 (no stacks; documented).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "stack.h"
#include "core/guard.h"
#include "core/session.h"

#if defined(MLPROF_HAVE_LIBUNWIND) && !defined(MLPROF_NO_UNWIND)
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define SCRATCH (PROF_STACK_MAX_DEPTH + 16)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int policy_set;
static __thread int thread_ready __attribute__((tls_model("initial-exec")));

static __thread int thread_sampled __attribute__((tls_model("initial-exec")));

static void set_policy(void) {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  __atomic_store_n(&policy_set, 1, __ATOMIC_RELEASE);
}

int prof__stack_capture_available(void) { return 1; }

void prof__stack_lib_init(void) { pthread_once(&once, set_policy); }

void prof__stack_thread_init(void) {
  if (thread_ready) return;
  pthread_once(&once, set_policy);
  void *warm[4];
  unw_backtrace(warm, 4); /* creates this thread's trace cache outside signals */
  thread_ready = 1;
}

void prof__stack_thread_lazy(void) {
  if (!thread_ready && thread_sampled) prof__stack_thread_init();
}

int prof__stack_thread_fast(void) { return thread_ready; }

int prof__stack_capture(uintptr_t *pcs, int max, int skip) {
  if (!pcs || max <= 0) return 0;
  if (skip < 0) skip = 0;
  if (max > PROF_STACK_MAX_DEPTH) max = PROF_STACK_MAX_DEPTH;
  void *buf[SCRATCH + PROF_STACK_MAX_DEPTH];
  int want = max + skip + 1; /* +1: this function's own frame */
  if (want > (int)(sizeof buf / sizeof buf[0])) want = (int)(sizeof buf / sizeof buf[0]);
  int n = unw_backtrace(buf, want);
  thread_ready = 1; /* the trace cache exists now, made outside a signal */
  int first = skip + 1, d = 0;
  for (int i = first; i < n && d < max; i++) pcs[d++] = (uintptr_t)buf[i];
  return d;
}

/* Slow, exact walk from the interrupted context. */
static int walk_uc(void *ucontext, uintptr_t *pcs, int max) {
  unw_cursor_t cur;
  if (unw_init_local2(&cur, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) < 0) return 0;
  int d = 0;
  do {
    unw_word_t ip = 0;
    if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    pcs[d++] = (uintptr_t)ip;
  } while (d < max && unw_step(&cur) > 0);
  return d;
}

static uintptr_t uc_ip(void *ucontext) {
#if defined(__x86_64__)
  return (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.pc;
#else
  (void)ucontext;
  return 0;
#endif
}

static uintptr_t uc_sp(void *ucontext) {
#if defined(__x86_64__)
  return (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
  return (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.sp;
#else
  (void)ucontext;
  return 0;
#endif
}

int prof__stack_capture_uc(void *ucontext, uintptr_t *pcs, int max) {
  if (!ucontext || !pcs || max <= 0) return 0;
  if (max > PROF_STACK_MAX_DEPTH) max = PROF_STACK_MAX_DEPTH;
  uintptr_t ip = uc_ip(ucontext);
  if (prof__in_allocator(ip, uc_sp(ucontext))) {
    /* Interrupted inside the allocator: libunwind could allocate (its TLS
     * after a dlopen) and deadlock on the allocator's lock. Keep the
     * interrupted instruction only. */
    if (!ip) return 0;
    pcs[0] = ip;
    return 1;
  }
  if (!thread_ready) thread_sampled = 1; /* its trace cache at its next step (prof__stack_thread_lazy) */
  if (__atomic_load_n(&policy_set, __ATOMIC_ACQUIRE) && thread_ready && ip) {
    /* Fast path: trace from here through the signal frame, then keep the
     * part from the interrupted instruction on. */
    void *buf[SCRATCH + PROF_STACK_MAX_DEPTH];
    int n = unw_backtrace(buf, max + 16);
    for (int i = 0; i < n && i < 16; i++) {
      if ((uintptr_t)buf[i] != ip) continue;
      int d = 0;
      for (int k = i; k < n && d < max; k++) pcs[d++] = (uintptr_t)buf[k];
      return d;
    }
  }
  return walk_uc(ucontext, pcs, max);
}

#else /* no libunwind: no stacks */

int prof__stack_capture_available(void) { return 0; }
void prof__stack_lib_init(void) {}
void prof__stack_thread_init(void) {}
void prof__stack_thread_lazy(void) {}
int prof__stack_thread_fast(void) { return 0; }
int prof__stack_capture(uintptr_t *pcs, int max, int skip) {
  (void)pcs, (void)max, (void)skip;
  return 0;
}
int prof__stack_capture_uc(void *ucontext, uintptr_t *pcs, int max) {
  (void)ucontext, (void)pcs, (void)max;
  return 0;
}

#endif
