/* session.h — state shared by the core modules: the global "enabled" flag,
 * the per-thread state and its registry, the name table, misuse counters,
 * and the hooks through which producers reach the writer thread. The
 * allocation guard and the allocator marks come with it (guard.h). */
#ifndef PROF_SESSION_H
#define PROF_SESSION_H

#include <stdint.h>

#include "mlprof.h"
#include "clock.h"
#include "guard.h"
#include "ring.h"
#include "trace/settings.h"
#include "trace/trace.h"

struct prof__tw;

#define PROF_MAX_DEPTH 256         /* open ranges tracked per thread */
#define PROF_NAME_CACHE 256        /* pointer -> id cache slots per thread */
#define PROF_DROPPED_BIT 0x80000000u

typedef struct prof__name_slot {
  const char *p;
  uint32_t id;
} prof__name_slot;

typedef struct prof__thread {
  prof__ring ring;
  uint32_t tid;
  uint32_t depth;                  /* open ranges (may exceed PROF_MAX_DEPTH) */
  uint32_t stack[PROF_MAX_DEPTH];  /* name ids of open ranges; DROPPED_BIT: begin was lost */
  prof__name_slot cache[PROF_NAME_CACHE];
  int exited;                      /* set (release) when the thread ended */
  uint32_t busy;                   /* inside an API call (this thread and its signal handlers only) */
  uint64_t reentry_lost;           /* events of calls made by a signal handler during a call */
  /* writer-side bookkeeping */
  uint64_t lost_reported;
  int announced;                   /* atomic: cleared by a rename */
  char name[32];                   /* under name_lock once the thread is listed */
  uint8_t name_lock;               /* a spin lock: prof__thread_rename and the writer's copy */
  struct prof__thread *next;
} prof__thread;

/* Misuse kinds, counted and written to the footer as "misuse.<name>". */
#define PROF_MISUSE(X)                                                          \
  X(POP_EMPTY, "pop_without_push")                                              \
  X(STOP_IDLE, "stop_without_start")                                            \
  X(START_TWICE, "start_while_open")                                            \
  X(NULL_NAME, "null_name")                                                     \
  X(NOT_RUNNING, "call_while_not_running")                                      \
  X(TOO_DEEP, "range_too_deep")                                                 \
  X(BAD_ID, "bad_name_id")
enum {
#define PROF__MU_ENUM(e, s) PROF_MU_##e,
  PROF_MISUSE(PROF__MU_ENUM)
#undef PROF__MU_ENUM
  PROF_MU_COUNT
};

extern int prof__enabled;             /* 1 while events are recorded */
extern __thread prof__thread *prof__self __attribute__((tls_model("initial-exec")));
extern uint64_t prof__misuse[PROF_MU_COUNT];

/* ---- signal handlers ------------------------------------------------------
 * The ring has one producer: the thread. A signal handler that calls the API
 * while the interrupted code of the same thread is inside an API call would
 * interleave two ring writes. Every call that writes the ring brackets its
 * work with prof__call_enter()/prof__call_leave(); a call entered during
 * another one records nothing and counts its event as lost, exactly
 * (prof__thread_lost, the footer's events_lost_in_signal_handlers). */
extern uint64_t prof__reentry_lost_total;

static inline int prof__call_enter(prof__thread *t) {
  if (PROF_UNLIKELY(__atomic_load_n(&t->busy, __ATOMIC_RELAXED))) {
    __atomic_fetch_add(&t->reentry_lost, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&prof__reentry_lost_total, 1, __ATOMIC_RELAXED);
    return 0;
  }
  __atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the flag is set before the ring is touched */
  return 1;
}

static inline void prof__call_leave(prof__thread *t) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the ring write is done before the flag drops */
  __atomic_store_n(&t->busy, 0, __ATOMIC_RELAXED);
}

/* Events of thread t that were not recorded: ring full, or a call from a
 * signal handler during a call. */
static inline uint64_t prof__thread_lost(const prof__thread *t) {
  return prof__ring_dropped(&t->ring) + __atomic_load_n(&t->reentry_lost, __ATOMIC_RELAXED);
}

static inline void prof__misuse_count(int kind) {
  __atomic_fetch_add(&prof__misuse[kind], 1, __ATOMIC_RELAXED);
}
uint64_t prof__misuse_total(void);

/* Slow path of every annotation: registers the calling thread when the
 * profiler runs. Returns NULL (after counting) when nothing may be recorded. */
prof__thread *prof__thread_get_slow(void);
/* A new name for a listed thread (NVTX's nvtxNameOsThread): the writer
 * announces the thread again. prof__thread_name copies the current one. */
void prof__thread_rename(prof__thread *t, const char *name);
void prof__thread_name(prof__thread *t, char *out, size_t n);
/* Registry walk for the writer thread. */
prof__thread *prof__threads_head(void);
/* Remove an exited thread (writer thread only; `prev` NULL for the head). */
void prof__threads_unlink(prof__thread *prev, prof__thread *t);
uint64_t prof__threads_count(void);
int prof__threads_setup(uint32_t ring_bytes);

/* Name table: content-interned strings with dense ids from 1. */
uint32_t prof__intern(const char *s);
uint32_t prof__intern_len(const char *s, size_t len);
/* Write strings [*written, count) to the trace; updates *written. */
int prof__intern_emit(struct prof__tw *w, uint32_t *written);
uint32_t prof__intern_count(void);
/* Copy the text of name `id` into out (n bytes). Returns 1, or 0 for an
 * unknown id. Takes the table's lock: not for the hot path. */
int prof__intern_copy(uint32_t id, char *out, size_t n);
/* Slow path of the per-thread pointer cache. */
uint32_t prof__name_miss(prof__thread *t, const char *p, unsigned slot);

static inline unsigned prof__name_slot_of(const char *p) {
  return (unsigned)(((uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 56) & (PROF_NAME_CACHE - 1);
}
static inline uint32_t prof__name_id(prof__thread *t, const char *p) {
  unsigned s = prof__name_slot_of(p);
  if (PROF_LIKELY(t->cache[s].p == p)) return t->cache[s].id;
  return prof__name_miss(t, p, s);
}

/* ---- Hooks for other producers ------------------------------------------ */

/* Called by the writer thread on every cycle (final = 0) and once at
 * shutdown (final = 1), before the trace chunks of that cycle are flushed.
 * Producers use it to emit their own chunks (prof__tw_chunk) and counters.
 * Register before or during prof_init(); at most 16 hooks. */
typedef void (*prof__writer_hook)(struct prof__tw *w, int final, void *arg);
int prof__writer_hook_add(prof__writer_hook fn, void *arg);

/* Queue a key/value pair for a META chunk (written on the next cycle).
 * Copies both strings. Safe from any thread, not from signal handlers. */
int prof__meta_add(const char *key, const char *value);

/* Session facts for producers. */
const char *prof__session_path(void);
int prof__session_running(void);
/* The library's destructors: prof_shutdown(), and when the image is never
 * unloaded (preloaded), so that they mean the process's exit, with the
 * final cycle run on the calling thread rather than woken on the writer's
 * and joined (prof__writer_stop_here). Idempotent, as prof_shutdown(). */
int prof__session_exit(void);
/* MLPROF_* settings: prof__env (trace/settings.h, included here). */

/* Count `n` events lost by a producer outside the rings (e.g. records a
 * GPU driver dropped): they join prof_stats.events_lost and the footer. */
void prof__writer_lost_add(uint64_t n);

/* Push an event for the calling thread from core code (not signal-safe). */
void prof__emit(uint8_t type, uint8_t cat, uint32_t name, uint64_t a, uint64_t b);
/* Same with the aux field; returns 1 if recorded. */
int prof__emit_aux(uint8_t type, uint8_t cat, uint16_t aux, uint32_t name, uint64_t a, uint64_t b);

#endif
