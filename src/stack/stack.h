/* stack.h — call-stack capture and the process-wide stack table.
 *
 * Shared by memory profiling (stacks of allocations) and CPU sampling
 * (stacks of samples, taken inside a signal handler). Capture goes through
 * libunwind (the only file that includes it is src/stack/unwind.c); stacks
 * are deduplicated into a lock-free, preallocated table so the same stack
 * is written to the trace once (PROF_CHUNK_STACKS) and events refer to it
 * by id. The loaded-module map (path, load address, size, build id) goes
 * into PROF_CHUNK_MODULES so addresses are symbolized after the run.
 */
#ifndef PROF_STACK_H
#define PROF_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define PROF_STACK_MAX_DEPTH 64

/* Capture the caller's return addresses, innermost first, skipping `skip`
 * frames of the profiler itself. Async-signal-safe, no allocation after
 * prof__stack_thread_init(). Returns the depth (0 on failure). */
int prof__stack_capture(uintptr_t *pcs, int max, int skip);

/* Capture from a signal handler's ucontext (the interrupted code's stack).
 * Async-signal-safe. Returns the depth. */
int prof__stack_capture_uc(void *ucontext, uintptr_t *pcs, int max);

/* 1 when this build can capture stacks (libunwind), else 0. */
int prof__stack_capture_available(void);

/* libunwind's global set-up (its caching policy), once per process, on a
 * host thread before any capture (prof_init). Idempotent. */
void prof__stack_lib_init(void);

/* Prepare the calling thread for the fast capture (libunwind's per-thread
 * trace cache, 256 KiB) outside of any signal handler; implies
 * prof__stack_lib_init(). Idempotent, cheap after the first call. */
void prof__stack_thread_init(void);

/* prof__stack_thread_init() if a signal has sampled this thread since and
 * it is not prepared yet; else nothing (one TLS read). Call it outside
 * signal handlers, at points the thread passes often (step boundaries). */
void prof__stack_thread_lazy(void);

/* 1 once the calling thread has its trace cache (fast signal-side capture). */
int prof__stack_thread_fast(void);

/* Intern a stack; returns its id (>= 1), or 0 when the table is full (the
 * caller counts a lost stack). Lock-free and async-signal-safe. */
uint32_t prof__stack_intern(const uintptr_t *pcs, int depth);

/* 1 once any stack has been interned. */
int prof__stack_any(void);

/* Writer thread: write stacks interned since the last call, and the module
 * map when it changed (dlopen); nothing before the first stack (the map
 * only resolves stacks, and listing it cost a trivial program's exit about
 * 0.2 ms). Returns 0 or a negative error. */
int prof__stack_emit(prof__tw *tw);

/* Addresses of an interned stack (innermost first): returns the depth and
 * sets *pcs, or 0 for an unknown id. Lock-free; for tests and tools. */
int prof__stack_get(uint32_t id, const uintptr_t **pcs);

/* Call fn for each complete stack from id `from` (0: the first) on, in id
 * order, stopping at the first one still being filled; returns the id to
 * start from next time. Writer thread (any one reader); for consumers
 * that look into new stacks (Python frames, src/cpu/pyframes.c). */
uint32_t prof__stack_scan(uint32_t from, void (*fn)(const uintptr_t *pcs, int depth, void *arg), void *arg);

/* A rewrite of captured stacks (pcs[0..depth), innermost first, at most
 * max entries; returns the new depth) that a producer installs for the
 * others: the CPU module's merge of Python frames. Async-signal-safe as
 * the rewrite itself; none installed: the stack is left alone. */
typedef int (*prof__stack_rewrite_fn)(uintptr_t *pcs, int depth, int max);
void prof__stack_set_rewrite(prof__stack_rewrite_fn fn);
int prof__stack_rewrite(uintptr_t *pcs, int depth, int max);

/* Stacks that could not be interned (table full). */
uint64_t prof__stack_lost(void);

#endif
