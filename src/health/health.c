/* health.c — the training-health producer: prof_scalar() and prof_histogram()
 * (the "health" module; MLPROF_MODULES also accepts its former name "model"). The live page and capture control are the "live"
 * module (src/live).
 *
 * A scalar is one PROF_EV_SCALAR event on the calling thread's ring
 * (name: tag id, a: double bits, b: step number + 1, 0 before any step).
 * A histogram is summarised inside the call (trace/rec_hist.c) and its encoded
 * summary appended to a preallocated staging buffer under a mutex; the
 * writer thread moves the staged records into one PROF_CHUNK_HIST chunk per
 * cycle, turning clock ticks into nanoseconds. A full staging buffer drops
 * the summary and counts it ("model.hist_dropped" in a META record).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bgwriter.h"
#include "core/producer.h"
#include "trace/rec_hist.h"

#define STAGE_BYTES (1u << 20)
#define REC_MAX 4096 /* an encoded record is at most ~3.2 KB (255 buckets) */

static struct {
  pthread_mutex_t mu;
  uint8_t *buf[2];   /* [0]: producers append; swapped by the writer */
  size_t len;
  uint64_t dropped, recorded;
} stage = {.mu = PTHREAD_MUTEX_INITIALIZER};

static prof__thread *health_self(void) {
  prof__thread *t = prof__self;
  if (PROF_LIKELY(t != NULL) && PROF_LIKELY(__atomic_load_n(&prof__enabled, __ATOMIC_RELAXED))) return t;
  if (t) {
    prof__misuse_count(PROF_MU_NOT_RUNNING);
    return NULL;
  }
  return prof__thread_get_slow();
}

PROF_API void prof_scalar(const char *tag, double value) {
  prof__thread *t = health_self();
  if (PROF_UNLIKELY(!t)) return;
  if (PROF_UNLIKELY(!tag)) {
    prof__misuse_count(PROF_MU_NULL_NAME);
    return;
  }
  if (!prof__call_enter(t)) return; /* a signal handler called during a call: counted as lost */
  uint32_t id = prof__name_id(t, tag);
  if (id)
    prof__ring_put(&t->ring, PROF_EV_SCALAR, 0, id, prof__ticks(), prof__f64_bits(value), prof_step_count());
  prof__call_leave(t);
}

/* Append one staged record: ticks (8 bytes), length (4), encoded bytes. */
static void stage_put(uint64_t ticks, const uint8_t *p, uint32_t len) {
  pthread_mutex_lock(&stage.mu);
  if (stage.buf[0] && stage.len + 12 + len <= STAGE_BYTES) {
    uint8_t *d = stage.buf[0] + stage.len;
    memcpy(d, &ticks, 8);
    memcpy(d + 8, &len, 4);
    memcpy(d + 12, p, len);
    stage.len += 12 + len;
    stage.recorded++;
  } else {
    stage.dropped++;
  }
  pthread_mutex_unlock(&stage.mu);
}

PROF_API void prof_histogram(const char *tag, int kind, const float *values, size_t n) {
  prof_histogram_units(tag, kind, values, n, 0);
}

PROF_API void prof_histogram_units(const char *tag, int kind, const float *values, size_t n, size_t units) {
  prof__thread *t = health_self();
  if (PROF_UNLIKELY(!t)) return;
  if (PROF_UNLIKELY(!tag || (!values && n))) {
    prof__misuse_count(PROF_MU_NULL_NAME);
    return;
  }
  uint32_t id = prof__name_id(t, tag);
  if (!id) return;
  prof__hrec r;
  r.ts_ns = 0; /* the writer puts the time in */
  r.step1 = prof_step_count();
  r.tid = t->tid;
  r.tag = id;
  r.kind = (unsigned)kind <= PROF_HIST_OTHER ? kind : PROF_HIST_OTHER;
  prof__rec_hist_summarise(values, n, &r.sum);
  if (units && n % units == 0) {
    r.sum.units = units;
    r.sum.dead_units = prof__rec_hist_dead_units(values, n, units);
  }
  uint64_t ticks = prof__ticks();
  uint8_t tmp[REC_MAX];
  prof__buf b = {tmp, 0, sizeof tmp, 0};
  prof__rec_hist_encode(&b, &r);
  if (!b.oom && b.p == tmp) stage_put(ticks, tmp + 1, (uint32_t)(b.len - 1)); /* drop the ts byte */
}

/* ---- writer side ------------------------------------------------------------ */

/* Re-encode staged records with their time in ns into `out`, keeping those
 * whose ticks fall in [lo, hi]. */
static void build_chunk(const uint8_t *p, size_t len, uint64_t lo, uint64_t hi, prof__buf *out) {
  prof__buf_u8(out, PROF_HIST_FORMAT);
  for (size_t off = 0; off + 12 <= len;) {
    uint64_t ticks;
    uint32_t n;
    memcpy(&ticks, p + off, 8);
    memcpy(&n, p + off + 8, 4);
    if (ticks >= lo && ticks <= hi) {
      prof__buf_varint(out, prof__ticks_to_ns(ticks));
      prof__buf_put(out, p + off + 12, n);
    }
    off += 12 + n;
  }
}

static void hist_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  (void)final;
  pthread_mutex_lock(&stage.mu);
  uint8_t *full = stage.buf[0];
  size_t len = stage.len;
  stage.buf[0] = stage.buf[1];
  stage.buf[1] = full;
  stage.len = 0;
  pthread_mutex_unlock(&stage.mu);
  if (!len || !full) return;
  prof__buf out = {0};
  if (tw) {
    build_chunk(full, len, 0, UINT64_MAX, &out);
    if (!out.oom) prof__tw_chunk(tw, PROF_CHUNK_HIST, out.p, out.len);
  }
  for (int slot = 0; slot < PROF_SEG_SLOTS; slot++) {
    uint64_t lo, hi;
    prof__tw *seg = prof__writer_segment(slot, &lo, &hi);
    if (!seg) continue;
    out.len = 0;
    build_chunk(full, len, lo, hi, &out);
    if (!out.oom && out.len > 1) prof__tw_chunk(seg, PROF_CHUNK_HIST, out.p, out.len);
  }
  prof__buf_free(&out);
}

/* ---- the module ------------------------------------------------------------- */

static size_t health_header(prof__kv *kv, size_t max) {
  if (max < 1) return 0;
  kv[0].key = "model.hist_format";
  kv[0].value = "1";
  return 1;
}

static int hook_added;

static int health_start(void) {
  if (!stage.buf[0]) {
    stage.buf[0] = malloc(STAGE_BYTES);
    stage.buf[1] = malloc(STAGE_BYTES);
    if (!stage.buf[0] || !stage.buf[1]) {
      free(stage.buf[0]);
      free(stage.buf[1]);
      stage.buf[0] = stage.buf[1] = NULL;
    }
  }
  if (!hook_added) hook_added = prof__writer_hook_add(hist_hook, NULL) == 0;
  return 0;
}

static void health_stop(void) {
  pthread_mutex_lock(&stage.mu);
  uint64_t dropped = stage.dropped, recorded = stage.recorded;
  pthread_mutex_unlock(&stage.mu);
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)recorded);
  prof__meta_add("model.hist_recorded", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)dropped);
  prof__meta_add("model.hist_dropped", v);
}

const prof__module prof__mod_health = {.name = "health", .alias = "model", .header = health_header, .start = health_start, .stop = health_stop};
