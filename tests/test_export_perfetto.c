/* test_export_perfetto.c — the Perfetto export (`mlprof export --perfetto`),
 * read back by a decoder of its own that checks what trace_processor
 * relies on: one packet sequence whose first packet clears the incremental
 * state, interned names, frames and call stacks defined before (or in the
 * packet of) their first use, tracks declared before their events, and
 * slices that nest on every track once events are ordered by time and then
 * by file position. On a hand-made trace every slice, counter, sample and
 * flow is known; a real sampled run must show its named thread, its ranges
 * and samples in its hot function. When protoc is installed the real run's
 * output is also decoded against tests/perfetto/perfetto_trace_subset.proto
 * (Perfetto's field numbers), with no field left unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/export/export_perfetto.h"
#include "trace/ev_sample.h"
#include "trace/rec_gpu.h"
#include "trace/rec_stacks.h"
#include "analyze/sections/stacks/symbols.h"

/* ---- a protobuf reader ----------------------------------------------------- */

#include "pb_read.h"

static char *pb_str(const pb *s) { return strndup((const char *)s->p, (size_t)(s->end - s->p)); }

/* ---- the decoded trace -------------------------------------------------------- */

typedef struct kv {
  uint64_t iid;
  char *s;
} kv;

typedef struct table {
  kv *v;
  size_t n;
} table;

static void table_put(table *t, uint64_t iid, char *s) {
  assert_true(iid > 0);
  for (size_t i = 0; i < t->n; i++) assert_true(t->v[i].iid != iid); /* interned once per sequence */
  t->v = realloc(t->v, (t->n + 1) * sizeof *t->v);
  t->v[t->n++] = (kv){iid, s};
}

static const char *table_get(const table *t, uint64_t iid) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].iid == iid) return t->v[i].s;
  return NULL;
}

typedef struct track {
  uint64_t uuid, parent;
  char *name, *pname, *tname;
  int64_t pid, tid;
  int is_process, is_thread, counter, unit;
} track;

typedef struct tev {
  uint64_t ts, track, flow_out, flow_in;
  int type, has_value;
  double value;
  const char *name, *cat;
  char *own; /* a name written in full */
  size_t order;
} tev;

typedef struct frame {
  uint64_t iid, name, mapping, source, line;
} frame;

typedef struct cstack {
  uint64_t iid;
  uint64_t frames[64];
  int n;
} cstack;

typedef struct psample {
  uint64_t ts, pid, tid, cs;
} psample;

typedef struct slice {
  uint64_t track, b, e;
  const char *name, *cat;
  int depth;
} slice;

typedef struct model {
  table names, cats, funcs, paths, builds, sources;
  frame *frames;
  size_t nframes;
  cstack *stacks;
  size_t nstacks;
  uint64_t *maps;
  size_t nmaps;
  track *tracks;
  size_t ntracks;
  tev *evs;
  size_t nevs;
  psample *samples;
  size_t nsamples;
  slice *slices;
  size_t nslices;
  size_t packets;
} model;

static track *find_track(model *m, uint64_t uuid) {
  for (size_t i = 0; i < m->ntracks; i++)
    if (m->tracks[i].uuid == uuid) return &m->tracks[i];
  return NULL;
}

static const frame *find_frame(const model *m, uint64_t iid) {
  for (size_t i = 0; i < m->nframes; i++)
    if (m->frames[i].iid == iid) return &m->frames[i];
  return NULL;
}

static const cstack *find_stack(const model *m, uint64_t iid) {
  for (size_t i = 0; i < m->nstacks; i++)
    if (m->stacks[i].iid == iid) return &m->stacks[i];
  return NULL;
}

static int has_map(const model *m, uint64_t iid) {
  for (size_t i = 0; i < m->nmaps; i++)
    if (m->maps[i] == iid) return 1;
  return 0;
}

static void read_iid_str(pb *s, table *t) {
  int f, w;
  uint64_t v, iid = 0;
  pb sub;
  char *str = NULL;
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1 && w == 0) iid = v;
    else if (f == 2 && w == 2) str = pb_str(&sub);
    else fail_msg("unexpected field %d in an interned string", f);
  }
  assert_non_null(str);
  table_put(t, iid, str);
}

static void read_frame(model *m, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  frame fr = {0};
  while (pb_next(s, &f, &w, &v, &sub)) {
    assert_int_equal(w, 0);
    if (f == 1) fr.iid = v;
    else if (f == 2) fr.name = v;
    else if (f == 3) fr.mapping = v;
    else if (f == 5) fr.source = v;
    else if (f == 6) fr.line = v;
    else if (f != 4 && f != 7) fail_msg("unexpected Frame field %d", f);
  }
  assert_non_null(table_get(&m->funcs, fr.name)); /* names before the frame that uses them */
  assert_true(fr.mapping && has_map(m, fr.mapping));
  if (fr.source) assert_non_null(table_get(&m->sources, fr.source));
  assert_null(find_frame(m, fr.iid));
  m->frames = realloc(m->frames, (m->nframes + 1) * sizeof *m->frames);
  m->frames[m->nframes++] = fr;
}

static void read_callstack(model *m, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  cstack c = {0};
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) c.iid = v;
    else if (f == 2 && w == 0 && c.n < 64) { /* repeated uint64, not packed: proto2 */
      assert_non_null(find_frame(m, v));
      c.frames[c.n++] = v;
    } else fail_msg("unexpected Callstack field %d wire %d", f, w);
  }
  assert_true(c.iid > 0 && c.n > 0);
  assert_null(find_stack(m, c.iid));
  m->stacks = realloc(m->stacks, (m->nstacks + 1) * sizeof *m->stacks);
  m->stacks[m->nstacks++] = c;
}

static void read_mapping(model *m, pb *s) {
  int f, w;
  uint64_t v, iid = 0, start = 0, end = 0;
  pb sub;
  while (pb_next(s, &f, &w, &v, &sub)) {
    assert_int_equal(w, 0);
    if (f == 1) iid = v;
    else if (f == 2) assert_non_null(table_get(&m->builds, v));
    else if (f == 4) start = v;
    else if (f == 5) end = v;
    else if (f == 7) assert_non_null(table_get(&m->paths, v));
    else fail_msg("unexpected Mapping field %d", f);
  }
  assert_true(iid > 0 && start <= end && !has_map(m, iid));
  m->maps = realloc(m->maps, (m->nmaps + 1) * sizeof *m->maps);
  m->maps[m->nmaps++] = iid;
}

/* InternedData: strings first (frames and mappings refer to them), then
 * mappings, frames and call stacks, whatever their order in the message. */
static void read_interned(model *m, pb s) {
  int f, w;
  uint64_t v;
  pb sub;
  for (int pass = 0; pass < 4; pass++) {
    pb r = s;
    while (pb_next(&r, &f, &w, &v, &sub)) {
      assert_int_equal(w, 2);
      int want = f == 19 ? 1 : f == 6 ? 2 : f == 7 ? 3 : 0;
      if (want != pass) continue;
      switch (f) {
      case 1: read_iid_str(&sub, &m->cats); break;
      case 2: read_iid_str(&sub, &m->names); break;
      case 5: read_iid_str(&sub, &m->funcs); break;
      case 16: read_iid_str(&sub, &m->builds); break;
      case 17: read_iid_str(&sub, &m->paths); break;
      case 18: read_iid_str(&sub, &m->sources); break;
      case 19: read_mapping(m, &sub); break;
      case 6: read_frame(m, &sub); break;
      case 7: read_callstack(m, &sub); break;
      default: fail_msg("unexpected InternedData field %d", f);
      }
    }
    assert_false(r.bad);
  }
}

static void read_process(track *t, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  t->is_process = 1;
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) t->pid = (int64_t)v;
    else if (f == 6) t->pname = pb_str(&sub);
    else fail_msg("unexpected ProcessDescriptor field %d", f);
  }
}

static void read_thread(track *t, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  t->is_thread = 1;
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) t->pid = (int64_t)v;
    else if (f == 2) t->tid = (int64_t)v;
    else if (f == 5) t->tname = pb_str(&sub);
    else fail_msg("unexpected ThreadDescriptor field %d", f);
  }
}

static void read_track(model *m, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  track t = {0};
  while (pb_next(s, &f, &w, &v, &sub)) {
    switch (f) {
    case 1: t.uuid = v; break;
    case 2: t.name = pb_str(&sub); break;
    case 3: read_process(&t, &sub); break;
    case 4: read_thread(&t, &sub); break;
    case 5: t.parent = v; break;
    case 8: {
      int f2, w2;
      uint64_t v2;
      pb s2;
      t.counter = 1;
      while (pb_next(&sub, &f2, &w2, &v2, &s2)) t.unit = f2 == 3 ? (int)v2 : -1;
      break;
    }
    default: fail_msg("unexpected TrackDescriptor field %d", f);
    }
  }
  assert_true(t.uuid > 0);
  assert_null(find_track(m, t.uuid));
  if (t.parent) assert_non_null(find_track(m, t.parent));
  m->tracks = realloc(m->tracks, (m->ntracks + 1) * sizeof *m->tracks);
  m->tracks[m->ntracks++] = t;
}

/* A TrackEvent; returns whether it used interned data. */
static int read_event(model *m, pb *s, uint64_t ts) {
  int f, w, interned = 0;
  uint64_t v;
  pb sub;
  tev e = {.ts = ts, .order = m->nevs};
  while (pb_next(s, &f, &w, &v, &sub)) {
    switch (f) {
    case 3: e.cat = table_get(&m->cats, v), interned = 1, assert_non_null(e.cat); break;
    case 9: e.type = (int)v; break;
    case 10: e.name = table_get(&m->names, v), interned = 1, assert_non_null(e.name); break;
    case 11: e.track = v; break;
    case 23: e.name = e.own = pb_str(&sub); break;
    case 44: {
      assert_int_equal(w, 1);
      memcpy(&e.value, &v, 8);
      e.has_value = 1;
      break;
    }
    case 47: assert_int_equal(w, 1), e.flow_out = v; break;
    case 48: assert_int_equal(w, 1), e.flow_in = v; break;
    default: fail_msg("unexpected TrackEvent field %d", f);
    }
  }
  assert_true(e.type >= 1 && e.type <= 4);
  assert_non_null(find_track(m, e.track)); /* declared before its first event */
  assert_int_equal(e.type == 4, e.has_value);
  assert_int_equal(e.type == 4, find_track(m, e.track)->counter);
  if (e.type != 2) assert_non_null(e.name ? e.name : (e.type == 4 ? "" : NULL));
  m->evs = realloc(m->evs, (m->nevs + 1) * sizeof *m->evs);
  m->evs[m->nevs++] = e;
  return interned;
}

static void read_sample(model *m, pb *s, uint64_t ts) {
  int f, w;
  uint64_t v;
  pb sub;
  psample x = {.ts = ts};
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 2) x.pid = v;
    else if (f == 3) x.tid = v;
    else if (f == 4) x.cs = v;
    else if (f != 5) fail_msg("unexpected PerfSample field %d", f);
  }
  assert_non_null(find_stack(m, x.cs));
  m->samples = realloc(m->samples, (m->nsamples + 1) * sizeof *m->samples);
  m->samples[m->nsamples++] = x;
}

static void read_packet(model *m, pb p) {
  int f, w;
  uint64_t v, ts = 0, seq = 0, flags = 0;
  pb sub, interned = {0}, event = {0}, desc = {0}, sample = {0};
  int has_interned = 0, has_event = 0, has_desc = 0, has_sample = 0, has_ts = 0;
  while (pb_next(&p, &f, &w, &v, &sub)) {
    switch (f) {
    case 8: ts = v, has_ts = 1; break;
    case 10: seq = v; break;
    case 11: event = sub, has_event = 1; break;
    case 12: interned = sub, has_interned = 1; break;
    case 13: flags = v; break;
    case 60: desc = sub, has_desc = 1; break;
    case 66: sample = sub, has_sample = 1; break;
    default: fail_msg("unexpected TracePacket field %d", f);
    }
  }
  assert_false(p.bad);
  assert_int_equal(seq, 1);
  assert_int_equal(has_event + has_desc + has_sample + (m->packets == 0), 1); /* one payload each */
  if (m->packets == 0) assert_int_equal(flags, 1); /* incremental state cleared */
  else assert_true(flags == 0 || flags == 2);
  if (has_interned) read_interned(m, interned);
  int uses = has_interned || has_sample;
  if (has_desc) read_track(m, &desc);
  if (has_event) uses |= read_event(m, &event, ts);
  if (has_sample) read_sample(m, &sample, ts);
  assert_int_equal(has_ts, has_event || has_sample); /* events have a time, descriptors none */
  if (m->packets > 0) assert_int_equal(flags, uses ? 2 : 0);
  m->packets++;
}

static int by_time(const void *a, const void *b) {
  const tev *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

/* Replay the slice events as trace_processor orders them: every end must
 * close an open slice of its track, and nothing may stay open. */
static void replay(model *m) {
  tev *v = malloc((m->nevs + 1) * sizeof *v);
  memcpy(v, m->evs, m->nevs * sizeof *v);
  qsort(v, m->nevs, sizeof *v, by_time);
  size_t cap = m->ntracks * 64 + 64, *depth = calloc(m->ntracks, sizeof *depth);
  const tev **open = calloc(cap, sizeof *open);
  for (size_t i = 0; i < m->nevs; i++) {
    const tev *e = &v[i];
    size_t t = (size_t)(find_track(m, e->track) - m->tracks);
    if (e->type == 1) {
      assert_true(depth[t] < 64);
      open[t * 64 + depth[t]++] = e;
    } else if (e->type == 2) {
      assert_true(depth[t] > 0); /* an end with no slice open: misnested */
      const tev *b = open[t * 64 + --depth[t]];
      m->slices = realloc(m->slices, (m->nslices + 1) * sizeof *m->slices);
      m->slices[m->nslices++] = (slice){e->track, b->ts, e->ts, b->name, b->cat, (int)depth[t]};
    }
  }
  for (size_t t = 0; t < m->ntracks; t++) assert_int_equal(depth[t], 0);
  free(open);
  free(depth);
  free(v);
}

static void decode(model *m, const uint8_t *p, size_t len) {
  memset(m, 0, sizeof *m);
  pb b = {p, p + len, 0}, sub;
  int f, w;
  uint64_t v;
  while (pb_next(&b, &f, &w, &v, &sub)) {
    assert_int_equal(f, 1);
    assert_int_equal(w, 2);
    read_packet(m, sub);
  }
  assert_false(b.bad);
  assert_true(b.p == b.end);
  replay(m);
}

static void model_free(model *m) {
  table *ts[] = {&m->names, &m->cats, &m->funcs, &m->paths, &m->builds, &m->sources};
  for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) {
    for (size_t i = 0; i < ts[k]->n; i++) free(ts[k]->v[i].s);
    free(ts[k]->v);
  }
  for (size_t i = 0; i < m->ntracks; i++) free(m->tracks[i].name), free(m->tracks[i].pname), free(m->tracks[i].tname);
  for (size_t i = 0; i < m->nevs; i++) free(m->evs[i].own);
  free(m->frames);
  free(m->stacks);
  free(m->maps);
  free(m->tracks);
  free(m->evs);
  free(m->samples);
  free(m->slices);
}

/* Export the trace at `path` and decode it into m; returns the bytes. */
static size_t export_decode(const char *path, model *m, prof__pf_stats *st) {
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, path, 1, err)) fail_msg("analyze: %s", err);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_perfetto(an, f, st), 0);
  fclose(f);
  prof__an_free(an);
  decode(m, (const uint8_t *)buf, len);
  assert_int_equal(st->packets, m->packets);
  assert_int_equal(st->bytes, len);
  free(buf);
  return len;
}

/* ---- queries ---------------------------------------------------------------- */

static const track *thread_track(const model *m, int64_t tid) {
  for (size_t i = 0; i < m->ntracks; i++)
    if (m->tracks[i].is_thread && m->tracks[i].tid == tid) return &m->tracks[i];
  return NULL;
}

static const track *named_track(const model *m, const char *name, uint64_t parent) {
  for (size_t i = 0; i < m->ntracks; i++)
    if (m->tracks[i].name && strcmp(m->tracks[i].name, name) == 0 && (!parent || m->tracks[i].parent == parent))
      return &m->tracks[i];
  return NULL;
}

/* The n-th slice named `name` on `track` in time order (NULL: none). */
static const slice *find_slice(const model *m, uint64_t track, const char *name, int n) {
  const slice *best[16];
  int k = 0;
  for (size_t i = 0; i < m->nslices && k < 16; i++)
    if (m->slices[i].track == track && m->slices[i].name && strcmp(m->slices[i].name, name) == 0) best[k++] = &m->slices[i];
  for (int i = 0; i < k; i++) /* sort the few found by begin */
    for (int j = i + 1; j < k; j++)
      if (best[j]->b < best[i]->b) {
        const slice *t = best[i];
        best[i] = best[j];
        best[j] = t;
      }
  return n < k ? best[n] : NULL;
}

static int count_slices(const model *m, uint64_t track, const char *name) {
  int n = 0;
  for (size_t i = 0; i < m->nslices; i++)
    if (m->slices[i].track == track && (!name || (m->slices[i].name && strcmp(m->slices[i].name, name) == 0))) n++;
  return n;
}

/* Values of the counter track `track`, in file order, into v (max n). */
static int counter_values(const model *m, uint64_t track, double *v, int n) {
  int k = 0;
  for (size_t i = 0; i < m->nevs; i++)
    if (m->evs[i].track == track && m->evs[i].type == 4 && k < n) v[k++] = m->evs[i].value;
  return k;
}

/* The function names of a sample's stack, outermost first, joined by ';'. */
static void stack_text(const model *m, uint64_t cs, char *buf, size_t n) {
  const cstack *c = find_stack(m, cs);
  buf[0] = 0;
  for (int i = 0; c && i < c->n; i++) {
    const frame *fr = find_frame(m, c->frames[i]);
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%s%s", i ? ";" : "", table_get(&m->funcs, fr->name));
  }
}

/* ---- the hand-made trace ------------------------------------------------------ */

#define PY(i) (PROF_PYFRAME_TAG | ((uint64_t)(i) << 47) | 0x1000u)

enum { S_FWD = 1, S_MATMUL, S_BWD, S_TICK, S_TAIL, S_GHOST, S_LOAD, S_EPOCH, S_LOSS, S_CYC, S_GEMM, S_RELU,
       S_LAUNCH, S_MEMCPY_API, S_GPU_NAME };

static void gpu_rec(prof__buf *b, prof__gpu_rec *prev, prof__gpu_rec r) { prof__rec_gpu_encode(b, &r, prev); }

static void put_pyframes(tb *t) {
  static const char *const names[] = {"main", "forward", "matmul", "backward", "load_batch"};
  prof__rec_list l = {0};
  for (int i = 0; i < 5; i++) {
    prof__rec_pyframe f = {PY(i + 1), "/work/train.py", 14, names[i], strlen(names[i]), 10 + i};
    prof__rec_pyframes_put(&l, &f);
  }
  assert_int_equal(prof__rec_list_write(&l, t->w, PROF_CHUNK_PYFRAMES), 0);
  prof__rec_list_free(&l);
  prof__rec_list s = {0};
  uintptr_t s1[] = {PY(3), PY(2), PY(1)}, s2[] = {PY(4), PY(1)}, s3[] = {PY(5)};
  prof__rec_stacks_put(&s, 1, s1, 3);
  prof__rec_stacks_put(&s, 2, s2, 2);
  prof__rec_stacks_put(&s, 3, s3, 1);
  assert_int_equal(prof__rec_list_write(&s, t->w, PROF_CHUNK_STACKS), 0);
  prof__rec_list_free(&s);
}

static void sample_ev(tb *t, uint32_t tid, uint64_t ts, uint32_t stack, uint32_t range, int wall) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts, e.type = PROF_EV_SAMPLE, e.name = stack, e.a = range, e.b = 1, e.aux = (uint16_t)wall;
  assert_int_equal(prof__tw_events(t->w, tid, &e, 1), 0);
}

static void put_gpu(tb *t) {
  prof__buf b = {0};
  prof__gpu_rec prev = {0};
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_DEVICE, .name = S_GPU_NAME, .cc_major = 9, .sm_count = 100});
  /* relu first: it begins exactly where gemm, written after it, ends */
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_KERNEL, .name = S_RELU, .start = 2500, .end = 2700, .launch = 1400,
                                     .tid = 7, .stream = 7, .corr = 12});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_KERNEL, .name = S_GEMM, .start = 2000, .end = 2500, .launch = 1300,
                                     .tid = 7, .stream = 7, .corr = 11});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_MEMCPY, .sub = PROF_GPU_COPY_H2D, .src_mem = PROF_GPU_MEM_PAGEABLE,
                                     .dst_mem = PROF_GPU_MEM_DEVICE, .bytes = 4096, .start = 1500, .end = 1800,
                                     .launch = 1250, .tid = 7, .stream = 8, .corr = 13});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = S_LAUNCH, .tid = 7,
                                     .start = 1300, .end = 1310, .corr = 11});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = S_LAUNCH, .tid = 7,
                                     .start = 1400, .end = 1410, .corr = 12});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = S_MEMCPY_API, .tid = 7,
                                     .start = 1250, .end = 1260, .corr = 13});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_SYNC, .tid = 7, .start = 4000, .end = 4100});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_MEMORY, .sub = PROF_GPU_MEMOP_ALLOC, .bytes = 1 << 20, .start = 1000,
                                     .end = 1000});
  gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_MEMORY, .sub = PROF_GPU_MEMOP_FREE, .bytes = 1 << 20, .start = 8000,
                                     .end = 8000});
  assert_int_equal(prof__tw_chunk(t->w, PROF_CHUNK_GPU, b.p, b.len), 0);
  prof__buf_free(&b);
}

/* Thread 7 "main": steps 0 [1000, 5000) and 1 [5000, 9000); forward
 * [1100, 3000) holding matmul [1200, 2000); backward from 3000 (where
 * forward ends) to 4800; a zero-length "tick" at 4900; forward [5100,
 * 7000); "tail" from 8000, never closed; an END of "ghost" that never
 * began; mark "epoch" at 8600; counters loss 0.5 and 0.25 (and a NaN),
 * cpuctr/cycles 100 and 200. Thread 9 "loader": load [500, 6000),
 * cpuctr/cycles 50. Samples (CPU clock): matmul stack twice and backward
 * stack once on 7, load_batch on 9, plus one without a stack and one on
 * the wall clock. GPU as put_gpu(). */
static const char *hand_trace(void) {
  prof__kv hz[] = {{"cpu.sample_hz", "1000"}, {"gpu.capture", "cupti"}};
  tb t = tb_open_with("perfetto", hz, 2);
  const char *s[] = {NULL, "forward", "matmul", "backward", "tick", "tail", "ghost", "load", "epoch", "loss",
                     "cpuctr/cycles", "gemm_kernel", "relu_kernel", "cudaLaunchKernel", "cudaMemcpyAsync", "Test GPU"};
  for (uint32_t i = 1; i < sizeof s / sizeof *s; i++) tb_str(&t, i, s[i]);
  tb_thread_named(&t, 7, "main", 0);
  tb_thread_named(&t, 9, "loader", 0);
  put_pyframes(&t);
  tb_b(&t, 9, 500, S_LOAD, PROF_CAT_DATA);
  tb_sb(&t, 7, 1000, 0);
  tb_b(&t, 7, 1100, S_FWD, PROF_CAT_COMPUTE);
  tb_b(&t, 7, 1200, S_MATMUL, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 2000, S_MATMUL);
  tb_e(&t, 7, 3000, S_FWD);
  tb_b(&t, 7, 3000, S_BWD, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 4800, S_BWD);
  tb_b(&t, 7, 4900, S_TICK, PROF_CAT_OTHER);
  tb_e(&t, 7, 4900, S_TICK);
  tb_counter(&t, 7, 4950, S_LOSS, 0.5);
  tb_se(&t, 7, 5000, 0);
  tb_sb(&t, 7, 5000, 1);
  tb_b(&t, 7, 5100, S_FWD, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 7000, S_FWD);
  tb_b(&t, 7, 8000, S_TAIL, PROF_CAT_IO);
  tb_e(&t, 7, 8500, S_GHOST);
  tb_mark(&t, 7, 8600, S_EPOCH);
  tb_counter(&t, 7, 8950, S_LOSS, 0.25);
  tb_counter(&t, 7, 8960, S_LOSS, NAN);
  tb_se(&t, 7, 9000, 1);
  tb_e(&t, 9, 6000, S_LOAD);
  tb_counter(&t, 7, 8970, S_CYC, 100);
  tb_counter(&t, 7, 8980, S_CYC, 200);
  tb_counter(&t, 9, 5990, S_CYC, 50);
  sample_ev(&t, 7, 1500, 1, S_MATMUL, 0);
  sample_ev(&t, 7, 1600, 1, S_MATMUL, 0);
  sample_ev(&t, 7, 3500, 2, S_BWD, 0);
  sample_ev(&t, 9, 2000, 3, S_LOAD, 0);
  sample_ev(&t, 9, 2100, 0, S_LOAD, 0);
  sample_ev(&t, 9, 2200, 3, S_LOAD, 1);
  put_gpu(&t);
  return tb_close(&t, "0");
}

static void ranges_steps_and_threads(void **state) {
  (void)state;
  static model m;
  prof__pf_stats st;
  export_decode(hand_trace(), &m, &st);
  /* process and named threads */
  const track *proc = NULL;
  for (size_t i = 0; i < m.ntracks; i++)
    if (m.tracks[i].is_process && m.tracks[i].pid == 4242) proc = &m.tracks[i];
  assert_non_null(proc);
  assert_string_equal(proc->pname, "unit-train");
  const track *main_t = thread_track(&m, 7), *loader = thread_track(&m, 9);
  assert_non_null(main_t);
  assert_non_null(loader);
  assert_string_equal(main_t->tname, "main");
  assert_string_equal(loader->tname, "loader");
  assert_int_equal(main_t->pid, 4242);
  /* ranges nest as recorded */
  uint64_t mt = main_t->uuid;
  const slice *f0 = find_slice(&m, mt, "forward", 0), *mm = find_slice(&m, mt, "matmul", 0);
  const slice *bw = find_slice(&m, mt, "backward", 0), *f1 = find_slice(&m, mt, "forward", 1);
  assert_non_null(f0);
  assert_non_null(mm);
  assert_non_null(bw);
  assert_non_null(f1);
  assert_int_equal(f0->b, 1100);
  assert_int_equal(f0->e, 3000);
  assert_int_equal(mm->b, 1200);
  assert_int_equal(mm->e, 2000);
  assert_int_equal(mm->depth, 1);
  assert_int_equal(f0->depth, 0);
  assert_string_equal(f0->cat, "compute");
  assert_true(bw->b >= f0->e && bw->b <= 3001); /* after forward ended, not inside it */
  assert_int_equal(bw->e, 4800);
  assert_int_equal(bw->depth, 0);
  assert_int_equal(f1->b, 5100);
  const slice *tick = find_slice(&m, mt, "tick", 0), *tail = find_slice(&m, mt, "tail", 0);
  assert_non_null(tick);
  assert_int_equal(tick->e, tick->b);
  assert_non_null(tail);
  assert_string_equal(tail->cat, "io");
  assert_int_equal(tail->b, 8000);
  assert_true(tail->e >= 8600); /* closed at the thread's last event */
  assert_int_equal(count_slices(&m, mt, "ghost"), 0);
  assert_int_equal(count_slices(&m, mt, NULL), 6);
  const slice *load = find_slice(&m, loader->uuid, "load", 0);
  assert_non_null(load);
  assert_string_equal(load->cat, "data");
  assert_int_equal(load->b, 500);
  assert_int_equal(load->e, 6000);
  /* steps: their own track under the process, back to back */
  const track *steps = named_track(&m, "steps", proc->uuid);
  assert_non_null(steps);
  const slice *s0 = find_slice(&m, steps->uuid, "step 0", 0), *s1 = find_slice(&m, steps->uuid, "step 1", 0);
  assert_non_null(s0);
  assert_non_null(s1);
  assert_int_equal(s0->b, 1000);
  assert_int_equal(s0->e, 5000);
  assert_true(s1->b >= 5000 && s1->b <= 5001);
  assert_int_equal(s1->e, 9000);
  assert_int_equal(count_slices(&m, steps->uuid, NULL), 2);
  /* the mark */
  int marks = 0;
  for (size_t i = 0; i < m.nevs; i++)
    if (m.evs[i].type == 3 && m.evs[i].track == mt && strcmp(m.evs[i].name, "epoch") == 0 && m.evs[i].ts == 8600) marks++;
  assert_int_equal(marks, 1);
  model_free(&m);
}

static void counters_samples_and_gpu(void **state) {
  (void)state;
  static model m;
  prof__pf_stats st;
  export_decode(hand_trace(), &m, &st);
  const track *main_t = thread_track(&m, 7), *loader = thread_track(&m, 9);
  /* counters: loss under the process (NaN left out); cpuctr/ per thread */
  double v[8];
  const track *loss = named_track(&m, "loss", 0);
  assert_non_null(loss);
  assert_true(loss->counter);
  assert_int_equal(counter_values(&m, loss->uuid, v, 8), 2);
  assert_true(v[0] == 0.5 && v[1] == 0.25);
  const track *c7 = named_track(&m, "cpuctr/cycles", main_t->uuid), *c9 = named_track(&m, "cpuctr/cycles", loader->uuid);
  assert_non_null(c7);
  assert_non_null(c9);
  assert_int_equal(counter_values(&m, c7->uuid, v, 8), 2);
  assert_true(v[0] == 100 && v[1] == 200);
  assert_int_equal(counter_values(&m, c9->uuid, v, 8), 1);
  /* samples: the CPU clock's, with a stack, resolved to their frames */
  assert_int_equal(m.nsamples, 4);
  assert_int_equal(st.samples, 4);
  int matmul = 0, bwd = 0, load = 0;
  for (size_t i = 0; i < m.nsamples; i++) {
    char text[256];
    assert_int_equal(m.samples[i].pid, 4242);
    stack_text(&m, m.samples[i].cs, text, sizeof text);
    if (m.samples[i].tid == 7 && strcmp(text, "main;forward;matmul") == 0) matmul++;
    if (m.samples[i].tid == 7 && strcmp(text, "main;backward") == 0) bwd++;
    if (m.samples[i].tid == 9 && strcmp(text, "load_batch") == 0) load++;
  }
  assert_int_equal(matmul, 2);
  assert_int_equal(bwd, 1);
  assert_int_equal(load, 1);
  assert_int_equal(m.nstacks, 3); /* each interned once */
  const frame *leaf = find_frame(&m, find_stack(&m, m.samples[0].cs)->frames[2]);
  assert_string_equal(table_get(&m.sources, leaf->source), "/work/train.py");
  assert_int_equal(leaf->line, 12);
  /* GPU: a process per device, a track per stream */
  const track *gpu = NULL;
  for (size_t i = 0; i < m.ntracks; i++)
    if (m.tracks[i].is_process && m.tracks[i].pid == 1000000000) gpu = &m.tracks[i];
  assert_non_null(gpu);
  assert_string_equal(gpu->pname, "GPU 0: Test GPU");
  const track *s7 = named_track(&m, "stream 7", gpu->uuid), *s8 = named_track(&m, "stream 8", gpu->uuid);
  assert_non_null(s7);
  assert_non_null(s8);
  const slice *gemm = find_slice(&m, s7->uuid, "gemm_kernel", 0), *relu = find_slice(&m, s7->uuid, "relu_kernel", 0);
  assert_non_null(gemm);
  assert_non_null(relu);
  assert_int_equal(gemm->b, 2000);
  assert_true(gemm->e <= relu->b); /* one never closes the other */
  assert_true(relu->e == 2700 && gemm->e >= 2499);
  assert_string_equal(gemm->cat, "kernel");
  const slice *cp = find_slice(&m, s8->uuid, "Memcpy h2d (pageable -> device)", 0); /* as the Chrome export names it */
  assert_non_null(cp);
  assert_int_equal(cp->b, 1500);
  assert_string_equal(cp->cat, "gpu_memcpy");
  /* API calls and waits on tracks of their own under the thread */
  const track *rt = named_track(&m, "CUDA runtime", main_t->uuid), *waits = named_track(&m, "GPU waits", main_t->uuid);
  assert_non_null(rt);
  assert_non_null(waits);
  assert_int_equal(count_slices(&m, rt->uuid, "cudaLaunchKernel"), 2);
  assert_int_equal(count_slices(&m, waits->uuid, "synchronize"), 1);
  /* flows: every GPU operation ends one that a runtime call began */
  int ends = 0;
  for (size_t i = 0; i < m.nevs; i++) {
    if (!m.evs[i].flow_in) continue;
    ends++;
    int begun = 0;
    for (size_t k = 0; k < m.nevs; k++)
      if (m.evs[k].flow_out == m.evs[i].flow_in && m.evs[k].track == rt->uuid && m.evs[k].type == 1 &&
          m.evs[k].ts < m.evs[i].ts)
        begun++;
    assert_int_equal(begun, 1);
  }
  assert_int_equal(ends, 3);
  assert_int_equal(st.flows, 3);
  /* device memory in use */
  const track *mem = named_track(&m, "GPU memory allocated", gpu->uuid);
  assert_non_null(mem);
  assert_int_equal(mem->unit, 3);
  assert_int_equal(counter_values(&m, mem->uuid, v, 8), 2);
  assert_true(v[0] == 1048576 && v[1] == 0);
  model_free(&m);
}

/* Without API call records, flows begin at "launch" instants. */
static void flows_from_launch_instants(void **state) {
  (void)state;
  tb t = tb_open("perfetto-launch");
  tb_str(&t, 1, "k");
  tb_thread_named(&t, 7, "main", 0);
  tb_b(&t, 7, 100, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 900, 1);
  prof__buf b = {0};
  prof__gpu_rec prev = {0};
  for (uint32_t i = 0; i < 3; i++)
    gpu_rec(&b, &prev, (prof__gpu_rec){.kind = PROF_GPU_KERNEL, .name = 1, .start = 1000 + 100 * i, .end = 1050 + 100 * i,
                                       .launch = 200 + 10 * i, .tid = 7, .stream = 1, .corr = 40 + i});
  assert_int_equal(prof__tw_chunk(t.w, PROF_CHUNK_GPU, b.p, b.len), 0);
  prof__buf_free(&b);
  static model m;
  prof__pf_stats st;
  export_decode(tb_close(&t, "0"), &m, &st);
  const track *rt = named_track(&m, "CUDA runtime", thread_track(&m, 7)->uuid);
  assert_non_null(rt);
  int n = 0;
  for (size_t i = 0; i < m.nevs; i++)
    if (m.evs[i].track == rt->uuid && m.evs[i].type == 3 && m.evs[i].flow_out == 40 + (uint64_t)n &&
        m.evs[i].ts == 200 + 10 * (uint64_t)n)
      n++;
  assert_int_equal(n, 3);
  assert_int_equal(st.flows, 3);
  model_free(&m);
}

/* ---- a real sampled run ------------------------------------------------------- */

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
__thread volatile double pf_sink; /* per thread: the worker and the main thread both spin */
__attribute__((noinline)) void pf_hot_leaf(double secs) {
  double x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < secs)
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
  pf_sink = x;
}

static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "pf-worker");
  prof_range_push_cat("load", PROF_CAT_DATA);
  pf_hot_leaf(0.05);
  prof_range_pop();
  return NULL;
}

static const char *real_trace;

static const char *record_real(void) {
  if (real_trace) return real_trace;
  const char *path = th_tmp_path("perfetto-real", ".mlpt");
  pid_t pid = fork();
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    prof_config c = prof_config_default();
    c.output = path;
    c.report = 0;
    if (prof_init(&c) != 0) _exit(3);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) _exit(5);
    for (int s = 0; s < 3; s++) {
      prof_start();
      prof_range_push("forward");
      pf_hot_leaf(0.1);
      prof_range_pop();
      prof_stop();
    }
    pthread_join(th, NULL);
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  real_trace = strdup(path);
  return real_trace;
}

static void real_run_has_threads_ranges_and_samples(void **state) {
  (void)state;
  static model m;
  prof__pf_stats st;
  export_decode(record_real(), &m, &st);
  const track *w = NULL, *mainth = NULL;
  for (size_t i = 0; i < m.ntracks; i++) {
    if (m.tracks[i].is_thread && m.tracks[i].tname && strcmp(m.tracks[i].tname, "pf-worker") == 0) w = &m.tracks[i];
    if (m.tracks[i].is_thread && m.tracks[i].tid == m.tracks[i].pid) mainth = &m.tracks[i];
  }
  assert_non_null(w);
  assert_non_null(mainth);
  assert_int_equal(count_slices(&m, w->uuid, "load"), 1);
  assert_int_equal(count_slices(&m, mainth->uuid, "forward"), 3);
  assert_int_equal(count_slices(&m, named_track(&m, "steps", 0)->uuid, NULL), 3);
  assert_true(m.nsamples >= 10); /* a loaded machine gives a CPU-time sampler fewer */
  size_t hot = 0;
  for (size_t i = 0; i < m.nsamples; i++) {
    char text[4096];
    stack_text(&m, m.samples[i].cs, text, sizeof text);
    const char *leaf = strrchr(text, ';');
    if (strcmp(leaf ? leaf + 1 : text, "pf_hot_leaf") == 0) hot++;
  }
  assert_true(hot * 10 >= m.nsamples * 7);
  /* the hot function's frame lies in this program's mapping, whose path is interned in parts */
  int named = 0;
  for (size_t i = 0; i < m.paths.n; i++) named |= strcmp(m.paths.v[i].s, "test_export_perfetto") == 0;
  assert_true(named);
  model_free(&m);
}

/* protoc decodes the output against the schema of the fields used; the
 * decoded text names every field (a bare number is a field the schema lacks). */
static void protoc_decodes_against_the_schema(void **state) {
  (void)state;
  if (th_run("command -v protoc >/dev/null 2>&1", NULL) != 0) {
    printf("protoc not installed (Debian: protobuf-compiler): schema check skipped\n");
    skip();
  }
  const char *trace = record_real(), *out = th_tmp_path("perfetto-real", ".pftrace");
  const char *txt = th_tmp_path("perfetto-real", ".txt");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s/mlprof export --perfetto -q -o '%s' '%s'", MLPROF_BIN_DIR, out, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "protoc -I '%s/tests/perfetto' --decode=perfetto.protos.Trace perfetto_trace_subset.proto <'%s' >'%s'",
           MLPROF_SRC_DIR, out, txt);
  assert_int_equal(th_run(cmd, NULL), 0);
  char *text = th_read_file(txt, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "thread_name: \"pf-worker\""));
  assert_non_null(strstr(text, "name: \"forward\""));
  assert_non_null(strstr(text, "type: TYPE_SLICE_BEGIN"));
  assert_non_null(strstr(text, "perf_sample {"));
  assert_non_null(strstr(text, "callstack_iid:"));
  assert_non_null(strstr(text, "str: \"pf_hot_leaf\""));
  assert_non_null(strstr(text, "sequence_flags: 1"));
  int lineno = 1;
  for (char *l = text; *l; lineno++) {
    char *nl = strchr(l, '\n');
    const char *p = l;
    while (*p == ' ') p++;
    if (*p >= '0' && *p <= '9') fail_msg("line %d: a field the schema does not know: %.60s", lineno, p);
    if (!nl) break;
    l = nl + 1;
  }
  free(text);
}

/* The CLI: default output name beside the trace, and a clear error for a non-trace. */
static void cli_writes_beside_the_trace(void **state) {
  (void)state;
  const char *trace = hand_trace();
  char cmd[2048], out[1024];
  snprintf(out, sizeof out, "%s.pftrace", trace);
  unlink(out);
  snprintf(cmd, sizeof cmd, "%s/mlprof export --perfetto '%s' 2>/dev/null", MLPROF_BIN_DIR, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  size_t len = 0;
  char *bytes = th_read_file(out, &len);
  assert_non_null(bytes);
  static model m;
  decode(&m, (const uint8_t *)bytes, len);
  assert_true(m.nsamples == 4);
  model_free(&m);
  free(bytes);
  snprintf(cmd, sizeof cmd, "%s/mlprof export --perfetto --chrome '%s' 2>/dev/null", MLPROF_BIN_DIR, trace);
  assert_int_equal(th_run(cmd, NULL), 1);
  snprintf(cmd, sizeof cmd, "%s/mlprof export --perfetto /dev/null 2>/dev/null", MLPROF_BIN_DIR);
  assert_int_equal(th_run(cmd, NULL), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ranges_steps_and_threads),
      cmocka_unit_test(counters_samples_and_gpu),
      cmocka_unit_test(flows_from_launch_instants),
      cmocka_unit_test(real_run_has_threads_ranges_and_samples),
      cmocka_unit_test(protoc_decodes_against_the_schema),
      cmocka_unit_test(cli_writes_beside_the_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
