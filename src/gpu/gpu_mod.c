/* gpu_mod.c — the GPU producer module: start/stop with the session, the
 * queue of encoded activity payloads drained by the writer thread, the
 * launch table (correlation id -> launching thread, range, API start), the
 * dropped-record total, and the one-line failure report.
 *
 * Nothing here touches CUDA or CUPTI; cupti.c does (and is the only file
 * that includes cupti.h). A build without CUPTI headers gets a backend
 * that reports "not_built".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/bgwriter.h"
#include "core/config.h"
#include "core/producer.h"
#include "gpu.h"
#include "mlprof.h"

/* ---- failure report ------------------------------------------------------ */

static char status[32] = PROF_GPU_ST_OFF;

const char *prof__gpu_status(void) { return status; }

/* A machine without the NVIDIA driver (or a build without CUPTI) has no GPU
 * to profile: that is said on stderr only when MLPROF_GPU=1 asked for GPU
 * profiling; every other failure is always said. */
int prof__gpu_env(void) {
  const char *v = prof__env("GPU");
  if (!v || strcasecmp(v, "auto") == 0) return -1;
  int f = prof__flag_parse(v);
  if (f < 0) prof__env_ignored("GPU", v, "0/off, 1/on or auto", "using auto");
  return f;
}

static int quiet_failure(const char *st) {
  int asked = prof__gpu_env() == 1;
  if (strcmp(st, PROF_GPU_ST_HIDDEN) == 0) return 1; /* a deliberate choice, not a problem */
  return !asked && (strcmp(st, PROF_GPU_ST_NO_DRIVER) == 0 || strcmp(st, PROF_GPU_ST_NOT_BUILT) == 0);
}

void prof__gpu_fail(const char *st, const char *cause, const char *fix) {
  snprintf(status, sizeof status, "%s", st ? st : PROF_GPU_ST_ERROR);
  if (!quiet_failure(status))
    fprintf(stderr, "mlprof: GPU profiling off: %s; %s; CPU profiling continues\n", cause, fix);
  prof__meta_add("gpu.status", status);
  prof__meta_add("gpu.status_detail", cause);
}

static void gpu_ok(void) {
  snprintf(status, sizeof status, "%s", PROF_GPU_ST_OK);
  prof__meta_add("gpu.status", status);
}

/* ---- launch table -------------------------------------------------------- */

typedef struct launch_slot {
  uint32_t seq;  /* even: stable; odd: being written */
  uint32_t corr; /* 0: empty */
  uint32_t tid, range;
  uint64_t api_start;
} launch_slot;

static launch_slot launches[PROF_GPU_LAUNCH_SLOTS];

static launch_slot *slot_of(uint32_t corr) { return &launches[corr & (PROF_GPU_LAUNCH_SLOTS - 1)]; }

/* Claim a slot for writing; 0 when another writer holds it (the put is dropped). */
static int claim(launch_slot *s, uint32_t *seq) {
  uint32_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
  if (q & 1) return 0;
  if (!__atomic_compare_exchange_n(&s->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
  __atomic_thread_fence(__ATOMIC_RELEASE);
  *seq = q + 2;
  return 1;
}

static void release(launch_slot *s, uint32_t seq) { __atomic_store_n(&s->seq, seq, __ATOMIC_RELEASE); }

/* mode 0: put (the newest call wins the slot); 1: fill (gaps of the same
 * call, or an empty / older slot). Correlation ids grow by one per call:
 * "older" is the serial-number comparison. */
static void launch_write(uint32_t corr, uint32_t tid, uint32_t range, uint64_t api_start, int fill) {
  if (!corr) return;
  launch_slot *s = slot_of(corr);
  uint32_t seq;
  if (!claim(s, &seq)) return;
  uint32_t old = __atomic_load_n(&s->corr, __ATOMIC_RELAXED);
  if (old == corr) { /* a second source for the same call fills the gaps only */
    if (!s->tid) __atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
    if (!s->range) __atomic_store_n(&s->range, range, __ATOMIC_RELAXED);
    if (!s->api_start) __atomic_store_n(&s->api_start, api_start, __ATOMIC_RELAXED);
  } else if (!fill || !old || (int32_t)(corr - old) > 0) {
    __atomic_store_n(&s->corr, corr, __ATOMIC_RELAXED);
    __atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
    __atomic_store_n(&s->range, range, __ATOMIC_RELAXED);
    __atomic_store_n(&s->api_start, api_start, __ATOMIC_RELAXED);
  }
  release(s, seq);
}

void prof__gpu_launch_put(uint32_t corr, uint32_t tid, uint32_t range, uint64_t api_start) {
  launch_write(corr, tid, range, api_start, 0);
}

void prof__gpu_launch_fill(uint32_t corr, uint32_t tid, uint32_t range, uint64_t api_start) {
  launch_write(corr, tid, range, api_start, 1);
}

int prof__gpu_launch_get(uint32_t corr, uint32_t *tid, uint32_t *range, uint64_t *api_start) {
  if (!corr) return 0;
  launch_slot *s = slot_of(corr);
  uint32_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
  if (q & 1) return 0;
  uint32_t c = __atomic_load_n(&s->corr, __ATOMIC_RELAXED);
  uint32_t t = __atomic_load_n(&s->tid, __ATOMIC_RELAXED), r = __atomic_load_n(&s->range, __ATOMIC_RELAXED);
  uint64_t a = __atomic_load_n(&s->api_start, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != q || c != corr) return 0; /* rewritten meanwhile */
  *tid = t;
  *range = r;
  *api_start = a;
  return 1;
}

void prof__gpu_launch_reset(void) { memset(launches, 0, sizeof launches); }

/* ---- payload queue ------------------------------------------------------- */

typedef struct qnode {
  prof__buf b;
  struct qnode *next;
} qnode;

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static qnode *q_head, *q_tail;
static size_t q_len;
static uint64_t dropped_total, dropped_reported;

void prof__gpu_queue_push(prof__buf *b) {
  qnode *n = b && b->len && !b->oom ? malloc(sizeof *n) : NULL;
  if (!n) {
    if (b) prof__buf_free(b);
    return;
  }
  n->b = *b;
  n->next = NULL;
  memset(b, 0, sizeof *b);
  pthread_mutex_lock(&q_mu);
  if (q_tail) q_tail->next = n;
  else q_head = n;
  q_tail = n;
  q_len++;
  pthread_mutex_unlock(&q_mu);
}

int prof__gpu_queue_pop(prof__buf *b) {
  pthread_mutex_lock(&q_mu);
  qnode *n = q_head;
  if (n) {
    q_head = n->next;
    if (!q_head) q_tail = NULL;
    q_len--;
  }
  pthread_mutex_unlock(&q_mu);
  if (!n) return 0;
  *b = n->b;
  free(n);
  return 1;
}

size_t prof__gpu_queue_len(void) {
  pthread_mutex_lock(&q_mu);
  size_t n = q_len;
  pthread_mutex_unlock(&q_mu);
  return n;
}

void prof__gpu_dropped_add(uint64_t n) {
  __atomic_fetch_add(&dropped_total, n, __ATOMIC_RELAXED);
  prof__writer_lost_add(n);
}
uint64_t prof__gpu_dropped(void) { return __atomic_load_n(&dropped_total, __ATOMIC_RELAXED); }

/* ---- writer hook --------------------------------------------------------- */

/* Dropped records: a DROPPED record for the GPU section and the lost count
 * of a pseudo thread, which the analyzer adds to the lost-events total. */
static void report_dropped(prof__tw *tw) {
  uint64_t d = prof__gpu_dropped();
  if (d == dropped_reported) return;
  dropped_reported = d;
  prof__gpu_rec r = {.kind = PROF_GPU_DROPPED, .bytes = d, .start = prof__mono_ns()};
  r.end = r.start;
  prof__gpu_rec prev = {0};
  prof__buf b = {0};
  prof__rec_gpu_encode(&b, &r, &prev);
  if (!b.oom) prof__tw_chunk(tw, PROF_CHUNK_GPU, b.p, b.len);
  prof__buf_free(&b);
  prof__tw_thread(tw, PROF_GPU_PSEUDO_TID, "mlprof-cupti", d, 0);
}

/* CPU events are TSC ticks converted with a calibration; CUPTI's times are
 * CLOCK_MONOTONIC (timestamp callback). Their difference now, the largest
 * seen, goes to META at the end: the residual a GPU record can be off
 * against the CPU ranges around it. */
static int64_t residual_max;

int64_t prof__gpu_clock_check(void) {
  uint64_t a = prof__mono_ns();
  uint64_t t = prof__ticks_to_ns(prof__ticks());
  uint64_t b = prof__mono_ns();
  int64_t r = (int64_t)(t - (a + (b - a) / 2));
  int64_t m = r < 0 ? -r : r;
  if (m > residual_max) residual_max = m;
  return r;
}

int64_t prof__gpu_clock_residual_max(void) { return residual_max; }

static void writer_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  prof__gpu_clock_check();
  if (final) {
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)residual_max);
    prof__meta_add("gpu.clock_residual_ns", v);
  }
  if (!final) prof__cupti_tick(prof__mono_ns());
  prof__buf b;
  while (prof__gpu_queue_pop(&b)) {
    if (tw) prof__tw_chunk(tw, PROF_CHUNK_GPU, b.p, b.len);
    prof__buf_free(&b);
  }
  if (tw) report_dropped(tw);
}

/* ---- module -------------------------------------------------------------- */

static int gpu_disabled(void) { return prof__gpu_env() == 0; }

static size_t gpu_header(prof__kv *kv, size_t max) {
  if (!max) return 0;
#ifdef MLPROF_HAVE_CUPTI
  kv[0] = (prof__kv){"gpu.capture", gpu_disabled() ? "off" : "cupti"};
#else
  kv[0] = (prof__kv){"gpu.capture", "off"};
#endif
  return 1;
}

/* 1 while the session waits for the program to initialise CUDA. */
static int waiting, injected;

int prof__cupti_injected(void) { return __atomic_load_n(&injected, __ATOMIC_ACQUIRE); }

int prof__gpu_try_start(void) {
  if (gpu_disabled()) {
    snprintf(status, sizeof status, "%s", PROF_GPU_ST_OFF);
    prof__meta_add("gpu.status", status);
    return PROF_EDISABLED;
  }
  int rc = prof__cupti_start();
  __atomic_store_n(&waiting, rc == PROF_GPU_DEFERRED, __ATOMIC_RELEASE);
  if (rc == PROF_GPU_DEFERRED) {
    snprintf(status, sizeof status, "%s", PROF_GPU_ST_WAITING);
    prof__meta_add("gpu.status", status);
  }
  if (rc == 0) gpu_ok();
  return rc;
}

static int hooked;

/* CUPTI running: the writer wakes at least every 100 ms even when quiet,
 * the period of prof__cupti_tick's flush (completed buffers must reach the
 * launch table before its slots are reused). */
#define CUPTI_WAKE_MS 100u

static int gpu_start(void) {
  const char *nv = prof__env("NVTX");
  if (!nv || strcmp(nv, "0") != 0) prof__nvtx_session_start();
  int rc = prof__gpu_try_start();
  if ((rc == 0 || rc == PROF_GPU_DEFERRED) && !hooked) hooked = prof__writer_hook_add(writer_hook, NULL) == 0;
  if (rc == 0) prof__writer_period_cap(CUPTI_WAKE_MS);
  /* The program initialises CUDA later: its cuInit calls InitializeInjection here. */
  if (rc == PROF_GPU_DEFERRED) prof__gpu_point_env("CUDA_INJECTION64_PATH");
  return rc == PROF_GPU_DEFERRED ? 0 : rc;
}

/* The driver's injection entry point: cuInit calls it, on the program's
 * thread, in the library CUDA_INJECTION64_PATH names (mlprof run sets it to
 * libmlprof). A session waiting for CUDA starts CUPTI here; one that has
 * not started yet will (prof_start sees `injected`). Returns 1 (success)
 * as the driver expects. */
PROF_API int InitializeInjection(void) {
  __atomic_store_n(&injected, 1, __ATOMIC_RELEASE);
  if (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE)) {
    int rc = prof__gpu_try_start();
    if (rc == 0 && !hooked) hooked = prof__writer_hook_add(writer_hook, NULL) == 0;
    if (rc == 0) prof__writer_period_cap(CUPTI_WAKE_MS);
  }
  return 1;
}

static void gpu_stop(void) {
  __atomic_store_n(&waiting, 0, __ATOMIC_RELEASE);
  prof__cupti_stop();
}

void prof__gpu_stop_for_test(void) {
  __atomic_store_n(&waiting, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&injected, 0, __ATOMIC_RELEASE);
  prof__cupti_stop();
  prof__buf b;
  while (prof__gpu_queue_pop(&b)) prof__buf_free(&b);
}

const prof__module prof__mod_gpu = {.name = "gpu", .header = gpu_header, .start = gpu_start, .stop = gpu_stop};
