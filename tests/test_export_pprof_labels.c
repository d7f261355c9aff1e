/* test_export_pprof_labels.c — the pprof CPU profile's labels and the pprof
 * heap profile, on hand-made traces whose every value is known: CPU
 * samples merged by stack, innermost range (string label "range") and step
 * (numeric label "step"); allocation sites with alloc_objects, alloc_space,
 * inuse_objects and inuse_space and their pool. Both are decoded by a
 * protobuf reader of this file; when Go is installed, `go tool pprof`
 * reads the gzip'd files the CLI writes and filters by label. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/export/export_pprof_heap.h"
#include "analyze/sections/functions/sec_functions.h"
#include "analyze/sections/stacks/symbols.h"
#include "trace/ev_mem.h"
#include "trace/rec_stacks.h"

/* ---- a profile.proto reader ------------------------------------------------ */

#include "pb_read.h"

#define MAXN 256
typedef struct psample {
  uint64_t locs[16], vals[4];
  int nlocs, nvals;
  uint64_t range, pool;      /* string index of the label value, 0: none */
  int64_t step;              /* -1: no step label */
  int nlabels;
} psample;

typedef struct prof {
  char *strings[MAXN];
  int nstrings;
  uint64_t types[4], units[4];
  int ntypes;
  psample samples[MAXN];
  int nsamples;
  uint64_t loc_func[MAXN];  /* location id -> function id of its last line (the function it is in) */
  uint64_t func_name[MAXN]; /* function id -> string index */
  uint64_t period, default_type;
} prof;

static void read_label(prof *m, psample *s, pb *l) {
  int f, w;
  uint64_t v, key = 0, str = 0, num = 0;
  int has_num = 0;
  pb sub;
  while (pb_next(l, &f, &w, &v, &sub)) {
    if (f == 1) key = v;
    else if (f == 2) str = v;
    else if (f == 3) num = v, has_num = 1;
    else fail_msg("unexpected Label field %d", f);
  }
  assert_true(key > 0 && key < (uint64_t)m->nstrings);
  const char *k = m->strings[key];
  if (strcmp(k, "range") == 0) assert_true(str > 0 && !has_num), s->range = str;
  else if (strcmp(k, "pool") == 0) assert_true(str > 0 && !has_num), s->pool = str;
  else if (strcmp(k, "step") == 0) assert_true(has_num && !str), s->step = (int64_t)num;
  else fail_msg("unexpected label key %s", k);
  s->nlabels++;
}

/* Samples and labels refer to strings, which come last: read in two passes. */
static void decode(prof *m, const uint8_t *p, size_t len) {
  memset(m, 0, sizeof *m);
  for (int pass = 0; pass < 2; pass++) {
    pb b = {p, p + len, 0}, sub;
    int f, w;
    uint64_t v;
    while (pb_next(&b, &f, &w, &v, &sub)) {
      if (pass == 0) {
        if (f == 6) {
          assert_true(m->nstrings < MAXN);
          m->strings[m->nstrings++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
        }
        continue;
      }
      int f2, w2;
      uint64_t v2, id = 0, x = 0;
      pb s2;
      switch (f) {
      case 1:
        assert_true(m->ntypes < 4);
        while (pb_next(&sub, &f2, &w2, &v2, &s2)) f2 == 1 ? (m->types[m->ntypes] = v2) : (m->units[m->ntypes] = v2);
        m->ntypes++;
        break;
      case 2: {
        assert_true(m->nsamples < MAXN);
        psample *s = &m->samples[m->nsamples++];
        s->step = -1;
        while (pb_next(&sub, &f2, &w2, &v2, &s2)) {
          if (f2 == 1)
            while (s2.p < s2.end && s->nlocs < 16) s->locs[s->nlocs++] = pb_varint(&s2);
          else if (f2 == 2)
            while (s2.p < s2.end && s->nvals < 4) s->vals[s->nvals++] = pb_varint(&s2);
          else if (f2 == 3)
            read_label(m, s, &s2);
          else
            fail_msg("unexpected Sample field %d", f2);
        }
        assert_int_equal(s->nvals, m->ntypes);
        break;
      }
      case 4: /* Location: id, lines (function of the last line) */
        while (pb_next(&sub, &f2, &w2, &v2, &s2)) {
          if (f2 == 1) id = v2;
          if (f2 == 4) {
            int f3, w3;
            uint64_t v3;
            pb s3;
            while (pb_next(&s2, &f3, &w3, &v3, &s3))
              if (f3 == 1) x = v3;
          }
        }
        assert_true(id > 0 && id < MAXN);
        m->loc_func[id] = x;
        break;
      case 5:
        while (pb_next(&sub, &f2, &w2, &v2, &s2)) {
          if (f2 == 1) id = v2;
          if (f2 == 2) x = v2;
        }
        assert_true(id > 0 && id < MAXN);
        m->func_name[id] = x;
        break;
      case 12: m->period = v; break;
      case 14: m->default_type = v; break;
      default: break;
      }
    }
    assert_false(b.bad);
  }
}

static void prof_free(prof *m) {
  for (int i = 0; i < m->nstrings; i++) free(m->strings[i]);
}

/* The innermost function of a sample. */
static const char *leaf(const prof *m, const psample *s) {
  return s->nlocs ? m->strings[m->func_name[m->loc_func[s->locs[0]]]] : "";
}

static const char *str(const prof *m, uint64_t i) { return i ? m->strings[i] : ""; }

static void export_to(prof__an *an, int heap, prof *m) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(heap ? prof__export_pprof_heap(an, f) : prof__export_pprof(an, f), 0);
  fclose(f);
  decode(m, (const uint8_t *)buf, len);
  free(buf);
}

/* ---- traces ------------------------------------------------------------------ */

#define PY(i) (PROF_PYFRAME_TAG | ((uint64_t)(i) << 47) | 0x2000u)

/* Python frames 1 "main", 2 "forward_fn", 3 "backward_fn", 4 "alloc_weights",
 * 5 "alloc_batch"; stacks 1 main>forward_fn, 2 main>backward_fn,
 * 3 main>alloc_weights, 4 main>alloc_batch. */
static void put_stacks(tb *t) {
  static const char *const names[] = {"main", "forward_fn", "backward_fn", "alloc_weights", "alloc_batch"};
  prof__rec_list l = {0};
  for (int i = 0; i < 5; i++) {
    prof__rec_pyframe f = {PY(i + 1), "/work/train.py", 14, names[i], strlen(names[i]), 20 + i};
    prof__rec_pyframes_put(&l, &f);
  }
  assert_int_equal(prof__rec_list_write(&l, t->w, PROF_CHUNK_PYFRAMES), 0);
  prof__rec_list_free(&l);
  for (uint32_t s = 1; s <= 4; s++) {
    uintptr_t pcs[] = {PY(s + 1), PY(1)};
    prof__rec_stacks_put(&l, s, pcs, 2);
  }
  assert_int_equal(prof__rec_list_write(&l, t->w, PROF_CHUNK_STACKS), 0);
  prof__rec_list_free(&l);
}

static void put(tb *t, int type, uint64_t ts, uint32_t name, uint64_t a, uint64_t b, uint16_t aux) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts, e.type = (uint8_t)type, e.name = name, e.a = a, e.b = b, e.aux = aux;
  assert_int_equal(prof__tw_events(t->w, 7, &e, 1), 0);
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, path, 1, err)) fail_msg("analyze: %s", err);
  return an;
}

/* Steps 3 [1000, 2000) and 4 [2000, 3000) on thread 7 (1 kHz: period 1 ms).
 * CPU samples: stack 1 in "forward" in step 3 twice; stack 1 in "backward"
 * in step 3; stack 2 in "backward" in step 4 with weight 2; stack 2 outside
 * ranges and steps at 3500; one wall-clock sample (not in the CPU profile). */
static const char *cpu_trace(void) {
  prof__kv hz[] = {{"cpu.sample_hz", "1000"}};
  tb t = tb_open_with("pprof-labels", hz, 1);
  tb_str(&t, 1, "forward");
  tb_str(&t, 2, "backward");
  put_stacks(&t);
  tb_sb(&t, 7, 1000, 3);
  put(&t, PROF_EV_SAMPLE, 1100, 1, 1, 1, 0);
  put(&t, PROF_EV_SAMPLE, 1200, 1, 1, 1, 0);
  put(&t, PROF_EV_SAMPLE, 1300, 1, 2, 1, 0);
  tb_se(&t, 7, 2000, 3);
  tb_sb(&t, 7, 2000, 4);
  put(&t, PROF_EV_SAMPLE, 2500, 2, 2, 2, 0);
  put(&t, PROF_EV_SAMPLE, 2600, 2, 2, 1, 1);
  tb_se(&t, 7, 3000, 4);
  put(&t, PROF_EV_SAMPLE, 3500, 2, 0, 1, 0);
  return tb_close(&t, "0");
}

static void cpu_samples_carry_range_and_step(void **state) {
  (void)state;
  prof__an *an = analyze(cpu_trace());
  static prof m;
  export_to(an, 0, &m);
  prof__an_free(an);
  assert_int_equal(m.ntypes, 2);
  assert_string_equal(m.strings[m.types[0]], "cpu_samples");
  assert_int_equal(m.nsamples, 4);
  int seen = 0;
  for (int i = 0; i < m.nsamples; i++) {
    const psample *s = &m.samples[i];
    const char *fn = leaf(&m, s), *r = str(&m, s->range);
    assert_int_equal(s->vals[1], s->vals[0] * 1000000); /* ns: weight x period */
    if (!strcmp(fn, "forward_fn") && !strcmp(r, "forward") && s->step == 3 && s->vals[0] == 2) seen |= 1;
    if (!strcmp(fn, "forward_fn") && !strcmp(r, "backward") && s->step == 3 && s->vals[0] == 1) seen |= 2;
    if (!strcmp(fn, "backward_fn") && !strcmp(r, "backward") && s->step == 4 && s->vals[0] == 2) seen |= 4;
    if (!strcmp(fn, "backward_fn") && !s->range && s->step == -1 && s->vals[0] == 1 && s->nlabels == 0) seen |= 8;
  }
  assert_int_equal(seen, 15);
  prof_free(&m);
}

/* Full mode: stack 3 allocates 3 x 100 B on the heap and frees one; stack 4
 * allocates 1000 B and 24 B from pool 1 "arena"; nothing else is freed. */
static const char *heap_trace(void) {
  prof__kv mode[] = {{"mem.mode", "full"}};
  tb t = tb_open_with("pprof-heap", mode, 1);
  put_stacks(&t);
  prof__kv pool[] = {{"mem.pool.1", "arena"}};
  assert_int_equal(prof__tw_meta(t.w, pool, 1), 0);
  for (int i = 0; i < 3; i++) put(&t, PROF_EV_ALLOC, 100 + (uint64_t)i, 3, 0x1000 + 0x100 * (uint64_t)i, 100, 0);
  put(&t, PROF_EV_FREE, 200, 0, 0x1100, 0, 0);
  put(&t, PROF_EV_ALLOC, 300, 4, 0x9000, 1000, 0);
  put(&t, PROF_EV_ALLOC, 310, 4, 0x100, 24, 1);
  return tb_close(&t, "0");
}

static void heap_profile_has_alloc_and_inuse(void **state) {
  (void)state;
  prof__an *an = analyze(heap_trace());
  assert_true(prof__pprof_heap_available(an));
  static prof m;
  export_to(an, 1, &m);
  prof__an_free(an);
  static const char *const want[4][2] = {
      {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  assert_int_equal(m.ntypes, 4);
  for (int i = 0; i < 4; i++) {
    assert_string_equal(m.strings[m.types[i]], want[i][0]);
    assert_string_equal(m.strings[m.units[i]], want[i][1]);
  }
  assert_string_equal(m.strings[m.default_type], "inuse_space");
  assert_int_equal(m.nsamples, 3);
  int seen = 0;
  for (int i = 0; i < m.nsamples; i++) {
    const psample *s = &m.samples[i];
    const char *fn = leaf(&m, s), *pool = str(&m, s->pool);
    const uint64_t *v = s->vals;
    if (!strcmp(fn, "alloc_weights") && !strcmp(pool, "heap") && v[0] == 3 && v[1] == 300 && v[2] == 2 && v[3] == 200)
      seen |= 1;
    if (!strcmp(fn, "alloc_batch") && !strcmp(pool, "heap") && v[0] == 1 && v[1] == 1000 && v[2] == 1 && v[3] == 1000)
      seen |= 2;
    if (!strcmp(fn, "alloc_batch") && !strcmp(pool, "arena") && v[0] == 1 && v[1] == 24 && v[2] == 1 && v[3] == 24)
      seen |= 4;
  }
  assert_int_equal(seen, 7);
  prof_free(&m);
}

static void heap_needs_allocation_events(void **state) {
  (void)state;
  prof__an *an = analyze(cpu_trace());
  assert_false(prof__pprof_heap_available(an));
  prof__an_free(an);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s/mlprof export --pprof-heap -o /dev/null '%s' 2>/dev/null", MLPROF_BIN_DIR, cpu_trace());
  assert_int_equal(th_run(cmd, NULL), 1);
}

/* go tool pprof reads the gzip'd files the CLI writes: -tags lists the
 * labels, -tagfocus keeps one range's samples. */
static void go_pprof_reads_labels(void **state) {
  (void)state;
  if (th_run("command -v go >/dev/null 2>&1", NULL) != 0) {
    printf("go not installed (Debian: golang-go): 'go tool pprof' check skipped\n");
    skip();
  }
  const char *trace = cpu_trace(), *out = th_tmp_path("pprof-labels", ".pb.gz"), *txt = th_tmp_path("pprof-tags", ".txt");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s/mlprof export --pprof -q -o '%s' '%s'", MLPROF_BIN_DIR, out, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  const char *env = "HOME=\"${TMPDIR:-/tmp}\"";
  snprintf(cmd, sizeof cmd, "%s go tool pprof -symbolize=none -tags '%s'", env, out);
  assert_int_equal(th_run(cmd, txt), 0);
  char *text = th_read_file(txt, NULL);
  assert_non_null(text);
  /* CPU time per range and step (the sample outside both has neither) */
  assert_non_null(strstr(text, "range: Total 5.0ms"));
  assert_non_null(strstr(text, "3.0ms (60.00%): backward"));
  assert_non_null(strstr(text, "2.0ms (40.00%): forward"));
  assert_non_null(strstr(text, "step: Total 5.0ms"));
  assert_non_null(strstr(text, "3.0ms (60.00%): 3"));
  free(text);
  snprintf(cmd, sizeof cmd, "%s go tool pprof -symbolize=none -sample_index=cpu_samples -tagfocus=range=backward -top '%s'",
           env, out);
  assert_int_equal(th_run(cmd, txt), 0);
  text = th_read_file(txt, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "backward_fn"));
  assert_non_null(strstr(text, "forward_fn")); /* stack 1 sampled once in backward */
  assert_non_null(strstr(text, "accounting for 3, 50.00% of 6 total"));
  free(text);
  snprintf(cmd, sizeof cmd, "%s/mlprof export --pprof-heap -q -o '%s' '%s'", MLPROF_BIN_DIR, out, heap_trace());
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s go tool pprof -symbolize=none -sample_index=inuse_space -tagfocus=pool=heap -top '%s'", env,
           out);
  assert_int_equal(th_run(cmd, txt), 0);
  text = th_read_file(txt, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "alloc_weights"));
  assert_non_null(strstr(text, "accounting for 1200B, 98.04% of 1224B total"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_samples_carry_range_and_step),
      cmocka_unit_test(heap_profile_has_alloc_and_inuse),
      cmocka_unit_test(heap_needs_allocation_events),
      cmocka_unit_test(go_pprof_reads_labels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
