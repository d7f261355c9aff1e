/* bgwriter.c — the background writer thread.
 *
 * Every flush period it drains each registered thread's ring (converting
 * clock ticks to nanoseconds), runs the producers' hooks, queues new names
 * and thread records, and every ~100 ms (or 1 MiB of events) flushes one
 * round of chunks, so a killed process loses at most the last round. It is
 * the only place that touches the file; producers never wait for it. A
 * write error is reported once, stops recording, and is returned by
 * prof_shutdown().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bgwriter.h"
#include "session.h"

#define BATCH 4096
#define FLUSH_BYTES (1u << 20)
#define FLUSH_NS 100000000ull

static struct {
  pthread_t thread;
  int running;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  uint32_t flush_ms;
  prof__tw *tw;
  const char *path;
  uint32_t strings_written;
  uint64_t events, lost_unlinked, lost_cache, bytes;
  int failed;
  int rc;
  uint64_t last_flush_ns;
  prof__event batch[BATCH];
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

struct hook {
  prof__writer_hook fn;
  void *arg;
};
static struct hook hooks[16];
static int nhooks;

int prof__writer_hook_add(prof__writer_hook fn, void *arg) {
  int i = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE);
  if (i >= 16 || !fn) return PROF_EINVAL;
  hooks[i].fn = fn;
  hooks[i].arg = arg;
  __atomic_store_n(&nhooks, i + 1, __ATOMIC_RELEASE);
  return 0;
}

/* ---- META queue ---------------------------------------------------------- */

static pthread_mutex_t meta_mu = PTHREAD_MUTEX_INITIALIZER;
static prof__kv *meta_q;
static size_t meta_n, meta_cap;

int prof__meta_add(const char *key, const char *value) {
  if (!key || !value) return PROF_EINVAL;
  pthread_mutex_lock(&meta_mu);
  int rc = 0;
  if (meta_n == meta_cap) {
    size_t c = meta_cap ? meta_cap * 2 : 16;
    prof__kv *q = realloc(meta_q, c * sizeof *q);
    if (!q) rc = PROF_ENOMEM;
    else {
      meta_q = q;
      meta_cap = c;
    }
  }
  if (!rc) {
    meta_q[meta_n].key = strdup(key);
    meta_q[meta_n].value = strdup(value);
    if (meta_q[meta_n].key && meta_q[meta_n].value) meta_n++;
    else rc = PROF_ENOMEM;
  }
  pthread_mutex_unlock(&meta_mu);
  return rc;
}

static int meta_emit(prof__tw *tw) {
  pthread_mutex_lock(&meta_mu);
  int rc = meta_n ? prof__tw_meta(tw, meta_q, meta_n) : 0;
  for (size_t i = 0; i < meta_n; i++) {
    free((char *)meta_q[i].key);
    free((char *)meta_q[i].value);
  }
  meta_n = 0;
  pthread_mutex_unlock(&meta_mu);
  return rc;
}

/* ---- draining ------------------------------------------------------------ */

static void io_failed(int rc) {
  if (W.failed) return;
  W.failed = 1;
  W.rc = PROF_EIO;
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  fprintf(stderr,
          "mlprof: writing trace '%s' failed (%s); recording stopped, the training continues "
          "and later events are counted as lost\n",
          W.path, rc == PROF_ENOMEM ? "out of memory" : strerror(errno ? errno : EIO));
}

/* Drain one ring; returns events read. */
static uint64_t drain_thread(prof__thread *t) {
  uint64_t total = 0;
  size_t n;
  while ((n = prof__ring_read(&t->ring, W.batch, BATCH)) > 0) {
    total += n;
    if (W.failed) {
      W.lost_unlinked += n; /* read and discarded: counted as lost */
      continue;
    }
    for (size_t i = 0; i < n; i++) W.batch[i].ts = prof__ticks_to_ns(W.batch[i].ts);
    int rc = prof__tw_events(W.tw, t->tid, W.batch, n);
    if (rc) io_failed(rc);
  }
  return total;
}

static void drain_all(void) {
  uint64_t live_lost = 0;
  prof__thread *prev = NULL, *t = prof__threads_head();
  while (t) {
    prof__thread *next = t->next;
    int exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    uint64_t n = drain_thread(t);
    if (!W.failed) __atomic_store_n(&W.events, W.events + n, __ATOMIC_RELAXED);
    uint64_t lost = prof__ring_dropped(&t->ring);
    if (!W.failed && (!t->announced || lost != t->lost_reported || exited)) {
      int rc = prof__tw_thread(W.tw, t->tid, t->name, lost, exited);
      if (rc) io_failed(rc);
      t->announced = 1;
      t->lost_reported = lost;
    }
    if (exited) {
      W.lost_unlinked += lost;
      prof__threads_unlink(prev, t);
    } else {
      live_lost += lost;
      prev = t;
    }
    t = next;
  }
  __atomic_store_n(&W.lost_cache, W.lost_unlinked + live_lost, __ATOMIC_RELAXED);
}

static void cycle(int final) {
  drain_all();
  for (int i = 0; i < __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE); i++)
    hooks[i].fn(W.failed ? NULL : W.tw, final, hooks[i].arg);
  if (W.failed) return;
  int rc = meta_emit(W.tw);
  if (!rc) rc = prof__intern_emit(W.tw, &W.strings_written);
  uint64_t now = prof__mono_ns();
  if (!rc && (final || prof__tw_pending(W.tw) >= FLUSH_BYTES || now - W.last_flush_ns >= FLUSH_NS)) {
    rc = prof__tw_flush(W.tw);
    W.last_flush_ns = now;
  }
  if (rc) io_failed(rc);
  __atomic_store_n(&W.bytes, prof__tw_bytes(W.tw), __ATOMIC_RELAXED);
}

static void *writer_main(void *arg) {
  (void)arg;
  prof__clock_calibrate(20);
  char v[64];
  snprintf(v, sizeof v, "%.12g", prof__clk.ns_per_tick);
  prof__meta_add("clock.ns_per_tick", v);
  W.last_flush_ns = prof__mono_ns();
  for (;;) {
    pthread_mutex_lock(&W.mu);
    if (!W.stop) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)W.flush_ms * 1000000ull;
      ts.tv_sec += (time_t)(ns / 1000000000ull);
      ts.tv_nsec = (long)(ns % 1000000000ull);
      pthread_cond_timedwait(&W.cv, &W.mu, &ts);
    }
    int stop = W.stop;
    pthread_mutex_unlock(&W.mu);
    cycle(stop);
    if (stop) break;
  }
  return NULL;
}

int prof__writer_start(prof__tw *tw, uint32_t flush_ms, const char *path) {
  W.tw = tw;
  W.flush_ms = flush_ms;
  W.path = path;
  W.stop = 0;
  W.failed = 0;
  W.rc = 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the writer takes no signals */
  int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) return PROF_ENOMEM;
  pthread_setname_np(W.thread, "mlprof-writer");
  W.running = 1;
  return 0;
}

static void footer_kv(prof__kv *kv, size_t *n, char (*vals)[32]) {
  static const char *const mu_names[] = {
#define PROF__MU_NAME(e, s) "misuse." s,
      PROF_MISUSE(PROF__MU_NAME)
#undef PROF__MU_NAME
  };
  size_t i = 0;
#define KV(k, fmt, val)                              \
  do {                                               \
    snprintf(vals[i], 32, fmt, val);                 \
    kv[i].key = k;                                   \
    kv[i].value = vals[i];                           \
    i++;                                             \
  } while (0)
  KV("events_written", "%llu", (unsigned long long)W.events);
  KV("events_lost", "%llu", (unsigned long long)prof__writer_lost());
  KV("misuse", "%llu", (unsigned long long)prof__misuse_total());
  KV("threads", "%llu", (unsigned long long)prof__threads_count());
  KV("steps", "%llu", (unsigned long long)prof_step_count());
  KV("end_ns", "%llu", (unsigned long long)prof__ticks_to_ns(prof__ticks()));
  for (int m = 0; m < PROF_MU_COUNT; m++)
    KV(mu_names[m], "%llu", (unsigned long long)__atomic_load_n(&prof__misuse[m], __ATOMIC_RELAXED));
#undef KV
  *n = i;
}

int prof__writer_stop(void) {
  if (!W.running) return 0;
  pthread_mutex_lock(&W.mu);
  W.stop = 1;
  pthread_cond_signal(&W.cv);
  pthread_mutex_unlock(&W.mu);
  pthread_join(W.thread, NULL);
  W.running = 0;
  prof__kv kv[8 + PROF_MU_COUNT];
  char vals[8 + PROF_MU_COUNT][32];
  size_t n = 0;
  if (W.failed) {
    prof__tw_abort(W.tw);
  } else {
    footer_kv(kv, &n, vals);
    int rc = prof__tw_close(W.tw, kv, n);
    if (rc) {
      io_failed(rc);
    }
  }
  W.tw = NULL;
  return W.rc;
}

void prof__writer_forget(void) {
  /* W.tw stays referenced (not freed): the writer thread may have been
   * inside it when the parent forked. */
  W.running = 0;
  pthread_mutex_init(&W.mu, NULL);
  pthread_cond_init(&W.cv, NULL);
  pthread_mutex_init(&meta_mu, NULL);
}

uint64_t prof__writer_events(void) { return __atomic_load_n(&W.events, __ATOMIC_RELAXED); }

/* Exact once the writer thread has stopped; as of the last cycle before. */
uint64_t prof__writer_lost(void) {
  if (W.running) return __atomic_load_n(&W.lost_cache, __ATOMIC_RELAXED);
  uint64_t lost = W.lost_unlinked;
  for (prof__thread *t = prof__threads_head(); t; t = t->next) lost += prof__ring_dropped(&t->ring);
  return lost;
}

uint64_t prof__writer_bytes(void) { return __atomic_load_n(&W.bytes, __ATOMIC_RELAXED); }
int prof__writer_failed(void) { return W.failed; }
