/* guard.c — the calling thread's allocator state as the profiler sees it
 * (guard.h).
 *
 * The "inside the profiler" guard: a per-thread depth that marks the
 * calling thread's allocations as the profiler's own, so memory profiling
 * (src/mem) neither counts nor records them. The core's allocating paths
 * (writer thread, thread registration, name table) and producers that
 * allocate beside the host (CUPTI buffers) bracket their work with it.
 *
 * The allocator marks: the malloc interposer (src/mem) says when the thread
 * is inside the allocator, and prof__in_allocator() answers a signal
 * handler (the stack producer's unwinder) from them.
 */
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guard.h"

__thread int prof__guard_depth __attribute__((tls_model("initial-exec")));

void prof__guard_begin(void) { prof__guard_depth++; }

void prof__guard_end(void) {
  if (prof__guard_depth > 0) prof__guard_depth--;
}

__thread unsigned prof__in_alloc __attribute__((tls_model("initial-exec")));
__thread prof__alloc_mark prof__alloc_at __attribute__((tls_model("initial-exec")));
uintptr_t prof__alloc_text_lo, prof__alloc_text_hi;

/* glibc's malloc runs in a few KiB of stack: a marked slot further above
 * the interrupted stack pointer belongs to a call that has returned. */
#define ALLOC_STACK_MAX ((uintptr_t)64 << 10)

int prof__in_allocator(uintptr_t pc, uintptr_t sp) {
  if (prof__in_alloc) return 1;
  uintptr_t lo = __atomic_load_n(&prof__alloc_text_lo, __ATOMIC_RELAXED);
  uintptr_t hi = __atomic_load_n(&prof__alloc_text_hi, __ATOMIC_RELAXED);
  if (pc - lo >= hi - lo) return 0; /* not in the allocator's library (or no mark in use) */
  uintptr_t slot = prof__alloc_at.slot, ra = prof__alloc_at.ra;
  if (!slot || sp > slot || slot - sp > ALLOC_STACK_MAX) return 0;
  uintptr_t word = 0;
  struct iovec local = {&word, sizeof word}, remote = {(void *)slot, sizeof word};
  /* The slot may lie on a stack the thread has since left: read it without
   * risking a fault. */
  if (syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L) != (long)sizeof word) return 1;
  return word == ra;
}
