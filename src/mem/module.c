/* module.c — the memory module of the session: trace header facts
 * (mem.mode, mem.sample_bytes, mem.interposer) and the writer hook that
 * samples the process's memory as counter tracks.
 *
 * Every writer cycle (MLPROF_FLUSH_MS, 10 ms by default) the hook writes
 * COUNTER events on the writer thread's own track, named "mlprof-writer"
 * as the OS names that thread (one name in every report): mem.rss_bytes,
 * and, when malloc is interposed, mem.live_bytes (usable bytes of live heap
 * blocks, summed over the per-thread counters), mem.alloc_calls and
 * mem.alloc_bytes (cumulative). The writer thread marks itself as "inside
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
#include <sys/syscall.h>
#include <unistd.h>

#include "core/session.h"
#include "mem/mem.h"

uint64_t prof__mem_pool_misuse(void);

static struct {
  int hooked;
  int announced;
  uint32_t tid;
  uint32_t id_live, id_rss, id_calls, id_bytes;
  uint64_t last_calls;
  int64_t peak_live;
  char mode[16], sample[24], interposed[4];
  int policy_said;
} M;

/* MLPROF_RING_FULL: drop or wait; the default depends on the mode. */
static void ring_policy_resolve(void) {
  const char *v = getenv("MLPROF_RING_FULL");
  int wait = prof__mem_mode == PROF_MEM_FULL;
  if (v && strcmp(v, "wait") == 0) wait = 1;
  else if (v && strcmp(v, "drop") == 0) wait = 0;
  else if (v && *v && !M.policy_said) {
    M.policy_said = 1;
    fprintf(stderr, "mlprof: ignoring MLPROF_RING_FULL='%s' (expected drop or wait); using %s\n", v,
            wait ? "wait" : "drop");
  }
  __atomic_store_n(&prof__ring_full_wait, wait, __ATOMIC_RELAXED);
}

static size_t mem_header(prof__kv *kv, size_t max) {
  if (max < 4) return 0;
  prof__mem_mode_resolve();
  ring_policy_resolve();
  snprintf(M.mode, sizeof M.mode, "%s", prof__mem_mode_name(prof__mem_mode));
  snprintf(M.sample, sizeof M.sample, "%llu", (unsigned long long)prof__mem_sample_bytes());
  snprintf(M.interposed, sizeof M.interposed, "%d", prof__mem_interposed);
  kv[0] = (prof__kv){"mem.mode", M.mode};
  kv[1] = (prof__kv){"mem.sample_bytes", M.sample};
  kv[2] = (prof__kv){"mem.interposer", M.interposed};
  kv[3] = (prof__kv){"ring_full", prof__ring_full_wait ? "wait" : "drop"};
  return 4;
}

static prof__event counter_ev(uint64_t ts, uint32_t name, double v) {
  prof__event e = {.ts = ts, .type = PROF_EV_COUNTER, .name = name, .a = prof__f64_bits(v)};
  return e;
}

static void hook_setup(prof__tw *tw) {
  M.announced = 1;
  M.tid = (uint32_t)syscall(SYS_gettid);
  M.id_live = prof__intern("mem.live_bytes");
  M.id_rss = prof__intern("mem.rss_bytes");
  M.id_calls = prof__intern("mem.alloc_calls");
  M.id_bytes = prof__intern("mem.alloc_bytes");
  prof__tw_thread(tw, M.tid, "mlprof-writer", 0, 0);
}

static void final_meta(void) {
  char v[32];
  snprintf(v, sizeof v, "%lld", (long long)M.peak_live);
  prof__meta_add("mem.peak_live_bytes", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)prof__mem_pool_misuse());
  prof__meta_add("mem.pool_misuse", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)prof__mem_table_full());
  prof__meta_add("mem.samples_dropped", v);
}

static void mem_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  prof__mem_guard = 1; /* the writer thread is the profiler: never counted */
  if (!tw) return;
  if (!M.announced) hook_setup(tw);
  uint64_t ts = prof__mono_ns();
  prof__event ev[4];
  size_t n = 0;
  uint64_t rss = prof__mem_rss();
  if (rss) ev[n++] = counter_ev(ts, M.id_rss, (double)rss);
  if (prof__mem_interposed) {
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

static int mem_start(void) {
  prof__mem_mode_resolve();
  const char *v = getenv("MLPROF_MEM");
  if (v && *v && prof__mem_mode_parse(v) < 0)
    fprintf(stderr, "mlprof: ignoring MLPROF_MEM='%s' (expected off, counts, sampled or full); using %s\n",
            v, prof__mem_mode_name(prof__mem_mode));
  ring_policy_resolve();
  if (prof__mem_mode == PROF_MEM_OFF || M.hooked) return 0;
  M.hooked = 1;
  return prof__writer_hook_add(mem_hook, NULL);
}

const prof__module prof__mod_mem = {"mem", mem_header, mem_start, NULL};
