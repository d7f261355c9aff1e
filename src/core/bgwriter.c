/* bgwriter.c — the background writer thread.
 *
 * Every cycle it drains each registered thread's ring (converting clock
 * ticks to nanoseconds), runs the producers' hooks, queues new names and
 * thread records, and once 64 KiB of events are pending or 250 ms have
 * passed flushes one round of chunks. A crash is flushed through crash.c,
 * and a killed process loses at most the last round. The period adapts:
 * MLPROF_FLUSH_MS (10 ms) while the rings fill, doubling per quiet cycle up
 * to IDLE_MS (250 ms), so a mostly idle trace costs about four cycles a
 * second: on a virtual machine each wake-up costs about 0.1 ms of a core
 * whatever it does, so quiet wake-ups are most of what the writer costs. It is
 * the only place that touches the file. A ring past its high-water mark
 * wakes it early (writer_kick); producers wait for it only on a full ring
 * under MLPROF_RING_FULL=wait (ring.h), never on the disk. A drain takes
 * at most one ring's capacity from a ring per cycle, and pending events are
 * written as soon as 64 KiB are queued, so an EVENTS chunk stays below
 * 64 KiB plus one batch (about 230 KiB) however fast a producer is. A
 * write error is reported once, with the errno of the failed write (never
 * a later errno), stops recording, and is returned by prof_shutdown().
 *
 * A capture segment (a schedule cycle, an on-demand capture) is a second
 * trace file, complete on its own, that receives a copy of the events whose
 * ticks fall in its window; the session asks for it at step boundaries and
 * the writer opens and closes it, so no producer ever waits on the disk.
 *
 * A crash (crash.c) sets crash_req from the signal handler; the writer sees
 * it within one period, drains everything, closes the trace with the crash
 * in its footer and moves crash_stage forward (enum crash_stage), which the
 * handler polls (bounded).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bgwriter.h"
#include "capture.h"
#include "crash.h"
#include "header.h"
#include "meta.h"
#include "modules.h"
#include "session.h"

#define BATCH 4096
#define FLUSH_BYTES (64u << 10)
#define FLUSH_NS 250000000ull
#define IDLE_MS 250u   /* longest sleep (longer when MLPROF_FLUSH_MS asks for it, shorter when a
                          producer's period asks for it: prof__writer_period_cap) */
#define BUSY_EVENTS 1024 /* a cycle that drains this many keeps the short period (per-step CPU
                             time does not depend on it: the step thread reads its own at
                             every boundary, src/cpu/counters.c) */

/* The crash handshake: the stages the writer reaches after a crash request,
 * in order; the handler waits (bounded) for each. */
enum crash_stage {
  CRASH_PENDING,      /* no crash, or its trace is not closed yet */
  CRASH_TRACE_CLOSED, /* the trace is closed with the crash in its footer */
  CRASH_REPORTED      /* the session started the reports (prof__session_crashed) */
};

static struct {
  pthread_t thread;
  int running;
  pthread_mutex_t mu;
  int stop;
  uint32_t flush_ms;
  uint32_t cap_ms;   /* longest quiet period a producer asked for (0: IDLE_MS; atomic) */
  uint32_t sleep_ms; /* writer thread: the current, adaptive period */
  uint64_t cycle_events; /* writer thread: events drained by the last cycle */
  int backlog;           /* writer thread: the last cycle left events in a ring (no sleep) */
  uint64_t cycles;       /* cycles run (atomic) */
  prof__tw *tw;
  const char *path;
  uint32_t strings_written;
  uint64_t events, lost_unlinked, lost_cache, bytes;
  int failed;
  int rc;
  int crash_req;   /* a crash asked for the trace to be closed (atomic) */
  uint32_t tid;    /* the writer thread's id once it has run, else 0 (atomic) */
  int busy;        /* the writer thread is between two sleeps (under mu) */
  int taken_over;  /* the exit does the final cycle: the writer thread stops (under mu) */
  int calibrated;  /* the clock's rate is measured (writer thread, or the exit after taking over) */
  int crash_stage; /* enum crash_stage (atomic) */
  uint64_t last_flush_ns;
  /* sync requests (prof__writer_sync) */
  pthread_cond_t done_cv;
  uint64_t sync_req, sync_done;
  /* capture segments: requested by the session (under mu), run by the
   * writer. Several slots, so back-to-back segments rarely wait for a close
   * (the writer may be busy, or still calibrating the clock at start). */
  struct seg {
    int want;                 /* requested (under mu); 0: slot free */
    uint64_t req_begin, req_end, req_steps; /* ticks; end UINT64_MAX while open-ended */
    prof__tw *tw;             /* writer thread only from here */
    uint64_t lo, hi, events, steps;
    uint32_t strings;
  } seg[PROF_SEG_SLOTS];
  /* Last: a cycle touches only what it drains of these. */
  prof__event batch[BATCH];
  prof__event batch2[BATCH]; /* ns copy while a segment needs the ticks */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .done_cv = PTHREAD_COND_INITIALIZER};

/* The segments' paths, apart from their slots: every cycle reads every
 * slot, and with a path inside each, the slots spanned 17 pages, a page
 * fault each at the first cycle of every process. */
static struct {
  char req[4096]; /* requested (under mu) */
  char cur[4096]; /* the open segment's (writer thread) */
} seg_paths[PROF_SEG_SLOTS];
#define SEG_REQ(g) (seg_paths[(g) - W.seg].req)
#define SEG_PATH(g) (seg_paths[(g) - W.seg].cur)

/* Wake-ups: every request (stop, sync, segment end) and every ring that
 * crosses its high-water mark bumps kick_seq; the writer sleeps on it with
 * a futex (at most one flush period) and skips the sleep when it moved
 * during the cycle. The syscall is made only while the writer sleeps.
 * Async-signal-safe. */
static uint32_t kick_seq, writer_sleeping;
static uint32_t kick_at_start; /* kick_seq when the writer was created: later kicks are all seen */

static void writer_kick(void) {
  __atomic_fetch_add(&kick_seq, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&writer_sleeping, __ATOMIC_SEQ_CST))
    syscall(SYS_futex, &kick_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

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

/* ---- draining ------------------------------------------------------------ */

/* A write failed with code rc; sys_err is the errno the system gave the
 * failed write (prof__tw_errno), never the global errno of this moment:
 * the writer's own futex sleep leaves ETIMEDOUT there. */
static void io_failed_err(int rc, int sys_err) {
  if (W.failed) return;
  W.failed = 1;
  W.rc = PROF_EIO;
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  char why[128];
  if (rc == PROF_EIO) snprintf(why, sizeof why, "%s", strerror(sys_err ? sys_err : EIO));
  else if (rc == PROF_ENOMEM) snprintf(why, sizeof why, "out of memory");
  else snprintf(why, sizeof why, "internal error %d: %s", rc, prof_strerror(rc));
  fprintf(stderr,
          "mlprof: writing trace '%s' failed (%s); recording stopped, the training continues "
          "and later events are counted as lost\n",
          W.path, why);
}

static void io_failed(int rc) { io_failed_err(rc, prof__tw_errno(W.tw)); }

/* ---- capture segments ------------------------------------------------------ */

static void seg_threads(struct seg *g) {
  for (prof__thread *t = prof__threads_head(); t; t = t->next) {
    char name[sizeof t->name];
    prof__thread_name(t, name, sizeof name);
    prof__tw_thread(g->tw, t->tid, name, 0, __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE));
  }
}

static int seg_any(void) {
  for (int i = 0; i < PROF_SEG_SLOTS; i++)
    if (W.seg[i].tw || __atomic_load_n(&W.seg[i].want, __ATOMIC_ACQUIRE)) return 1;
  return 0;
}

/* Open a requested segment file, or move its window end. */
static void seg_update(struct seg *g) {
  pthread_mutex_lock(&W.mu);
  int want = g->want;
  uint64_t begin = g->req_begin, end = g->req_end;
  g->steps = g->req_steps;
  if (want && !g->tw) memcpy(SEG_PATH(g), SEG_REQ(g), sizeof seg_paths[0].cur); /* the request is NUL-terminated */
  pthread_mutex_unlock(&W.mu);
  if (!want || W.failed) return;
  if (!g->tw) {
    char err[PROF_ERR_MAX];
    g->tw = prof__header_open(SEG_PATH(g), sizeof seg_paths[0].cur, 0, err);
    if (!g->tw) {
      static int said; /* writer thread only: one message, however many captures fail */
      if (!said++) fprintf(stderr, "mlprof: capture '%s' not written: %s (later failures are not reported)\n", SEG_PATH(g), err);
      pthread_mutex_lock(&W.mu);
      g->want = 0;
      pthread_mutex_unlock(&W.mu);
      prof__capture_segment_done(SEG_PATH(g), -1);
      return;
    }
    g->events = 0;
    g->strings = 0;
    seg_threads(g);
  }
  g->lo = begin;
  g->hi = end;
}

/* Copy the events of `ev[0..n)` (ticks, ordered) inside the window of g. */
static void seg_copy(struct seg *g, uint32_t tid, prof__event *ticks_ev, prof__event *ns_ev, size_t n) {
  if (!g->tw) return;
  size_t lo = 0, hi;
  while (lo < n && ticks_ev[lo].ts < g->lo) lo++;
  for (hi = lo; hi < n && ticks_ev[hi].ts <= g->hi; hi++) {}
  if (hi > lo && prof__tw_events(g->tw, tid, ns_ev + lo, hi - lo) == 0) g->events += hi - lo;
  if (prof__tw_pending(g->tw) >= FLUSH_BYTES) { /* bounded chunks here too: names and threads first */
    seg_threads(g);
    if (prof__intern_emit(g->tw, &g->strings) == 0) prof__tw_flush(g->tw);
  }
}

/* After a drain: names for the segment; close it when its window ended. */
static void seg_finish_cycle(struct seg *g, int final) {
  if (!g->tw) return;
  prof__intern_emit(g->tw, &g->strings);
  if (g->hi == UINT64_MAX && !final) return;
  seg_threads(g);
  char v[3][32];
  snprintf(v[0], sizeof v[0], "%llu", (unsigned long long)g->events);
  snprintf(v[1], sizeof v[1], "%llu", (unsigned long long)g->steps);
  snprintf(v[2], sizeof v[2], "%d", g->hi != UINT64_MAX);
  prof__kv kv[] = {{"events_written", v[0]}, {"steps", v[1]}, {"segment_complete", v[2]}};
  int rc = prof__tw_close(g->tw, kv, 3);
  g->tw = NULL;
  pthread_mutex_lock(&W.mu);
  g->want = 0;
  pthread_mutex_unlock(&W.mu);
  prof__capture_segment_done(SEG_PATH(g), rc == 0);
}

int prof__writer_segment_begin(const char *path, uint64_t begin_ticks) {
  pthread_mutex_lock(&W.mu);
  int rc = PROF_ESTATE;
  for (int i = 0; i < PROF_SEG_SLOTS && rc < 0 && W.running; i++) {
    struct seg *g = &W.seg[i];
    if (g->want) continue;
    snprintf(SEG_REQ(g), sizeof seg_paths[0].req, "%s", path);
    g->req_begin = begin_ticks;
    g->req_end = UINT64_MAX;
    g->req_steps = 0;
    __atomic_store_n(&g->want, 1, __ATOMIC_RELEASE);
    rc = i;
  }
  pthread_mutex_unlock(&W.mu);
  return rc;
}

void prof__writer_segment_end(int slot, uint64_t end_ticks, uint64_t steps) {
  if (slot < 0 || slot >= PROF_SEG_SLOTS) return;
  pthread_mutex_lock(&W.mu);
  struct seg *g = &W.seg[slot];
  if (g->want && g->req_end == UINT64_MAX) {
    g->req_end = end_ticks;
    g->req_steps = steps;
    writer_kick(); /* close it soon: the slot is needed again */
  }
  pthread_mutex_unlock(&W.mu);
}

prof__tw *prof__writer_segment(int slot, uint64_t *lo, uint64_t *hi) {
  if (slot < 0 || slot >= PROF_SEG_SLOTS || !W.seg[slot].tw) return NULL;
  *lo = W.seg[slot].lo;
  *hi = W.seg[slot].hi;
  return W.seg[slot].tw;
}

/* Write what is queued once FLUSH_BYTES of events are pending: names
 * first, so the events' names are in the file before them. This bounds an
 * EVENTS chunk to FLUSH_BYTES plus one batch, however long a drain lasts. */
static void flush_if_full(void) {
  if (W.failed || prof__tw_pending(W.tw) < FLUSH_BYTES) return;
  int rc = prof__intern_emit(W.tw, &W.strings_written);
  if (!rc) rc = prof__tw_flush(W.tw);
  if (rc) io_failed(rc);
  W.last_flush_ns = prof__mono_ns();
}

/* Drain one ring; returns events read. At most one ring's capacity per
 * call: a producer as fast as the writer would otherwise keep it here,
 * away from the other rings, the hooks and a stop or crash request. */
static uint64_t drain_thread(prof__thread *t) {
  uint64_t total = 0, budget = prof__ring_capacity(&t->ring);
  size_t n;
  while (total < budget &&
         (n = prof__ring_read(&t->ring, W.batch, budget - total < BATCH ? (size_t)(budget - total) : BATCH)) > 0) {
    total += n;
    if (W.failed) {
      __atomic_fetch_add(&W.lost_unlinked, n, __ATOMIC_RELAXED); /* read and discarded: lost */
      continue;
    }
    /* A request made before these events were pushed is visible now. */
    int segs = seg_any();
    if (segs)
      for (int i = 0; i < PROF_SEG_SLOTS; i++) seg_update(&W.seg[i]);
    prof__event *ns_ev = W.batch;
    if (segs) { /* keep the ticks for the windows */
      memcpy(W.batch2, W.batch, n * sizeof *W.batch);
      ns_ev = W.batch2;
    }
    prof__events_ticks_to_ns(ns_ev, n);
    prof__modules_observe(t->tid, ns_ev, n);
    int rc = prof__tw_events(W.tw, t->tid, ns_ev, n);
    if (rc) io_failed(rc);
    if (segs)
      for (int i = 0; i < PROF_SEG_SLOTS; i++) seg_copy(&W.seg[i], t->tid, W.batch, ns_ev, n);
    flush_if_full();
  }
  if (total >= budget && prof__ring_count(&t->ring)) W.backlog = 1;
  return total;
}

/* Queue a THREADS record for t when it is new, its lost count changed, or
 * it exited. */
static void announce(prof__thread *t, int exited) {
  uint64_t lost = prof__thread_lost(t);
  if (W.failed || (__atomic_load_n(&t->announced, __ATOMIC_ACQUIRE) && lost == t->lost_reported && !exited)) return;
  __atomic_store_n(&t->announced, 1, __ATOMIC_RELAXED); /* before the copy: a rename after it clears it again */
  char name[sizeof t->name];
  prof__thread_name(t, name, sizeof name);
  int rc = prof__tw_thread(W.tw, t->tid, name, lost, exited);
  if (rc) io_failed(rc);
  t->lost_reported = lost;
}

static void drain_all(void) {
  uint64_t live_lost = 0;
  prof__thread *prev = NULL, *t = prof__threads_head();
  while (t) {
    prof__thread *next = t->next;
    int exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    if (!__atomic_load_n(&t->announced, __ATOMIC_ACQUIRE)) announce(t, 0); /* its record before its first events (a drain may flush) */
    uint64_t n = drain_thread(t);
    W.cycle_events += n;
    if (!W.failed) __atomic_store_n(&W.events, W.events + n, __ATOMIC_RELAXED);
    announce(t, exited);
    uint64_t lost = prof__thread_lost(t);
    if (exited && prof__ring_count(&t->ring)) exited = 0; /* more than one budget left: next cycle */
    if (exited) {
      __atomic_fetch_add(&W.lost_unlinked, lost, __ATOMIC_RELAXED);
      prof__threads_unlink(prev, t); /* its state goes to the pool for a later thread (threads.c) */
    } else {
      prof__ring_commit_ahead(&t->ring); /* its next pages, before it writes them */
      live_lost += lost;
      prev = t;
    }
    t = next;
  }
  __atomic_store_n(&W.lost_cache, __atomic_load_n(&W.lost_unlinked, __ATOMIC_RELAXED) + live_lost, __ATOMIC_RELAXED);
}

/* ---- the cycle ------------------------------------------------------------- */

/* Re-anchor the tick -> ns line once a second (clock.h); the largest error
 * it corrected goes into the footer as clock.residual_max_ns. */
#define ANCHOR_NS 1000000000ull
static uint64_t last_anchor_ns;
static int64_t residual_max;

static void clock_anchor(void) {
  uint64_t now = prof__mono_ns();
  if (!last_anchor_ns) last_anchor_ns = now;
  if (now - last_anchor_ns < ANCHOR_NS) return;
  int64_t e = prof__clock_reanchor(ANCHOR_NS);
  if (e < 0) e = -e;
  if (e > residual_max) residual_max = e;
  last_anchor_ns = now;
}

static void cycle(int final) {
  for (int i = 0; i < PROF_SEG_SLOTS; i++) seg_update(&W.seg[i]);
  pthread_mutex_lock(&W.mu);
  uint64_t sync = W.sync_req;
  pthread_mutex_unlock(&W.mu);
  W.cycle_events = 0;
  W.backlog = 0;
  drain_all();
  for (int i = 0; i < __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE); i++)
    hooks[i].fn(W.failed ? NULL : W.tw, final, hooks[i].arg);
  if (!W.failed) prof__tw_bound_cycle(W.tw); /* a bounded trace's step summaries: the hooks' readings are in */
  for (int i = 0; i < PROF_SEG_SLOTS && !W.failed; i++) seg_finish_cycle(&W.seg[i], final);
  if (!W.failed) {
    int rc = prof__meta_emit(W.tw);
    if (!rc) rc = prof__intern_emit(W.tw, &W.strings_written);
    uint64_t now = prof__mono_ns();
    int due = final || sync != W.sync_done || now - W.last_flush_ns >= FLUSH_NS;
    if (!rc && (due || prof__tw_pending(W.tw) >= FLUSH_BYTES)) {
      rc = prof__tw_flush(W.tw);
      W.last_flush_ns = now;
    }
    if (rc) io_failed(rc);
    __atomic_store_n(&W.bytes, prof__tw_bytes(W.tw), __ATOMIC_RELAXED);
  }
  clock_anchor();
  pthread_mutex_lock(&W.mu);
  W.sync_done = sync;
  pthread_cond_broadcast(&W.done_cv);
  pthread_mutex_unlock(&W.mu);
}

int prof__writer_sync(unsigned timeout_ms) {
  pthread_mutex_lock(&W.mu);
  if (!W.running || W.stop) {
    pthread_mutex_unlock(&W.mu);
    return PROF_ESTATE;
  }
  uint64_t want = ++W.sync_req;
  writer_kick();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += (time_t)(timeout_ms / 1000);
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  int rc = 0;
  while (W.sync_done < want && rc == 0) rc = pthread_cond_timedwait(&W.done_cv, &W.mu, &ts);
  int ok = W.sync_done >= want;
  pthread_mutex_unlock(&W.mu);
  return ok ? (W.failed ? PROF_EIO : 0) : PROF_EIO;
}

static void crash_close(void);

void prof__writer_period_cap(uint32_t ms) {
  if (!ms) return;
  uint32_t cur = __atomic_load_n(&W.cap_ms, __ATOMIC_RELAXED);
  while ((!cur || ms < cur) &&
         !__atomic_compare_exchange_n(&W.cap_ms, &cur, ms, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}

/* The next period: the configured one while events flow, doubling per quiet
 * cycle up to IDLE_MS (or a producer's cap). A ring past its high-water mark
 * wakes the writer anyway (writer_kick), and so does every request. */
static uint32_t next_sleep_ms(uint32_t cur, uint64_t drained) {
  uint32_t cap = __atomic_load_n(&W.cap_ms, __ATOMIC_RELAXED), idle = cap && cap < IDLE_MS ? cap : IDLE_MS;
  uint32_t lo = W.flush_ms, hi = W.flush_ms > idle ? W.flush_ms : idle;
  if (drained >= BUSY_EVENTS) return lo;
  uint32_t next = cur * 2;
  return next < lo ? lo : next > hi ? hi : next;
}

/* The clock's measuring window: up to `ms` from now, ended at once by a
 * stop or a crash (both kick the futex, so an exit never waits for the
 * rest of the window). */
static void calibration_wait(uint32_t ms) {
  uint64_t until = prof__mono_ns() + (uint64_t)ms * 1000000ull;
  for (;;) {
    __atomic_store_n(&writer_sleeping, 1, __ATOMIC_SEQ_CST);
    uint32_t k = __atomic_load_n(&kick_seq, __ATOMIC_SEQ_CST); /* before reading stop: no lost kick */
    pthread_mutex_lock(&W.mu);
    int stopping = W.stop;
    pthread_mutex_unlock(&W.mu);
    uint64_t now = prof__mono_ns();
    if (stopping || __atomic_load_n(&W.crash_req, __ATOMIC_ACQUIRE) || now >= until) break;
    uint64_t left = until - now;
    struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
    syscall(SYS_futex, &kick_seq, FUTEX_WAIT_PRIVATE, k, &ts, NULL, 0);
  }
  __atomic_store_n(&writer_sleeping, 0, __ATOMIC_RELAXED);
}

/* The writer thread leaves (pause: before a sleep) and takes back (resume:
 * after it, and before every cycle) the writer's state. Resume returns 0
 * once the exit has taken it over (prof__writer_stop_here): the thread
 * then parks, and never runs a cycle of its own after that, final or not.
 * *stop (when asked) is read under the same lock, so a stop it sees is
 * never the exit's. */
static int writer_resume(int *stop) {
  pthread_mutex_lock(&W.mu);
  int go = !W.taken_over;
  W.busy = go;
  if (stop) *stop = W.stop;
  if (!go) pthread_cond_broadcast(&W.done_cv);
  pthread_mutex_unlock(&W.mu);
  return go;
}

/* After the exit took the writer over: sleep until the process ends. The
 * thread does not end on its own: its end would run the thread-exit
 * destructors of libraries whose own destructors the exit may have run by
 * then. Every signal is blocked here, and only this file knows the word. */
static void *writer_park(void) {
  static uint32_t never;
  for (;;) syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  return NULL;
}

/* The thread's first step: its id is known (prof__writer_tid) before
 * anything can take the writer over. Returns 0 when that happened already. */
static int writer_begin(void) {
  pthread_mutex_lock(&W.mu);
  __atomic_store_n(&W.tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
  int go = !W.taken_over;
  pthread_cond_broadcast(&W.done_cv);
  pthread_mutex_unlock(&W.mu);
  return go;
}

static void writer_pause(void) {
  pthread_mutex_lock(&W.mu);
  W.busy = 0;
  pthread_cond_broadcast(&W.done_cv);
  pthread_mutex_unlock(&W.mu);
}

/* The clock's rate, measured from prof_init to now, and its META pair. */
static void calibrate_now(void) {
  prof__clock_calibrate(0);
  char v[64];
  prof__clock clk;
  prof__clock_get(&clk);
  snprintf(v, sizeof v, "%.12g", clk.ns_per_tick);
  prof__meta_add("clock.ns_per_tick", v);
  W.calibrated = 1;
}

static void *writer_main(void *arg) {
  (void)arg;
  prof__guard_begin(); /* everything this thread allocates is ours */
  /* A request made before this thread ran or while it calibrates the clock
   * is answered by the first cycle, not after the first sleep. */
  uint32_t seen = kick_at_start;
  /* The clock's rate is measured over 20 ms from prof_init, or up to the
   * stop when the program ends sooner: every event then lies between the two
   * anchor pairs, so the shorter window converts them as exactly, and a
   * short program's exit does not wait for the 20 ms. */
  if (!writer_begin()) return writer_park();
  /* The compressor's set-up, while the program starts, not at its first
   * flush; apart from the trace, so that an exit meanwhile need not wait. */
  struct prof__zc *warm = prof__tw_warm_new();
  if (!writer_resume(NULL)) {
    prof__tw_warm_free(warm);
    return writer_park();
  }
  prof__tw_adopt(W.tw, warm);
  writer_pause();
  calibration_wait(20);
  if (!writer_resume(NULL)) return writer_park();
  calibrate_now();
  prof__ring_nowait = 1; /* the writer makes room: it never waits for it */
  W.last_flush_ns = prof__mono_ns();
  for (;;) {
    int stop;
    if (!writer_resume(&stop)) return writer_park();
    if (!stop && !W.backlog && !__atomic_load_n(&W.crash_req, __ATOMIC_ACQUIRE)) {
      writer_pause();
      __atomic_store_n(&writer_sleeping, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&kick_seq, __ATOMIC_SEQ_CST) == seen &&
          !__atomic_load_n(&W.crash_req, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {(time_t)(W.sleep_ms / 1000), (long)(W.sleep_ms % 1000) * 1000000L};
        syscall(SYS_futex, &kick_seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
      }
      __atomic_store_n(&writer_sleeping, 0, __ATOMIC_RELAXED);
      if (!writer_resume(&stop)) return writer_park();
    }
    seen = __atomic_load_n(&kick_seq, __ATOMIC_SEQ_CST);
    int crash = __atomic_load_n(&W.crash_req, __ATOMIC_ACQUIRE);
    cycle(stop || crash);
    __atomic_store_n(&W.cycles, W.cycles + 1, __ATOMIC_RELAXED);
    W.sleep_ms = next_sleep_ms(W.sleep_ms, W.cycle_events);
    if (crash) {
      crash_close();
      break;
    }
    if (stop) break;
  }
  writer_pause();
  return NULL;
}

int prof__writer_start(prof__tw *tw, uint32_t flush_ms, const char *path) {
  W.tw = tw;
  W.flush_ms = flush_ms;
  W.sleep_ms = flush_ms;
  __atomic_store_n(&W.cap_ms, 0, __ATOMIC_RELAXED); /* producers ask again as they start */
  W.path = path;
  W.stop = 0;
  W.failed = 0;
  W.rc = 0;
  W.crash_req = 0;
  W.crash_stage = CRASH_PENDING;
  W.busy = 0;
  W.tid = 0;
  W.taken_over = 0;
  W.calibrated = 0;
  kick_at_start = __atomic_load_n(&kick_seq, __ATOMIC_SEQ_CST);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the writer takes no signals */
  int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) return PROF_ENOMEM;
  pthread_setname_np(W.thread, "mlprof-writer");
  __atomic_store_n(&W.running, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__ring_wake, writer_kick, __ATOMIC_RELEASE);
  __atomic_store_n(&prof__ring_waitable, 1, __ATOMIC_RELEASE);
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
  KV("events_lost_in_signal_handlers", "%llu",
     (unsigned long long)__atomic_load_n(&prof__reentry_lost_total, __ATOMIC_RELAXED));
  KV("misuse", "%llu", (unsigned long long)prof__misuse_total());
  KV("threads", "%llu", (unsigned long long)prof__threads_count());
  KV("steps", "%llu", (unsigned long long)prof_step_count());
  KV("end_ns", "%llu", (unsigned long long)prof__ticks_to_ns(prof__ticks()));
  KV("clock.residual_max_ns", "%lld", (long long)residual_max);
  for (int m = 0; m < PROF_MU_COUNT; m++)
    KV(mu_names[m], "%llu", (unsigned long long)__atomic_load_n(&prof__misuse[m], __ATOMIC_RELAXED));
#undef KV
  *n = i;
}

/* Close the trace with its footer (and the crash keys after a crash), or
 * abandon it after a write error. */
static void close_trace(int crashed) {
  prof__kv kv[16 + PROF_MU_COUNT];
  char vals[16 + PROF_MU_COUNT][32];
  size_t n = 0;
  if (W.failed) {
    prof__tw_abort(W.tw);
  } else {
    footer_kv(kv, &n, vals);
    if (crashed) n += prof__crash_footer(kv + n, vals + n, 16 + PROF_MU_COUNT - n);
    int sys_err = 0;
    int rc = prof__tw_finish(W.tw, kv, n, &sys_err); /* frees W.tw: its errno comes back in sys_err */
    if (rc) io_failed_err(rc, sys_err);
  }
  W.tw = NULL;
}

/* Writer thread, after a crash: close the trace with the crash footer, then
 * let the session write its reports; the handler waits for each step. */
static void crash_close(void) {
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  close_trace(1);
  __atomic_store_n(&W.crash_stage, CRASH_TRACE_CLOSED, __ATOMIC_RELEASE);
  if (!W.failed) prof__session_crashed();
  __atomic_store_n(&W.crash_stage, CRASH_REPORTED, __ATOMIC_RELEASE);
}

int prof__writer_crash_flush(unsigned trace_ms, unsigned report_ms) {
  if (!__atomic_load_n(&W.running, __ATOMIC_ACQUIRE) || __atomic_load_n(&W.stop, __ATOMIC_ACQUIRE) ||
      pthread_equal(pthread_self(), W.thread))
    return -1; /* no writer, or shutting down already, or the writer itself crashed */
  __atomic_store_n(&W.crash_req, 1, __ATOMIC_RELEASE);
  writer_kick(); /* a futex wake: async-signal-safe */
  uint64_t t0 = prof__mono_ns(), limit = (uint64_t)(W.flush_ms + trace_ms) * 1000000ull;
  struct timespec ts = {0, 1000000L};
  while (__atomic_load_n(&W.crash_stage, __ATOMIC_ACQUIRE) < CRASH_TRACE_CLOSED && prof__mono_ns() - t0 < limit)
    nanosleep(&ts, NULL);
  if (__atomic_load_n(&W.crash_stage, __ATOMIC_ACQUIRE) < CRASH_TRACE_CLOSED) return -1;
  t0 = prof__mono_ns();
  limit = (uint64_t)report_ms * 1000000ull;
  while (__atomic_load_n(&W.crash_stage, __ATOMIC_ACQUIRE) < CRASH_REPORTED && prof__mono_ns() - t0 < limit)
    nanosleep(&ts, NULL);
  return 0;
}

int prof__writer_stop(void) {
  if (!W.running) return 0;
  __atomic_store_n(&prof__ring_waitable, 0, __ATOMIC_RELEASE); /* from now on a full ring drops */
  pthread_mutex_lock(&W.mu);
  W.stop = 1;
  writer_kick();
  pthread_mutex_unlock(&W.mu);
  pthread_join(W.thread, NULL);
  W.running = 0;
  if (W.tw) close_trace(0); /* else closed after a crash */
  return W.rc;
}

/* The process is exiting: rather than waking the writer thread and waiting
 * for it to end (two wake-ups across cores, 0.1 ms each on a virtual
 * machine), this thread takes the writer's state over once the writer
 * sleeps (or makes its compressor, apart), runs the final cycle itself and
 * closes the trace. The writer thread, detached, parks at its next wake-up
 * without touching anything, and ends with the process. A trace without a
 * compressor yet (a program that ended within a millisecond or so) stores
 * its last chunks as they are rather than make one. */
int prof__writer_stop_here(void) {
  if (!W.running) return 0;
  __atomic_store_n(&prof__ring_waitable, 0, __ATOMIC_RELEASE); /* from now on a full ring drops */
  pthread_mutex_lock(&W.mu);
  W.stop = 1;
  W.taken_over = 1;
  while (!W.tid || W.busy) pthread_cond_wait(&W.done_cv, &W.mu); /* started: its id names its track */
  pthread_mutex_unlock(&W.mu);
  pthread_detach(W.thread);
  W.running = 0;
  prof__guard_begin(); /* what the final cycle allocates is the profiler's */
  if (W.tw) { /* else closed after a crash */
    if (!W.calibrated) calibrate_now();
    prof__tw_plain(W.tw);
    cycle(1);
    close_trace(0);
  }
  prof__guard_end();
  return W.rc;
}

void prof__writer_forget(void) {
  /* W.tw stays referenced (not freed): the writer thread may have been
   * inside it when the parent forked. */
  W.running = 0;
  __atomic_store_n(&prof__ring_waitable, 0, __ATOMIC_RELEASE); /* no writer in the child */
  __atomic_store_n(&writer_sleeping, 0, __ATOMIC_RELAXED);
  pthread_mutex_init(&W.mu, NULL);
  pthread_cond_init(&W.done_cv, NULL);
  for (int i = 0; i < PROF_SEG_SLOTS; i++) { /* like W.tw: referenced, never touched in the child */
    W.seg[i].tw = NULL;
    W.seg[i].want = 0;
  }
  prof__meta_fork_child();
}

uint32_t prof__writer_tid(void) { return __atomic_load_n(&W.tid, __ATOMIC_ACQUIRE); }

uint64_t prof__writer_cycles(void) { return __atomic_load_n(&W.cycles, __ATOMIC_RELAXED); }

uint64_t prof__writer_events(void) { return __atomic_load_n(&W.events, __ATOMIC_RELAXED); }

/* Exact once the writer thread has stopped; as of the last cycle before. */
uint64_t prof__writer_lost(void) {
  if (W.running) return __atomic_load_n(&W.lost_cache, __ATOMIC_RELAXED);
  uint64_t lost = __atomic_load_n(&W.lost_unlinked, __ATOMIC_RELAXED);
  for (prof__thread *t = prof__threads_head(); t; t = t->next) lost += prof__thread_lost(t);
  return lost;
}

/* Records lost outside the rings (e.g. dropped by CUPTI) join the total. */
void prof__writer_lost_add(uint64_t n) { __atomic_fetch_add(&W.lost_unlinked, n, __ATOMIC_RELAXED); }

uint64_t prof__writer_bytes(void) { return __atomic_load_n(&W.bytes, __ATOMIC_RELAXED); }
int prof__writer_failed(void) { return W.failed; }
