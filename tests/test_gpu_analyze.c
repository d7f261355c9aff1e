/* test_gpu_analyze.c — the GPU report section on hand-built traces: busy %,
 * idle split, priority breakdown, kernels, ranges, copies, memory peak,
 * dropped records, communication (NCCL) kernels and their overlap with
 * compute, every finding (triggered and not), the GPU chunk codec
 * against malformed payloads, the JSON key, the Chrome events (alone and
 * through the exporter, with its window and cap; zero-length kernels and
 * calls as begin/end pairs) and the HTML panel.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/util/jsonparse.h"
#include "analyze/sections/gpu/sec_gpu.h"
#include "helpers.h"
#include "mlprof.h"

/* ---- trace builder ------------------------------------------------------- */

typedef struct gtb {
  prof__tw *w;
  const char *path;
  prof__buf b;
  prof__gpu_rec prev;
} gtb;

/* A trace whose header names the GPU capture, or (named = 0) not: a GPU
 * module started after the header was written. */
static gtb gtb_open_named(const char *stem, int named) {
  gtb t;
  memset(&t, 0, sizeof t);
  char err[256];
  t.path = th_tmp_path(stem, ".mlpt");
  prof__kv hdr[] = {{"program", "gpu-train"}, {"pid", "77"}, {"gpu.capture", "cupti"}};
  t.w = prof__tw_open(t.path, hdr, named ? 3 : 2, err);
  if (!t.w) fail_msg("%s", err);
  return t;
}

static gtb gtb_open(const char *stem) { return gtb_open_named(stem, 1); }

static void ev(gtb *t, uint32_t tid, uint64_t ts, int type, uint32_t name, int cat, uint64_t a) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = (uint8_t)type;
  e.name = name;
  e.cat = (uint8_t)cat;
  e.a = a;
  assert_int_equal(prof__tw_events(t->w, tid, &e, 1), 0);
}

static void str(gtb *t, uint32_t id, const char *s) { assert_int_equal(prof__tw_string(t->w, id, s, strlen(s)), 0); }

static void rec(gtb *t, prof__gpu_rec r) { prof__rec_gpu_encode(&t->b, &r, &t->prev); }

/* Close the current GPU payload as one chunk. */
static void chunk(gtb *t) {
  if (!t->b.len) return;
  assert_int_equal(prof__tw_chunk(t->w, PROF_CHUNK_GPU, t->b.p, t->b.len), 0);
  prof__buf_free(&t->b);
  memset(&t->prev, 0, sizeof t->prev);
}

static const char *gtb_close(gtb *t) {
  chunk(t);
  prof__kv f[] = {{"events_lost", "0"}};
  assert_int_equal(prof__tw_close(t->w, f, 1), 0);
  return t->path;
}

static prof__gpu_rec kernel(uint64_t s, uint64_t e, uint64_t launch, uint32_t name, uint32_t range) {
  prof__gpu_rec r = {.kind = PROF_GPU_KERNEL, .start = s, .end = e, .launch = launch, .name = name,
                     .range = range, .stream = 7, .tid = 100, .corr = (uint32_t)(s & 0xffffff) + 1};
  r.grid[0] = 64, r.grid[1] = r.grid[2] = 1;
  r.block[0] = 256, r.block[1] = r.block[2] = 1;
  r.regs = 64;
  return r;
}

static prof__gpu_rec device(uint32_t cc_major, uint32_t name) {
  return (prof__gpu_rec){.kind = PROF_GPU_DEVICE, .name = name, .cc_major = cc_major, .cc_minor = 0,
                         .sm_count = 100, .max_threads_per_sm = 2048, .max_warps_per_sm = 64,
                         .max_blocks_per_sm = 32, .max_regs_per_sm = 65536, .max_smem_per_sm = 102400,
                         .mem_bytes = 16ull << 30};
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  int rc = prof__an_run_opts(&an, path, 1, err);
  if (rc) fail_msg("analyze: %s", err);
  return an;
}

static int has_finding(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return 1;
  return 0;
}

/* ---- the reference trace -------------------------------------------------
 * One step [T0, T0+1000) on thread 100: data "load" [0,200), compute
 * "forward" [200,900), comm "allreduce" [920,1000) (times relative to T0).
 * GPU: kernels [300,500) and [450,600) launched at 250/260 (busy period
 * [300,600)), kernel [800,850) launched at 700 (after 600: host wait);
 * memcpy H2D [100,350) pageable 1e6 bytes, memset [550,700), runtime calls
 * [240,270) and [690,720), sync [860,880). Worked out by hand:
 *   busy 350, idle host 200 ([600,800)), idle other 450 ([0,300), [850,1000))
 *   kernel 350, memcpy 200, memset 100, comm 80, runtime 20, data 100,
 *   compute 130, other 20. */
#define T0 1000000ull

static const char *reference_trace(void) {
  gtb t = gtb_open("gpuref");
  str(&t, 1, "forward");
  str(&t, 2, "load");
  str(&t, 3, "allreduce");
  str(&t, 4, "gemm_kernel");
  str(&t, 5, "cudaLaunchKernel");
  str(&t, 6, "relu_kernel");
  str(&t, 7, "Test GPU");
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0, PROF_EV_RANGE_BEGIN, 2, PROF_CAT_DATA, 0);
  ev(&t, 100, T0 + 200, PROF_EV_RANGE_END, 2, 0, 0);
  ev(&t, 100, T0 + 200, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_COMPUTE, 0);
  ev(&t, 100, T0 + 900, PROF_EV_RANGE_END, 1, 0, 0);
  ev(&t, 100, T0 + 920, PROF_EV_RANGE_BEGIN, 3, PROF_CAT_COMM, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_RANGE_END, 3, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  rec(&t, device(8, 7));
  rec(&t, kernel(T0 + 800, T0 + 850, T0 + 700, 6, 0)); /* out of order on purpose */
  rec(&t, kernel(T0 + 300, T0 + 500, T0 + 250, 4, 1));
  chunk(&t);
  prof__gpu_rec k2 = kernel(T0 + 450, T0 + 600, T0 + 260, 4, 1);
  k2.regs = 32; /* shorter call: its launch configuration is not the one reported */
  rec(&t, k2);
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMCPY, .sub = PROF_GPU_COPY_H2D, .src_mem = PROF_GPU_MEM_PAGEABLE,
                          .dst_mem = PROF_GPU_MEM_DEVICE, .bytes = 1000000, .start = T0 + 100, .end = T0 + 350,
                          .range = 2, .tid = 100, .corr = 9, .launch = T0 + 90, .stream = 7});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMSET, .src_mem = PROF_GPU_MEM_DEVICE, .bytes = 4096,
                          .start = T0 + 550, .end = T0 + 700, .stream = 8});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = 5, .tid = 100,
                          .start = T0 + 240, .end = T0 + 270, .corr = 11});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = 5, .tid = 100,
                          .start = T0 + 690, .end = T0 + 720, .corr = 12});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .sub = 3, .start = T0 + 860, .end = T0 + 880, .tid = 100});
  const uint64_t mem[][3] = {{10, 1000, PROF_GPU_MEMOP_ALLOC}, {20, 500, PROF_GPU_MEMOP_ALLOC},
                             {30, 1000, PROF_GPU_MEMOP_FREE}, {40, 2000, PROF_GPU_MEMOP_ALLOC}};
  for (int i = 3; i >= 0; i--) /* reversed: the analyzer sorts by time */
    rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMORY, .sub = (uint8_t)mem[i][2], .bytes = mem[i][1],
                            .start = T0 + mem[i][0], .end = T0 + mem[i][0], .addr = 0x1000u * (unsigned)i});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_DROPPED, .bytes = 7});
  assert_int_equal(prof__tw_thread(t.w, PROF_GPU_PSEUDO_TID, "mlprof-cupti", 7, 0), 0);
  return gtb_close(&t);
}

static char *report_json(prof__an *an, size_t *len);

/* The reference step with its GPU records in a chunk before the events
 * and one after, the header naming the capture or not. */
static const char *chunk_first_trace(int named) {
  gtb t = gtb_open_named(named ? "gpufirst_named" : "gpufirst_unnamed", named);
  str(&t, 1, "forward");
  str(&t, 2, "load");
  str(&t, 4, "gemm_kernel");
  str(&t, 7, "Test GPU");
  rec(&t, device(8, 7));
  rec(&t, kernel(T0 + 300, T0 + 500, T0 + 250, 4, 1));
  chunk(&t);
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0, PROF_EV_RANGE_BEGIN, 2, PROF_CAT_DATA, 0);
  ev(&t, 100, T0 + 200, PROF_EV_RANGE_END, 2, 0, 0);
  ev(&t, 100, T0 + 200, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_COMPUTE, 0);
  ev(&t, 100, T0 + 900, PROF_EV_RANGE_END, 1, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  rec(&t, kernel(T0 + 700, T0 + 800, T0 + 650, 4, 1));
  return gtb_close(&t);
}

static char *gpu_json_of(const char *path, const char *threads, gpu_window *w) {
  assert_int_equal(setenv("MLPROF_ANALYZE_THREADS", threads, 1), 0);
  prof__an *an = analyze(path);
  unsetenv("MLPROF_ANALYZE_THREADS");
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_non_null(s);
  assert_int_equal(s->nwindows, 1);
  *w = s->windows[0];
  size_t len;
  char *j = report_json(an, &len);
  prof__an_free(an);
  char *g = strstr(j, "\"gpu\":");
  assert_non_null(g);
  char *copy = strdup(g);
  free(j);
  return copy;
}

/* A GPU section that wants no events until a capture is known (the
 * header's, or a first GPU chunk) still gets every event after that
 * chunk, serially and with the decode thread: the same figures as when
 * the header names the capture. */
static void gpu_events_after_a_chunk_the_header_did_not_announce(void **state) {
  (void)state;
  const char *named = chunk_first_trace(1);
  char *path = strdup(named);
  const char *unnamed = chunk_first_trace(0);
  for (int k = 0; k < 2; k++) {
    const char *threads = k ? "2" : "1";
    gpu_window a, b;
    char *ja = gpu_json_of(path, threads, &a), *jb = gpu_json_of(unnamed, threads, &b);
    assert_int_equal(a.end - a.begin, 1000); /* the step's window: the events arrived */
    assert_int_equal(b.end - b.begin, 1000);
    assert_int_equal(a.busy_ns, 300);
    assert_int_equal(b.busy_ns, a.busy_ns);
    for (int i = 0; i < GPU_BD_COUNT; i++) assert_int_equal(b.bd[i], a.bd[i]);
    assert_string_equal(jb, ja);
    free(ja);
    free(jb);
  }
  free(path);
}

static void busy_idle_and_breakdown_match_hand_computation(void **state) {
  (void)state;
  prof__an *an = analyze(reference_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_non_null(s);
  assert_int_equal(s->nwindows, 1);
  const gpu_window *w = &s->windows[0];
  assert_int_equal(w->end - w->begin, 1000);
  assert_int_equal(w->busy_ns, 350);
  assert_int_equal(w->idle_host_ns, 200);
  assert_int_equal(w->idle_other_ns, 450);
  assert_int_equal(w->memcpy_ns, 250);
  assert_int_equal(w->memset_ns, 150);
  assert_int_equal(w->sync_ns, 20);
  assert_int_equal(w->kernels, 3);
  const uint64_t want[GPU_BD_COUNT] = {350, 200, 100, 80, 20, 100, 130, 20};
  uint64_t sum = 0;
  for (int b = 0; b < GPU_BD_COUNT; b++) {
    assert_int_equal(w->bd[b], want[b]);
    sum += w->bd[b];
  }
  assert_int_equal(sum, 1000);
  assert_int_equal(s->total.busy_ns, 350);
  assert_int_equal(s->total.end, 1000);
  prof__an_free(an);
}

static void kernels_ranges_copies_memory_and_drops(void **state) {
  (void)state;
  prof__an *an = analyze(reference_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->kernels, 3);
  assert_int_equal(s->nkstats, 2);
  assert_string_equal(prof__an_str(an, s->kstats[0].name), "gemm_kernel");
  assert_int_equal(s->kstats[0].calls, 2);
  assert_int_equal(s->kstats[0].total_ns, 350);
  assert_int_equal(s->kstats[0].min_ns, 150);
  assert_int_equal(s->kstats[0].max_ns, 200);
  assert_int_equal(s->kstats[0].regs, 64); /* the longest call's configuration */
  /* 256 threads = 8 warps; 65536 / (64 regs * 32 * 8) = 4 blocks = 32 of 64 warps */
  assert_true(s->kstats[0].occupancy > 0.499 && s->kstats[0].occupancy < 0.501);
  /* ranges: forward 350 of kernels; load 250 of copies; none: 50 + 150 */
  assert_int_equal(s->nrstats, 3);
  assert_string_equal(prof__an_str(an, s->rstats[0].range), "forward");
  assert_int_equal(s->rstats[0].kernels, 2);
  assert_int_equal(s->rstats[0].kernel_ns, 350);
  assert_string_equal(prof__an_str(an, s->rstats[1].range), "load");
  assert_int_equal(s->rstats[1].copy_ns, 250);
  assert_int_equal(s->rstats[2].range, 0);
  const gpu_copy *h2d = &s->copy[PROF_GPU_COPY_H2D];
  assert_int_equal(h2d->count, 1);
  assert_int_equal(h2d->bytes, 1000000);
  assert_int_equal(h2d->ns, 250);
  assert_int_equal(h2d->pageable, 1);
  assert_int_equal(s->ndevices, 1);
  assert_int_equal(s->devices[0].mem_peak, 2500);
  assert_int_equal(s->dropped, 7);
  assert_true(an->lost_events >= 7); /* the pseudo thread's lost count */
  prof__an_free(an);
}

static char *report_json(prof__an *an, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  assert_non_null(f);
  assert_int_equal(prof__report_write(an, "json", f), 0);
  fclose(f);
  return buf;
}

static void json_report_has_the_gpu_key(void **state) {
  (void)state;
  prof__an *an = analyze(reference_trace());
  size_t len;
  char *text = report_json(an, &len);
  char err[128];
  prof__jv *v = prof__jv_parse(text, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  const prof__jv *busy = prof__jv_path(v, "gpu.total.busy_ns");
  assert_non_null(busy);
  assert_true(busy->num == 350);
  const prof__jv *bd = prof__jv_path(v, "gpu.total.breakdown_ns.runtime_api");
  assert_non_null(bd);
  assert_true(bd->num == 20);
  const prof__jv *steps = prof__jv_path(v, "gpu.steps");
  assert_non_null(steps);
  assert_int_equal(steps->len, 1);
  const prof__jv *k0 = prof__jv_at(prof__jv_path(v, "gpu.top_kernels"), 0);
  assert_string_equal(prof__jv_get(k0, "name")->str, "gemm_kernel");
  assert_true(prof__jv_path(v, "gpu.copies.h2d.bytes")->num == 1000000);
  prof__jv_free(v);
  free(text);
  prof__an_free(an);
}

static void chrome_events_use_pytorch_categories(void **state) {
  (void)state;
  prof__an *an = analyze(reference_trace());
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  prof__json j;
  prof__json_init(&j, f, 0);
  prof__json_arr_begin(&j);
  assert_int_equal(prof__sec_gpu_chrome(an, &j, T0, 77), 0);
  prof__json_arr_end(&j);
  fclose(f);
  char err[128];
  prof__jv *v = prof__jv_parse(buf, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  int kernels = 0, copies = 0, sets = 0, runtime = 0, flow_s = 0, flow_f = 0;
  for (size_t i = 0; i < v->len; i++) {
    const prof__jv *e = prof__jv_at(v, i), *cat = prof__jv_get(e, "cat"), *ph = prof__jv_get(e, "ph");
    if (cat && strcmp(cat->str, "kernel") == 0) kernels++;
    if (cat && strcmp(cat->str, "gpu_memcpy") == 0) copies++;
    if (cat && strcmp(cat->str, "gpu_memset") == 0) sets++;
    if (cat && strcmp(cat->str, "cuda_runtime") == 0) runtime++;
    if (strcmp(ph->str, "s") == 0) flow_s++;
    if (strcmp(ph->str, "f") == 0) flow_f++;
    if (cat && strcmp(cat->str, "kernel") == 0) {
      assert_true(prof__jv_get(e, "pid")->num == 1000000000.0);
      assert_true(prof__jv_get(e, "tid")->num == 7);
      assert_non_null(prof__jv_path(e, "args.grid"));
    }
  }
  assert_int_equal(kernels, 3);
  assert_int_equal(copies, 1);
  assert_int_equal(sets, 1);
  assert_int_equal(runtime, 2);
  assert_int_equal(flow_s, 4); /* 3 kernels + 1 copy carry a launch; the memset does not */
  assert_int_equal(flow_f, 4);
  prof__jv_free(v);
  free(buf);
  prof__an_free(an);
}

/* Counts of the GPU events of a Chrome export, and what the metadata says. */
typedef struct chrome_counts {
  int kernels, copies, sets, runtime, flow_s, flow_f, gpu_process, streams, capped;
  double first_kernel_ts, runtime_pid;
} chrome_counts;

static void count_event(const prof__jv *e, chrome_counts *c) {
  const prof__jv *cat = prof__jv_get(e, "cat"), *ph = prof__jv_get(e, "ph"), *name = prof__jv_get(e, "name");
  double pid = prof__jv_get(e, "pid")->num;
  const char *k = cat ? cat->str : "";
  if (strcmp(k, "kernel") == 0 && c->kernels++ == 0) c->first_kernel_ts = prof__jv_get(e, "ts")->num;
  c->copies += strcmp(k, "gpu_memcpy") == 0;
  c->sets += strcmp(k, "gpu_memset") == 0;
  if (strcmp(k, "cuda_runtime") == 0) c->runtime++, c->runtime_pid = pid;
  c->flow_s += strcmp(ph->str, "s") == 0;
  c->flow_f += strcmp(ph->str, "f") == 0;
  if (strcmp(ph->str, "M") != 0 || pid != 1000000000.0) return;
  const prof__jv *an = prof__jv_path(e, "args.name");
  if (strcmp(name->str, "process_name") == 0 && an && strcmp(an->str, "GPU 0: Test GPU") == 0) c->gpu_process++;
  if (strcmp(name->str, "thread_name") == 0 && an && strncmp(an->str, "stream ", 7) == 0) c->streams++;
}

/* Export the reference trace through prof__export_chrome_opts and count. */
static chrome_counts export_counts(const prof__chrome_opts *o) {
  prof__an *an = analyze(reference_trace());
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_chrome_opts(an, f, o), 0);
  fclose(f);
  char err[128];
  prof__jv *v = prof__jv_parse(buf, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  chrome_counts c = {0};
  const prof__jv *evs = prof__jv_get(v, "traceEvents");
  for (size_t i = 0; i < evs->len; i++) count_event(prof__jv_at(evs, i), &c);
  c.capped = prof__jv_path(v, "otherData.capped")->boolean;
  prof__jv_free(v);
  free(buf);
  prof__an_free(an);
  return c;
}

static void chrome_export_carries_gpu_tracks_and_flows(void **state) {
  (void)state;
  chrome_counts c = export_counts(NULL);
  assert_int_equal(c.gpu_process, 1); /* one process for GPU 0, named after the device */
  assert_int_equal(c.streams, 2);     /* streams 7 and 8 */
  assert_int_equal(c.kernels, 3);
  assert_int_equal(c.copies, 1);
  assert_int_equal(c.sets, 1);
  assert_int_equal(c.runtime, 2);
  assert_true(c.runtime_pid == 77.0); /* runtime calls on the CPU process */
  assert_int_equal(c.flow_s, 4);
  assert_int_equal(c.flow_f, 4);
  /* time zero is the first event (T0): the kernel at T0 + 800 ns, first in the file, is at 0.8 us */
  assert_true(c.first_kernel_ts > 0.7999 && c.first_kernel_ts < 0.8001);
}

static void chrome_export_window_and_cap_apply_to_gpu_events(void **state) {
  (void)state;
  /* [790, 1000) ns after T0 keeps the kernel at [800, 850) and its launch arrow only */
  prof__chrome_opts w = {.window_begin_ns = 790, .window_end_ns = 1000};
  chrome_counts c = export_counts(&w);
  assert_int_equal(c.kernels, 1);
  assert_int_equal(c.copies + c.sets + c.runtime, 0);
  assert_int_equal(c.flow_s, 1);
  assert_int_equal(c.flow_f, 1);
  /* a cap of one timed event: the step takes it, no GPU event follows */
  prof__chrome_opts cap = {.max_events = 1};
  c = export_counts(&cap);
  assert_true(c.capped);
  assert_int_equal(c.kernels + c.copies + c.sets + c.runtime + c.flow_s, 0);
}

/* Stream 7: kernel "k0" [100, 250), a zero-length "tick" kernel at 300,
 * where "k1" [300, 500) begins; a zero-length runtime call at 200 on thread
 * 100, inside its range "forward" [100, 400) (times after T0). */
static const char *zero_length_trace(void) {
  gtb t = gtb_open("gpuzero");
  const char *s[] = {"forward", "k0", "tick", "k1", "cudaLaunchKernel", "k2"};
  for (uint32_t i = 0; i < 6; i++) str(&t, i + 1, s[i]);
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0 + 100, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_COMPUTE, 0);
  ev(&t, 100, T0 + 400, PROF_EV_RANGE_END, 1, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  rec(&t, kernel(T0 + 100, T0 + 250, T0 + 50, 2, 1));
  rec(&t, kernel(T0 + 300, T0 + 300, T0 + 60, 3, 1));
  prof__gpu_rec k1 = kernel(T0 + 300, T0 + 500, T0 + 70, 4, 1);
  k1.corr = 20; /* not tick's */
  rec(&t, k1);
  rec(&t, kernel(T0 + 500, T0 + 700, T0 + 80, 6, 1)); /* k2, back to back with k1 */
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = 5, .tid = 100,
                          .start = T0 + 200, .end = T0 + 200, .corr = 21});
  return gtb_close(&t);
}

/* The n-th event with this phase and name (NULL if none). */
static const prof__jv *find_event(const prof__jv *v, const char *ph, const char *name, int n) {
  for (size_t i = 0; i < v->len; i++) {
    const prof__jv *e = prof__jv_at(v, i);
    if (!strcmp(prof__jv_get(e, "ph")->str, ph) && !strcmp(prof__jv_get(e, "name")->str, name) && n-- == 0) return e;
  }
  return NULL;
}

/* Do two parsed values hold the same JSON (members in the same order)? */
static int same_json(const prof__jv *a, const prof__jv *b) {
  if (a->type != b->type || a->len != b->len || a->num != b->num || a->boolean != b->boolean) return 0;
  if (a->type == PROF_JV_STR) return !strcmp(a->str, b->str);
  for (size_t i = 0; a->type >= PROF_JV_ARR && i < a->len; i++)
    if ((a->keys && strcmp(a->keys[i], b->keys[i])) || !same_json(&a->items[i], &b->items[i])) return 0;
  return 1;
}

/* A zero-length begin/end pair at `ts` us on (pid, tid), correlation
 * `corr`, whose end carries its begin's args (speedscope pairs a begin and
 * an end by name and args). */
static void assert_pair(const prof__jv *v, const char *name, double pid, double tid, double ts, double corr) {
  assert_null(find_event(v, "X", name, 0));
  const prof__jv *b = find_event(v, "B", name, 0), *e = find_event(v, "E", name, 0);
  assert_non_null(b);
  assert_non_null(e);
  assert_true(b < e); /* begin first in the file */
  for (int i = 0; i < 2; i++) {
    const prof__jv *x = i ? e : b;
    assert_true(prof__jv_get(x, "pid")->num == pid && prof__jv_get(x, "tid")->num == tid);
    assert_true(fabs(prof__jv_get(x, "ts")->num - ts) < 1e-9);
    assert_non_null(prof__jv_path(x, "args.correlation"));
    assert_true(prof__jv_path(x, "args.correlation")->num == corr);
  }
  assert_true(same_json(prof__jv_get(b, "args"), prof__jv_get(e, "args")));
}

/* Zero-length kernels and calls are begin/end pairs: as complete events
 * with dur 0, speedscope would end them before beginning them where
 * another range begins at their time. Others stay complete events. */
static void chrome_zero_length_gpu_work_is_a_begin_end_pair(void **state) {
  (void)state;
  prof__an *an = analyze(zero_length_trace());
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  prof__json j;
  prof__json_init(&j, f, 0);
  prof__json_arr_begin(&j);
  assert_int_equal(prof__sec_gpu_chrome(an, &j, T0, 77), 0);
  prof__json_arr_end(&j);
  fclose(f);
  char err[128];
  prof__jv *v = prof__jv_parse(buf, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  assert_pair(v, "tick", 1000000000.0, 7, 0.3, (double)kernel(T0 + 300, T0 + 300, 0, 3, 1).corr);
  assert_non_null(prof__jv_path(find_event(v, "E", "tick", 0), "args.grid"));
  assert_pair(v, "cudaLaunchKernel", 77, 100, 0.2, 21);
  const prof__jv *k1 = find_event(v, "X", "k1", 0);
  assert_non_null(k1);
  assert_true(fabs(prof__jv_get(k1, "ts")->num - 0.3) < 1e-9 && fabs(prof__jv_get(k1, "dur")->num - 0.2) < 1e-9);
  assert_non_null(find_event(v, "X", "k0", 0));
  /* k2 begins the nanosecond k1 ends: written 1 ns later, so that k1's
   * ts + dur cannot read after it */
  const prof__jv *k2 = find_event(v, "X", "k2", 0);
  assert_non_null(k2);
  assert_true(fabs(prof__jv_get(k2, "ts")->num - 0.501) < 1e-9 && fabs(prof__jv_get(k2, "dur")->num - 0.199) < 1e-9);
  prof__jv_free(v);
  free(buf);
  prof__an_free(an);
}

static void html_report_has_the_gpu_panel(void **state) {
  (void)state;
  prof__an *an = analyze(reference_trace());
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, "html", f), 0);
  fclose(f);
  const char *sec = strstr(buf, "<section class=\"sec\" id=\"gpu\">");
  assert_non_null(sec);
  assert_non_null(strstr(sec, "<td>gemm_kernel</td>"));
  assert_non_null(strstr(sec, "data-v=\"350\">350 ns</td>"));   /* gemm total */
  assert_non_null(strstr(sec, "data-v=\"175\">175 ns</td>"));   /* gemm average */
  assert_non_null(strstr(sec, "<td class=\"num\" data-v=\"64\">64x1x1</td>"));
  assert_non_null(strstr(sec, ">50.0%</td>")); /* occupancy */
  assert_non_null(strstr(sec, "<td>h2d</td>"));
  assert_non_null(strstr(sec, ">4000.00 GB/s</td>")); /* 1e6 bytes in 250 ns */
  /* step 0: busy 35%, idle waiting for the host 20%, idle other 45% */
  assert_non_null(strstr(sec, "<title>step 0: kernels running 35 %; idle: waiting for the host 20 %; idle: other 45 %"));
  free(buf);
  prof__an_free(an);
}

/* ---- communication kernels ----------------------------------------------
 * One step [T0, T0+1000) on thread 100: compute "forward" [0,700), comm
 * "allreduce" [700,1000). Kernels: gemm [100,400) and [500,700) on stream
 * 7, the NCCL kernel [nccl_s, nccl_e) on stream 9. Its name string reaches
 * the file after the GPU chunk (strings are flushed at close), as in a real
 * trace whose GPU chunk precedes the STRINGS chunk.
 * With the NCCL kernel at [600,900), by hand:
 *   all kernels [100,400) + [500,900): busy 700
 *   compute kernels 500, communication kernels 300, overlap [600,700) 100
 *   breakdown: kernel 500, communication [700,900) + CPU comm [900,1000)
 *   = 300, cpu_compute [0,100) + [400,500) = 200; sum 1000. */
static const char *nccl_trace(uint64_t nccl_s, uint64_t nccl_e, const char *nccl_name) {
  gtb t = gtb_open("gpunccl");
  rec(&t, kernel(T0 + 100, T0 + 400, T0 + 50, 2, 1));
  rec(&t, kernel(T0 + 500, T0 + 700, T0 + 450, 2, 1));
  prof__gpu_rec n = kernel(T0 + nccl_s, T0 + nccl_e, T0 + 550, 3, 4);
  n.stream = 9;
  rec(&t, n);
  chunk(&t);
  str(&t, 1, "forward");
  str(&t, 2, "gemm_kernel");
  str(&t, 3, nccl_name);
  str(&t, 4, "allreduce");
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_COMPUTE, 0);
  ev(&t, 100, T0 + 700, PROF_EV_RANGE_END, 1, 0, 0);
  ev(&t, 100, T0 + 700, PROF_EV_RANGE_BEGIN, 4, PROF_CAT_COMM, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_RANGE_END, 4, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  return gtb_close(&t);
}

static void assert_breakdown(const gpu_window *w, const uint64_t want[GPU_BD_COUNT]) {
  uint64_t sum = 0;
  for (int b = 0; b < GPU_BD_COUNT; b++) {
    if (w->bd[b] != want[b])
      fail_msg("bucket %s: %llu, expected %llu", prof__sec_gpu_bd_name(b), (unsigned long long)w->bd[b],
               (unsigned long long)want[b]);
    sum += w->bd[b];
  }
  assert_int_equal(sum, w->end - w->begin);
}

static void nccl_kernels_count_as_communication(void **state) {
  (void)state;
  prof__an *an = analyze(nccl_trace(600, 900, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->nwindows, 1);
  assert_int_equal(s->kernels, 3);
  assert_int_equal(s->comm_kernels, 1);
  const gpu_window *w = &s->windows[0];
  assert_int_equal(w->busy_ns, 700); /* all kernels, communication included */
  assert_int_equal(w->kernels, 3);
  assert_int_equal(w->comm_kernel_ns, 300);
  assert_int_equal(w->comm_overlap_ns, 100);
  const uint64_t want[GPU_BD_COUNT] = {500, 0, 0, 300, 0, 0, 200, 0};
  assert_breakdown(w, want);
  assert_int_equal(s->total.comm_kernel_ns, 300);
  assert_int_equal(s->total.comm_overlap_ns, 100);
  assert_int_equal(s->total.busy_ns, 700);
  assert_int_equal(s->total.bd[GPU_BD_COMM], 300);
  /* idle: [0,100) before the first kernel, [400,500) between the busy periods, [900,1000) after */
  assert_int_equal(w->idle_host_ns + w->idle_other_ns, 300);
  prof__an_free(an);
}

static void trace_without_nccl_has_no_communication_kernels(void **state) {
  (void)state;
  /* the same shape with a compute kernel in the NCCL kernel's place */
  prof__an *an = analyze(nccl_trace(600, 900, "elementwise_add_kernel"));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->comm_kernels, 0);
  const gpu_window *w = &s->windows[0];
  assert_int_equal(w->busy_ns, 700);
  assert_int_equal(w->comm_kernel_ns, 0);
  assert_int_equal(w->comm_overlap_ns, 0);
  assert_int_equal(s->total.comm_kernel_ns, 0);
  assert_int_equal(s->total.comm_overlap_ns, 0);
  /* every kernel in the kernel bucket; communication is the CPU range after 900 */
  const uint64_t want[GPU_BD_COUNT] = {700, 0, 0, 100, 0, 0, 200, 0};
  assert_breakdown(w, want);
  assert_false(has_finding(an, "gpu_comm_exposed"));
  size_t len;
  char *text = report_json(an, &len);
  char err[128];
  prof__jv *v = prof__jv_parse(text, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  assert_true(prof__jv_path(v, "gpu.total.comm_kernel_ns")->num == 0);
  assert_true(prof__jv_path(v, "gpu.total.comm_overlap_ns")->num == 0);
  prof__jv_free(v);
  free(text);
  prof__an_free(an);
}

static void comm_kernel_names_are_recognised_in_any_case(void **state) {
  (void)state;
  assert_true(prof__sec_gpu_comm_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  assert_true(prof__sec_gpu_comm_kernel_name("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  assert_true(prof__sec_gpu_comm_kernel_name("NCCL_ReduceScatter"));
  assert_true(prof__sec_gpu_comm_kernel_name("rcclGenericKernel"));
  assert_true(prof__sec_gpu_comm_kernel_name("void RCCL_AllReduce<float>"));
  assert_false(prof__sec_gpu_comm_kernel_name("ampere_fp16_s16816gemm_tensorop"));
  assert_false(prof__sec_gpu_comm_kernel_name("ncc_l_kernel"));
  assert_false(prof__sec_gpu_comm_kernel_name(NULL));
  /* an unnamed kernel (id 0) and one whose name string is missing count as compute */
  gtb t = gtb_open("gpunoname");
  rec(&t, kernel(T0 + 100, T0 + 200, T0, 0, 0));
  rec(&t, kernel(T0 + 300, T0 + 400, T0, 999, 0));
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0 + 500, PROF_EV_STEP_END, 0, 0, 0);
  prof__an *an = analyze(gtb_close(&t));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->comm_kernels, 0);
  assert_int_equal(s->windows[0].bd[GPU_BD_KERNEL], 200);
  prof__an_free(an);
}

static void comm_figures_reach_json_text_and_html(void **state) {
  (void)state;
  prof__an *an = analyze(nccl_trace(600, 900, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  size_t len;
  char *text = report_json(an, &len);
  char err[128];
  prof__jv *v = prof__jv_parse(text, len, err);
  if (!v) fail_msg("bad JSON: %s", err);
  assert_true(prof__jv_path(v, "gpu.total.comm_kernel_ns")->num == 300);
  assert_true(prof__jv_path(v, "gpu.total.comm_overlap_ns")->num == 100);
  assert_true(prof__jv_path(v, "gpu.total.breakdown_ns.kernel")->num == 500);
  assert_true(prof__jv_path(v, "gpu.total.breakdown_ns.communication")->num == 300);
  assert_true(prof__jv_path(v, "gpu.records.comm_kernels")->num == 1);
  const prof__jv *st0 = prof__jv_at(prof__jv_path(v, "gpu.steps"), 0);
  assert_true(prof__jv_get(st0, "comm_kernel_ns")->num == 300);
  assert_true(prof__jv_get(st0, "comm_overlap_ns")->num == 100);
  prof__jv_free(v);
  free(text);
  char *buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, "text", f), 0);
  fclose(f);
  assert_non_null(strstr(buf, "communication kernels 300 ns, 33.3% overlapped with compute"));
  free(buf);
  buf = NULL;
  f = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, "html", f), 0);
  fclose(f);
  const char *sec = strstr(buf, "<section class=\"sec\" id=\"gpu\">");
  assert_non_null(sec);
  assert_non_null(strstr(sec, "<td>communication kernels (NCCL/RCCL)</td>"));
  assert_non_null(strstr(sec, "33.3% of communication kernel time overlapped with compute kernels."));
  free(buf);
  prof__an_free(an);
}

static void exposed_comm_kernels_are_flagged_only_when_not_overlapped(void **state) {
  (void)state;
  /* [600,900): 100 of 300 overlapped (33%), 200 alone = 20% of the step */
  prof__an *an = analyze(nccl_trace(600, 900, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  assert_true(has_finding(an, "gpu_comm_exposed"));
  prof__an_free(an);
  /* [150,350): entirely under the first gemm */
  an = analyze(nccl_trace(150, 350, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->total.comm_kernel_ns, 200);
  assert_int_equal(s->total.comm_overlap_ns, 200);
  assert_int_equal(s->total.busy_ns, 500);
  assert_int_equal(s->total.bd[GPU_BD_KERNEL], 500);
  assert_int_equal(s->total.bd[GPU_BD_COMM], 300); /* the CPU comm range alone */
  assert_false(has_finding(an, "gpu_comm_exposed"));
  prof__an_free(an);
}

/* ---- findings ------------------------------------------------------------ */

typedef struct shape {
  int steps;
  uint64_t step_ns, data_ns, copy_ns, sync_ns;
  int kernels;            /* per step */
  uint64_t kernel_ns, gap_ns;
  int launch_after;       /* launches come after the previous kernel ended */
  const char *kname;
  uint32_t cc_major;
  int pinned;
} shape;

static const shape healthy = {10, 10000000, 0, 100000, 0, 2, 4850000, 10000, 0,
                              "ampere_fp16_s16816gemm_tensorop", 8, 1};

static const char *shaped_trace(const shape *sh) {
  gtb t = gtb_open("gpushape");
  str(&t, 1, "step_body");
  str(&t, 2, "load_batch");
  str(&t, 3, sh->kname);
  str(&t, 4, "GPU X");
  rec(&t, device(sh->cc_major, 4));
  uint64_t prev_start = 0, prev_end = 0;
  uint32_t corr = 1;
  for (int s = 0; s < sh->steps; s++) {
    uint64_t t0 = 1000000000ull + (uint64_t)s * sh->step_ns, c = t0 + sh->data_ns;
    ev(&t, 100, t0, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)s);
    if (sh->data_ns) {
      ev(&t, 100, t0, PROF_EV_RANGE_BEGIN, 2, PROF_CAT_DATA, 0);
      ev(&t, 100, c, PROF_EV_RANGE_END, 2, 0, 0);
    }
    ev(&t, 100, c, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_COMPUTE, 0);
    if (sh->copy_ns) {
      rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMCPY, .sub = PROF_GPU_COPY_H2D, .bytes = 1 << 20,
                              .src_mem = sh->pinned ? PROF_GPU_MEM_PINNED : PROF_GPU_MEM_PAGEABLE,
                              .start = c, .end = c + sh->copy_ns, .corr = corr++});
      c += sh->copy_ns;
    }
    for (int k = 0; k < sh->kernels; k++) {
      uint64_t launch = sh->launch_after ? (prev_end > c - sh->gap_ns / 2 ? prev_end : c - sh->gap_ns / 2)
                                         : (prev_start ? prev_start : c - 1);
      prof__gpu_rec r = kernel(c, c + sh->kernel_ns, launch, 3, 1);
      r.corr = corr++;
      rec(&t, r);
      prev_start = c;
      prev_end = c + sh->kernel_ns;
      c += sh->kernel_ns + sh->gap_ns;
    }
    if (sh->sync_ns) rec(&t, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .start = c, .end = c + sh->sync_ns});
    uint64_t e = t0 + sh->step_ns;
    assert_true(c + sh->sync_ns <= e);
    ev(&t, 100, e, PROF_EV_RANGE_END, 1, 0, 0);
    ev(&t, 100, e, PROF_EV_STEP_END, 0, 0, (uint64_t)s);
    chunk(&t);
  }
  return gtb_close(&t);
}

static const char *const gpu_ids[] = {"gpu_low_utilization", "gpu_launch_bound", "gpu_copy_heavy",
                                      "gpu_host_input_bound", "gpu_sync_heavy", "gpu_fp32_matmul",
                                      "gpu_comm_exposed"};

/* Analyze a shape; assert that exactly the findings named in `want` fire. */
static void expect_findings(const shape *sh, const char *want) {
  prof__an *an = analyze(shaped_trace(sh));
  for (size_t i = 0; i < sizeof gpu_ids / sizeof gpu_ids[0]; i++) {
    int expected = strstr(want, gpu_ids[i]) != NULL;
    if (has_finding(an, gpu_ids[i]) != expected)
      fail_msg("finding %s: expected %s (busy %llu of %llu)", gpu_ids[i], expected ? "present" : "absent",
               (unsigned long long)prof__sec_gpu_summary(an)->total.busy_ns,
               (unsigned long long)prof__sec_gpu_summary(an)->total.end);
    /* every GPU performance finding predicts a saving, except fp32 matmuls
     * (their gain is a speed-up this run cannot measure) */
    for (size_t k = 0; expected && k < an->nfindings; k++)
      if (!strcmp(an->findings[k].id, gpu_ids[i]) &&
          an->findings[k].has_saving != (strcmp(gpu_ids[i], "gpu_fp32_matmul") != 0))
        fail_msg("finding %s: saving %s", gpu_ids[i], an->findings[k].has_saving ? "unexpected" : "missing");
  }
  prof__an_free(an);
}

static void healthy_trace_has_no_gpu_findings(void **state) {
  (void)state;
  expect_findings(&healthy, "");
}

static void low_utilization_fires_below_half_busy(void **state) {
  (void)state;
  shape sh = healthy;
  sh.kernel_ns = 1000000; /* 2 x 1 ms of 10 ms */
  expect_findings(&sh, "gpu_low_utilization");
}

static void many_tiny_late_launches_are_launch_bound(void **state) {
  (void)state;
  shape sh = healthy;
  sh.kernels = 200;
  sh.kernel_ns = 5000;
  sh.gap_ns = 20000;
  sh.launch_after = 1;
  sh.step_ns = 5200000;
  expect_findings(&sh, "gpu_low_utilization gpu_launch_bound");
}

static void unhidden_copies_are_copy_heavy(void **state) {
  (void)state;
  shape sh = healthy;
  sh.copy_ns = 3000000;
  sh.kernel_ns = 3000000;
  sh.pinned = 0;
  expect_findings(&sh, "gpu_copy_heavy");
}

static void gpu_waiting_on_data_loading_is_input_bound(void **state) {
  (void)state;
  shape sh = healthy;
  sh.data_ns = 4000000;
  sh.kernel_ns = 2900000;
  sh.launch_after = 1;
  expect_findings(&sh, "gpu_host_input_bound");
}

static void long_synchronisations_are_sync_heavy(void **state) {
  (void)state;
  shape sh = healthy;
  sh.kernel_ns = 3000000;
  sh.sync_ns = 3500000;
  expect_findings(&sh, "gpu_sync_heavy");
}

/* The saving of a synchronisation finding is the blocking time per step. */
static void sync_saving_is_the_blocking_time(void **state) {
  (void)state;
  shape sh = healthy;
  sh.kernel_ns = 3000000;
  sh.sync_ns = 3500000;
  prof__an *an = analyze(shaped_trace(&sh));
  int seen = 0;
  for (size_t k = 0; k < an->nfindings; k++)
    if (!strcmp(an->findings[k].id, "gpu_sync_heavy")) {
      seen = 1;
      assert_true(an->findings[k].has_saving);
      assert_int_equal(an->findings[k].saving_ns, 3500000);
      assert_non_null(strstr(an->findings[k].saving_model, "blocked"));
    }
  assert_true(seen);
  prof__an_free(an);
}

static void fp32_gemm_on_tensor_core_gpu_is_flagged_only_there(void **state) {
  (void)state;
  shape sh = healthy;
  sh.kname = "volta_sgemm_128x64_nn";
  sh.cc_major = 7;
  expect_findings(&sh, "gpu_fp32_matmul");
  sh.cc_major = 6; /* no tensor cores */
  expect_findings(&sh, "");
  assert_true(prof__sec_gpu_fp32_matmul_name("ampere_sgemm_64x32_tn"));
  assert_false(prof__sec_gpu_fp32_matmul_name("ampere_tf32_s1688gemm_tn"));
  assert_false(prof__sec_gpu_fp32_matmul_name("elementwise_kernel"));
}

/* ---- codec --------------------------------------------------------------- */

static void codec_round_trips_every_kind(void **state) {
  (void)state;
  prof__gpu_rec in[9];
  memset(in, 0, sizeof in);
  for (int i = 0; i < 9; i++) {
    in[i].kind = (uint8_t)(i + 1);
    in[i].start = 5000000000ull - (uint64_t)i * 1000; /* decreasing: negative deltas */
    in[i].end = in[i].start + (uint64_t)i * 10;
  }
  in[0].name = 3, in[0].grid[0] = -1, in[0].block[2] = 1024, in[0].regs = 255, in[0].launch = in[0].start - 99;
  in[0].tid = 42, in[0].range = 9, in[0].smem_dynamic = 49152;
  in[1].sub = PROF_GPU_COPY_D2H, in[1].bytes = 1ull << 40, in[1].src_mem = 3, in[1].dst_mem = 2;
  in[3].addr = 0xdeadbeef000ull, in[3].bytes = 77, in[3].sub = PROF_GPU_MEMOP_FREE;
  in[7].cc_major = 9, in[7].mem_bytes = 80ull << 30, in[7].max_smem_per_sm = 233472;
  in[8].bytes = 12345;
  prof__buf b = {0};
  prof__gpu_rec prev = {0}, out;
  for (int i = 0; i < 9; i++) prof__rec_gpu_encode(&b, &in[i], &prev);
  prof__gpu_dec d;
  assert_int_equal(prof__rec_gpu_dec_init(&d, b.p, b.len), 0);
  for (int i = 0; i < 9; i++) {
    assert_int_equal(prof__rec_gpu_dec_next(&d, &out), 1);
    assert_memory_equal(&out, &in[i], sizeof out);
  }
  assert_int_equal(prof__rec_gpu_dec_next(&d, &out), 0);
  /* every truncation and a flipped byte decode without crashing */
  for (size_t cut = 0; cut < b.len; cut++) {
    int rc = prof__rec_gpu_dec_init(&d, b.p, cut), n = 0;
    while (rc == 0 && (rc = prof__rec_gpu_dec_next(&d, &out)) == 1) rc = 0 * ++n;
    assert_true(n < 9);
  }
  b.p[0] = 99;
  assert_int_equal(prof__rec_gpu_dec_init(&d, b.p, b.len), PROF_EVERSION);
  prof__buf_free(&b);
}

static void corrupt_gpu_chunk_is_counted_not_fatal(void **state) {
  (void)state;
  gtb t = gtb_open("gpubad");
  ev(&t, 100, 10, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, 1010, PROF_EV_STEP_END, 0, 0, 0);
  const uint8_t junk[] = {PROF_GPU_FORMAT, 1, 0, 0, 0x80}; /* kernel cut inside a varint */
  assert_int_equal(prof__tw_chunk(t.w, PROF_CHUNK_GPU, junk, sizeof junk), 0);
  rec(&t, kernel(100, 600, 50, 0, 0));
  prof__an *an = analyze(gtb_close(&t));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->bad_chunks, 1);
  assert_int_equal(s->kernels, 1);
  assert_int_equal(s->windows[0].busy_ns, 500);
  prof__an_free(an);
}

static void trace_without_gpu_has_no_section(void **state) {
  (void)state;
  gtb t = gtb_open("gpunone");
  ev(&t, 100, 10, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, 1010, PROF_EV_STEP_END, 0, 0, 0);
  prof__an *an = analyze(gtb_close(&t));
  assert_false(prof__sec_gpu_summary(an)->have_data);
  size_t len;
  char *text = report_json(an, &len);
  assert_null(strstr(text, "\"gpu\""));
  free(text);
  char *html = NULL;
  FILE *f = open_memstream(&html, &len);
  assert_int_equal(prof__report_write(an, "html", f), 0);
  fclose(f);
  assert_null(strstr(html, "id=\"gpu\""));
  free(html);
  prof__an_free(an);
}

/* ---- per device, per thread, and what cannot be attributed ---------------- */

/* One step [T0, T0+1000) on thread 100. Device 0 busy [0,1000), device 1
 * only [0,10): one union over both would call the GPU 100 % busy. Syncs on
 * the step thread [100,600) and [200,700) overlap (union 600); a watchdog
 * thread 200 syncs the whole step and must not count. Runtime calls: the
 * step thread [100,200), a pin-memory thread 300 [0,1000). Memory: 1 GiB
 * pinned host memory and 100 MiB of device memory on device 1. */
static const char *per_device_trace(void) {
  gtb t = gtb_open("gpudev");
  str(&t, 1, "k0");
  str(&t, 2, "k1");
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  prof__gpu_rec d0 = device(8, 1), d1 = device(8, 2);
  d1.device = 1;
  rec(&t, d0);
  rec(&t, d1);
  rec(&t, kernel(T0, T0 + 1000, T0 - 5, 1, 0));
  prof__gpu_rec k1 = kernel(T0, T0 + 10, T0 - 5, 2, 0);
  k1.device = 1;
  rec(&t, k1);
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .start = T0 + 100, .end = T0 + 600, .tid = 100});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .start = T0 + 200, .end = T0 + 700, .tid = 100});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .start = T0, .end = T0 + 1000, .tid = 200});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .start = T0 + 100, .end = T0 + 200,
                          .tid = 100, .name = 1});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .start = T0, .end = T0 + 1000,
                          .tid = 300, .name = 1});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMORY, .sub = PROF_GPU_MEMOP_ALLOC, .src_mem = PROF_GPU_MEM_PINNED,
                          .bytes = 1ull << 30, .start = T0 + 1, .end = T0 + 1, .device = 1});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_MEMORY, .sub = PROF_GPU_MEMOP_ALLOC, .src_mem = PROF_GPU_MEM_DEVICE,
                          .bytes = 100ull << 20, .start = T0 + 2, .end = T0 + 2, .device = 1});
  return gtb_close(&t);
}

static void busy_is_per_device_not_one_union(void **state) {
  (void)state;
  prof__an *an = analyze(per_device_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->nbusy_devices, 2);
  assert_int_equal(s->total.busy_ns_dev[0], 1000);
  assert_int_equal(s->total.busy_ns_dev[1], 10);
  assert_int_equal(s->total.busy_ns, 505); /* the mean of the devices */
  prof__an_free(an);
}

static void sync_is_a_union_on_the_step_thread(void **state) {
  (void)state;
  prof__an *an = analyze(per_device_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->total.sync_ns, 600);
  assert_true(s->total.sync_ns <= s->total.end);
  prof__an_free(an);
}

static void runtime_time_is_the_step_threads(void **state) {
  (void)state;
  prof__an *an = analyze(per_device_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  /* [100,200) of the step thread lies under device 0's kernel: nothing left for runtime_api */
  assert_int_equal(s->total.bd[GPU_BD_RUNTIME], 0);
  assert_int_equal(s->total.bd[GPU_BD_KERNEL], 1000);
  prof__an_free(an);
}

static void device_memory_peak_excludes_pinned_host_memory(void **state) {
  (void)state;
  prof__an *an = analyze(per_device_trace());
  const gpu_summary *s = prof__sec_gpu_summary(an);
  const gpu_device *d = NULL;
  for (size_t i = 0; i < s->ndevices; i++)
    if (s->devices[i].id == 1) d = &s->devices[i];
  assert_non_null(d);
  assert_int_equal(d->mem_peak, 100ull << 20);
  prof__an_free(an);
}

/* Runtime calls of a thread that is not the step's leave the breakdown;
 * the step thread's own call outside kernels counts. */
static void runtime_of_other_threads_is_not_step_time(void **state) {
  (void)state;
  gtb t = gtb_open("gpurt");
  str(&t, 1, "cudaMemcpy");
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  rec(&t, kernel(T0, T0 + 100, T0 - 5, 1, 0));
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .start = T0 + 200, .end = T0 + 300,
                          .tid = 100, .name = 1});
  rec(&t, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .start = T0 + 100, .end = T0 + 1000,
                          .tid = 300, .name = 1});
  prof__an *an = analyze(gtb_close(&t));
  assert_int_equal(prof__sec_gpu_summary(an)->total.bd[GPU_BD_RUNTIME], 100);
  prof__an_free(an);
}

static void idle_before_unattributed_kernels_has_its_own_bucket(void **state) {
  (void)state;
  gtb t = gtb_open("gpunolaunch");
  str(&t, 1, "k");
  ev(&t, 100, T0, PROF_EV_STEP_BEGIN, 0, 0, 0);
  ev(&t, 100, T0 + 1000, PROF_EV_STEP_END, 0, 0, 0);
  rec(&t, kernel(T0 + 500, T0 + 600, 0, 1, 0)); /* no launch record */
  prof__an *an = analyze(gtb_close(&t));
  const gpu_summary *s = prof__sec_gpu_summary(an);
  assert_int_equal(s->total.idle_unattributed_ns, 500);
  assert_int_equal(s->total.idle_other_ns, 400);
  assert_int_equal(s->total.idle_host_ns, 0);
  assert_int_equal(s->kernels_unattributed, 1);
  prof__an_free(an);
}

/* Kernel names cuBLAS/cuDNN really use (Volta to Hopper). */
static void fp32_matmul_names_match_real_cublas_kernels(void **state) {
  (void)state;
  static const char *const fp32[] = {"volta_sgemm_128x64_nn", "ampere_sgemm_128x64_tn",
                                     "ampere_sgemm_64x32_sliced1x4_nn", "turing_sgemm_128x32_nt",
                                     "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1",
                                     "scudnn_128x64_relu_interior_nn_v1"};
  static const char *const reduced[] = {
      "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
      "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
      "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
      "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1",
      "volta_h884gemm_64x64_ldg8_nn",
      "turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn",
      "elementwise_kernel"};
  for (size_t i = 0; i < sizeof fp32 / sizeof fp32[0]; i++)
    if (!prof__sec_gpu_fp32_matmul_name(fp32[i])) fail_msg("not fp32: %s", fp32[i]);
  for (size_t i = 0; i < sizeof reduced / sizeof reduced[0]; i++)
    if (prof__sec_gpu_fp32_matmul_name(reduced[i])) fail_msg("fp32: %s", reduced[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(busy_idle_and_breakdown_match_hand_computation),
      cmocka_unit_test(gpu_events_after_a_chunk_the_header_did_not_announce),
      cmocka_unit_test(kernels_ranges_copies_memory_and_drops),
      cmocka_unit_test(json_report_has_the_gpu_key),
      cmocka_unit_test(chrome_events_use_pytorch_categories),
      cmocka_unit_test(chrome_export_carries_gpu_tracks_and_flows),
      cmocka_unit_test(chrome_export_window_and_cap_apply_to_gpu_events),
      cmocka_unit_test(chrome_zero_length_gpu_work_is_a_begin_end_pair),
      cmocka_unit_test(html_report_has_the_gpu_panel),
      cmocka_unit_test(nccl_kernels_count_as_communication),
      cmocka_unit_test(trace_without_nccl_has_no_communication_kernels),
      cmocka_unit_test(comm_kernel_names_are_recognised_in_any_case),
      cmocka_unit_test(comm_figures_reach_json_text_and_html),
      cmocka_unit_test(exposed_comm_kernels_are_flagged_only_when_not_overlapped),
      cmocka_unit_test(healthy_trace_has_no_gpu_findings),
      cmocka_unit_test(low_utilization_fires_below_half_busy),
      cmocka_unit_test(many_tiny_late_launches_are_launch_bound),
      cmocka_unit_test(unhidden_copies_are_copy_heavy),
      cmocka_unit_test(gpu_waiting_on_data_loading_is_input_bound),
      cmocka_unit_test(long_synchronisations_are_sync_heavy),
      cmocka_unit_test(sync_saving_is_the_blocking_time),
      cmocka_unit_test(fp32_gemm_on_tensor_core_gpu_is_flagged_only_there),
      cmocka_unit_test(codec_round_trips_every_kind),
      cmocka_unit_test(corrupt_gpu_chunk_is_counted_not_fatal),
      cmocka_unit_test(trace_without_gpu_has_no_section),
      cmocka_unit_test(busy_is_per_device_not_one_union),
      cmocka_unit_test(sync_is_a_union_on_the_step_thread),
      cmocka_unit_test(runtime_time_is_the_step_threads),
      cmocka_unit_test(device_memory_peak_excludes_pinned_host_memory),
      cmocka_unit_test(runtime_of_other_threads_is_not_step_time),
      cmocka_unit_test(idle_before_unattributed_kernels_has_its_own_bucket),
      cmocka_unit_test(fp32_matmul_names_match_real_cublas_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
