/* module.c — the memory module of the session: trace header facts
 * (mem.mode, mem.sample_bytes, mem.interposer) and the writer hook that
 * samples the process's memory as counter tracks.
 *
 * Every writer cycle (MLPROF_FLUSH_MS, 10 ms by default) the hook writes
 * COUNTER events on the writer thread's own track, named "mlprof-writer"
 * as the OS names that thread (one name in every report): mem.rss_bytes,
 * and, when malloc is interposed, mem.live_bytes (usable bytes of live heap
 * blocks, summed over the per-thread counters), mem.alloc_calls and
 * mem.alloc_bytes (cumulative). Each step end also leaves the live bytes
 * of that moment (prof__mem_step_boundary), which the next cycle writes as
 * a mem.live_bytes point stamped at the step end: growth across steps
 * shorter than the writer period is seen too. The writer thread marks itself as "inside
 * the profiler" so its own allocations (compression, buffers) are never
 * counted.
 *
 * It also sets the full-ring policy (MLPROF_RING_FULL=drop|wait, header
 * key ring_full): `wait` by default in full mode, whose leak and count
 * figures are only right when no event is lost; `drop` otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bgwriter.h"
#include "core/config.h"
#include "core/producer.h"
#include "mem/mem.h"

uint64_t prof__mem_pool_misuse(void);

/* Live bytes at step ends, from the step threads to the writer. Both sides
 * take `busy` with a try-lock: a step end that finds it taken drops its
 * point (counted in META mem.step_points_dropped), the writer retries on
 * its next cycle. */
#define STEP_PTS 1024
static struct {
  int busy;
  uint32_t n;
  uint64_t ticks[STEP_PTS];
  int64_t live[STEP_PTS];
  uint64_t dropped;
} SP;

static struct {
  int hooked;
  int announced;
  uint32_t tid;
  uint32_t id_live, id_rss, id_calls, id_bytes;
  uint64_t last_calls;
  int64_t peak_live;
  uint64_t last_ts; /* of the last mem.live_bytes point: the track never goes back in time */
  char mode[16], sample[24], interposed[4];
} M;

/* MLPROF_RING_FULL: drop or wait; the default depends on the mode. */
static void ring_policy_resolve(void) {
  const char *v = prof__env("RING_FULL");
  int wait = prof__mem_mode == PROF_MEM_FULL;
  if (v && strcmp(v, "wait") == 0) wait = 1;
  else if (v && strcmp(v, "drop") == 0) wait = 0;
  else if (v) prof__env_ignored("RING_FULL", v, "drop or wait", wait ? "using wait" : "using drop");
  __atomic_store_n(&prof__ring_full_wait, wait, __ATOMIC_RELAXED);
}

static size_t mem_header(prof__kv *kv, size_t max) {
  if (max < 4) return 0;
  prof__mem_mode_resolve();
  ring_policy_resolve();
  snprintf(M.mode, sizeof M.mode, "%s", prof__ev_mem_mode_name(prof__mem_mode));
  snprintf(M.sample, sizeof M.sample, "%llu", (unsigned long long)prof__mem_sample_bytes());
  snprintf(M.interposed, sizeof M.interposed, "%d", prof__mem_interposed);
  kv[0] = (prof__kv){PROF_MEM_KEY_MODE, M.mode};
  kv[1] = (prof__kv){PROF_MEM_KEY_SAMPLE_BYTES, M.sample};
  kv[2] = (prof__kv){PROF_MEM_KEY_INTERPOSER, M.interposed};
  kv[3] = (prof__kv){"ring_full", prof__ring_full_wait ? "wait" : "drop"};
  return 4;
}

static prof__event counter_ev(uint64_t ts, uint32_t name, double v) {
  prof__event e = {.ts = ts, .type = PROF_EV_COUNTER, .name = name, .a = prof__f64_bits(v)};
  return e;
}

static void hook_setup(prof__tw *tw) {
  M.announced = 1;
  M.tid = prof__writer_tid(); /* the final cycle may run on the exiting thread */
  M.id_live = prof__intern(PROF_MEM_COUNTER_LIVE);
  M.id_rss = prof__intern(PROF_MEM_COUNTER_RSS);
  M.id_calls = prof__intern(PROF_MEM_COUNTER_CALLS);
  M.id_bytes = prof__intern(PROF_MEM_COUNTER_BYTES);
  prof__tw_thread(tw, M.tid, "mlprof-writer", 0, 0);
}

/* The live heap now, from the counters of every thread. */
static int64_t live_now(void) {
  prof__mem_totals t;
  prof__mem_totals_get(&t);
  return t.live;
}

void prof__mem_step_boundary(uint64_t ticks) {
  if (!__atomic_load_n(&M.hooked, __ATOMIC_ACQUIRE) || !prof__mem_interposed) return;
  int64_t live = live_now();
  if (__atomic_exchange_n(&SP.busy, 1, __ATOMIC_ACQUIRE)) {
    __atomic_fetch_add(&SP.dropped, 1, __ATOMIC_RELAXED);
    return;
  }
  if (SP.n < STEP_PTS) {
    SP.ticks[SP.n] = ticks;
    SP.live[SP.n++] = live;
  } else {
    __atomic_fetch_add(&SP.dropped, 1, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&SP.busy, 0, __ATOMIC_RELEASE);
}

/* Write the step-end points and the high-water mark reached since the last
 * cycle (big.c), in time order, before this cycle's own sample. */
static void drain_step_points(prof__tw *tw) {
  static uint64_t ticks[STEP_PTS + 1];
  static int64_t live[STEP_PTS + 1];
  uint32_t n = 0;
  if (!__atomic_exchange_n(&SP.busy, 1, __ATOMIC_ACQUIRE)) { /* else a step end is writing: next cycle */
    n = SP.n;
    memcpy(ticks, SP.ticks, n * sizeof ticks[0]);
    memcpy(live, SP.live, n * sizeof live[0]);
    SP.n = 0;
    __atomic_store_n(&SP.busy, 0, __ATOMIC_RELEASE);
  }
  int64_t hw;
  uint64_t hw_ticks;
  if (prof__mem_high_water_take(&hw, &hw_ticks)) { /* the peak since the last cycle, in time order */
    uint32_t at = n;
    while (at > 0 && ticks[at - 1] > hw_ticks) at--;
    memmove(ticks + at + 1, ticks + at, (n - at) * sizeof ticks[0]);
    memmove(live + at + 1, live + at, (n - at) * sizeof live[0]);
    ticks[at] = hw_ticks;
    live[at] = hw;
    n++;
  }
  prof__event ev[64];
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t ts = prof__ticks_to_ns(ticks[i]);
    if (ts < M.last_ts) ts = M.last_ts;
    M.last_ts = ts;
    if (live[i] > M.peak_live) M.peak_live = live[i];
    ev[k++] = counter_ev(ts, M.id_live, (double)live[i]);
    if (k == 64 || i + 1 == n) {
      prof__tw_events(tw, M.tid, ev, k);
      k = 0;
    }
  }
}

static void final_meta(void) {
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&SP.dropped, __ATOMIC_RELAXED));
  prof__meta_add("mem.step_points_dropped", v);
  snprintf(v, sizeof v, "%lld", (long long)M.peak_live);
  prof__meta_add("mem.peak_live_bytes", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)prof__mem_pool_misuse());
  prof__meta_add("mem.pool_misuse", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)prof__mem_table_full());
  prof__meta_add("mem.samples_dropped", v);
  if (!prof__mem_interposed) return;
  prof__mem_start st;
  prof__mem_start_get(&st);
  snprintf(v, sizeof v, "%lld", (long long)st.live);
  prof__meta_add(PROF_MEM_META_START_LIVE, v);
  snprintf(v, sizeof v, "%lld", (long long)st.blocks);
  prof__meta_add(PROF_MEM_META_START_BLOCKS, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)st.listed_bytes);
  prof__meta_add(PROF_MEM_META_START_LISTED, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)st.unlisted);
  prof__meta_add(PROF_MEM_META_START_UNLISTED, v);
}

static void mem_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  prof__guard_depth = 1; /* the writer thread is the profiler: never counted */
  if (!tw) return;
  if (!M.announced) hook_setup(tw);
  uint64_t ts = prof__mono_ns();
  prof__event ev[4];
  size_t n = 0;
  uint64_t rss = prof__proc_rss();
  if (rss) ev[n++] = counter_ev(ts, M.id_rss, (double)rss);
  if (prof__mem_interposed) {
    drain_step_points(tw);
    if (ts < M.last_ts) ts = M.last_ts;
    M.last_ts = ts;
    prof__mem_totals t;
    prof__mem_totals_get(&t);
    if (t.live > M.peak_live) M.peak_live = t.live;
    ev[n++] = counter_ev(ts, M.id_live, (double)t.live);
    if (t.allocs != M.last_calls || final) {
      M.last_calls = t.allocs;
      ev[n++] = counter_ev(ts, M.id_calls, (double)t.allocs);
      ev[n++] = counter_ev(ts, M.id_bytes, (double)t.bytes);
    }
  }
  if (n) prof__tw_events(tw, M.tid, ev, n);
  if (final) final_meta();
}

/* A bad MLPROF_MEM_SAMPLE_BYTES (0, negative, not a number, above 1 TiB):
 * one message; the mean stays the default. */
static void check_sample_bytes(void) {
  const char *v = prof__env("MEM_SAMPLE_BYTES");
  if (!v || prof__mem_sample_bytes_parse(v)) return;
  char expected[64], instead[64];
  snprintf(expected, sizeof expected, "a number of bytes, 1..%llu", (unsigned long long)PROF_MEM_SAMPLE_BYTES_MAX);
  snprintf(instead, sizeof instead, "using %llu", (unsigned long long)prof__mem_sample_bytes_default());
  prof__env_ignored("MEM_SAMPLE_BYTES", v, expected, instead);
}

static int mem_start(void) {
  prof__mem_mode_resolve();
  const char *v = prof__env("MEM");
  if (v && prof__ev_mem_mode_parse(v) < 0) {
    char instead[32];
    snprintf(instead, sizeof instead, "using %s", prof__ev_mem_mode_name(prof__mem_mode));
    prof__env_ignored("MEM", v, "off, counts, sampled or full", instead);
  }
  check_sample_bytes();
  ring_policy_resolve();
  if (prof__mem_mode == PROF_MEM_OFF || M.hooked) return 0;
  if (prof__mem_interposed) prof__mem_session_begins();
  int rc = prof__writer_hook_add(mem_hook, NULL);
  if (rc == 0) __atomic_store_n(&M.hooked, 1, __ATOMIC_RELEASE);
  return rc;
}

/* Step hook: the live heap at every step end. */
static uint64_t mem_step(int begin, uint64_t step, uint64_t ticks) {
  (void)step;
  if (!begin) prof__mem_step_boundary(ticks);
  return 0;
}

const prof__module prof__mod_mem = {.name = "mem", .header = mem_header, .start = mem_start, .step = mem_step};
