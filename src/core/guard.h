/* guard.h — what the profiler knows about the calling thread's allocator
 * state (guard.c): its own allocations (the guard), and whether the thread
 * is inside the allocator (the marks the malloc interposer sets), which a
 * signal handler must know before it runs code that may allocate.
 */
#ifndef PROF_GUARD_H
#define PROF_GUARD_H

#include <stdint.h>

/* Mark allocations of the calling thread as the profiler's own until the
 * matching end (nests), so memory profiling leaves them out.
 * prof__guard_depth > 0: inside the profiler. */
extern __thread int prof__guard_depth __attribute__((tls_model("initial-exec")));
void prof__guard_begin(void);
void prof__guard_end(void);

/* Non-zero while the calling thread is inside the allocator (set by the
 * malloc interposer around every call). A signal handler that sees it must
 * not run code that may allocate, such as libunwind's first touch of its
 * thread-local state after a dlopen (which resizes the thread's TLS vector
 * with malloc): the interrupted allocator holds its lock. */
extern __thread unsigned prof__in_alloc __attribute__((tls_model("initial-exec")));
/* The cheaper mark of malloc and free (x86-64, glibc as the next
 * allocator): instead of setting prof__in_alloc around the call, which
 * costs them their tail call, the interposer records where its caller's
 * return address lies on the stack and what it is, then jumps into glibc.
 * While that call runs, the slot still holds that return address.
 * prof__alloc_text_lo/hi bound the allocator's library (libc): all code the
 * allocator runs lies there. Zero when the mark is not used. */
typedef struct prof__alloc_mark {
  uintptr_t slot; /* address of the return-address slot of the latest call */
  uintptr_t ra;   /* the return address stored there */
} prof__alloc_mark;
extern __thread prof__alloc_mark prof__alloc_at __attribute__((tls_model("initial-exec")));
extern uintptr_t prof__alloc_text_lo, prof__alloc_text_hi;
/* From a signal handler on the interrupted thread: 1 when the interrupted
 * code (instruction pc, stack pointer sp) may be inside the allocator, so
 * nothing that may allocate can run; 0 when it certainly is not. Reads the
 * marked slot with process_vm_readv (never faults); any doubt answers 1. */
int prof__in_allocator(uintptr_t pc, uintptr_t sp);

#endif /* PROF_GUARD_H */
