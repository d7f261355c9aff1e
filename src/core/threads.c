/* threads.c — per-thread state and the registry the writer walks.
 *
 * A thread gets its state (ring, range stack, name cache) on its first
 * event. Registration pushes onto a lock-free list head; only the writer
 * thread removes entries, and only after the thread has exited and its ring
 * is drained, so a producer never waits for the writer. A pthread key's
 * destructor marks the thread exited.
 *
 * Short-lived threads: the writer keeps the state of exited, drained
 * threads, reset as new, in a pool (at most POOL_RINGS, whose rings hold at
 * most POOL_BYTES of committed memory: a thread that wrote a few events
 * committed a page or two of its ring), and a starting thread takes one of
 * those. The pool's lock is only tried: a thread that finds it taken
 * allocates instead, it never waits. A fresh ring is mapped, not zeroed
 * (ring.c). So a thread's first event costs two system calls (its id and
 * name) when the pool has a state, and a mapping and a page fault more
 * when it has none; and the writer rarely unmaps a ring.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session.h"

__thread prof__thread *prof__self __attribute__((tls_model("initial-exec")));
static __thread int self_dead __attribute__((tls_model("initial-exec")));

static prof__thread *head;
static uint64_t nthreads;
static pthread_key_t key;
static int key_ok;
static uint32_t ring_bytes = 1u << 20;

/* States of exited threads, ready for new ones (a stack through `next`). */
#define POOL_RINGS 256u
#define POOL_BYTES ((uint64_t)16 << 20) /* committed ring memory kept: 16 full rings of the default size */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static prof__thread *pool;
static unsigned pool_n;
static uint64_t pool_bytes;

static uint64_t committed_bytes(const prof__ring *r) { return r->committed * sizeof(prof__slot); }

/* A starting thread: a recycled state, or NULL (none, or the lock is busy). */
static prof__thread *pool_take(void) {
  if (pthread_mutex_trylock(&pool_mu) != 0) return NULL;
  prof__thread *t = pool;
  if (t) {
    pool = t->next;
    pool_n--;
    pool_bytes -= committed_bytes(&t->ring);
    t->next = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  return t;
}

/* Writer thread: keep the state of an exited, drained thread for a later
 * one, or free it when the pool is full or its ring has another size. */
static void pool_give(prof__thread *t) {
  prof__ring ring = t->ring;
  if (prof__ring_capacity(&ring) == prof__ring_slots_for(ring_bytes)) {
    prof__ring_reset(&ring);
    memset(t, 0, sizeof *t);
    t->ring = ring;
    pthread_mutex_lock(&pool_mu);
    int kept = pool_n < POOL_RINGS && pool_bytes + committed_bytes(&ring) <= POOL_BYTES;
    if (kept) {
      t->next = pool;
      pool = t;
      pool_n++;
      pool_bytes += committed_bytes(&ring);
    }
    pthread_mutex_unlock(&pool_mu);
    if (kept) return;
  }
  prof__ring_free(&t->ring);
  free(t);
}

static prof__thread *thread_new(void) {
  prof__thread *t = pool_take();
  if (t) return t;
  t = calloc(1, sizeof *t);
  if (t && prof__ring_init(&t->ring, ring_bytes) != 0) {
    free(t);
    t = NULL;
  }
  return t;
}

static void on_thread_exit(void *p) {
  prof__thread *t = p;
  prof__self = NULL;
  self_dead = 1;
  __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
}

int prof__threads_setup(uint32_t bytes) {
  ring_bytes = bytes;
  if (!key_ok) {
    if (pthread_key_create(&key, on_thread_exit) != 0) return PROF_ENOMEM;
    key_ok = 1;
  }
  return 0;
}

prof__thread *prof__thread_get_slow(void) {
  if (!__atomic_load_n(&prof__enabled, __ATOMIC_ACQUIRE) || self_dead) {
    prof__misuse_count(PROF_MU_NOT_RUNNING);
    return NULL;
  }
  if (prof__self) return prof__self;
  prof__guard_begin();
  prof__thread *t = thread_new();
  if (!t) {
    prof__guard_end();
    return NULL;
  }
  t->tid = (uint32_t)syscall(SYS_gettid);
  /* The calling thread's name: one prctl, where pthread_getname_np reads a
   * /proc file. */
  if (prctl(PR_GET_NAME, t->name, 0, 0, 0) != 0) t->name[0] = 0;
  if (key_ok) pthread_setspecific(key, t);
  prof__guard_end();
  prof__thread *old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
  do {
    t->next = old;
  } while (!__atomic_compare_exchange_n(&head, &old, t, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
  __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
  prof__self = t;
  return t;
}

prof__thread *prof__threads_head(void) { return __atomic_load_n(&head, __ATOMIC_ACQUIRE); }

void prof__threads_unlink(prof__thread *prev, prof__thread *t) {
  if (prev) {
    prev->next = t->next;
  } else {
    prof__thread *expected = t;
    if (!__atomic_compare_exchange_n(&head, &expected, t->next, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
      /* A new thread was pushed in front meanwhile: find the predecessor. */
      prof__thread *p = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
      while (p && p->next != t) p = p->next;
      if (!p) return;
      p->next = t->next;
    }
  }
  pool_give(t);
}

uint64_t prof__threads_count(void) { return __atomic_load_n(&nthreads, __ATOMIC_RELAXED); }

static void name_lock(prof__thread *t) {
  while (__atomic_test_and_set(&t->name_lock, __ATOMIC_ACQUIRE)) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

static void name_unlock(prof__thread *t) { __atomic_clear(&t->name_lock, __ATOMIC_RELEASE); }

void prof__thread_rename(prof__thread *t, const char *name) {
  char buf[sizeof t->name];
  snprintf(buf, sizeof buf, "%s", name ? name : "");
  name_lock(t);
  memcpy(t->name, buf, sizeof buf);
  name_unlock(t);
  __atomic_store_n(&t->announced, 0, __ATOMIC_RELEASE);
}

void prof__thread_name(prof__thread *t, char *out, size_t n) {
  char buf[sizeof t->name];
  name_lock(t);
  memcpy(buf, t->name, sizeof buf);
  name_unlock(t);
  buf[sizeof buf - 1] = 0;
  snprintf(out, n, "%s", buf);
}
