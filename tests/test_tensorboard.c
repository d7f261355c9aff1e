/* test_tensorboard.c — the TensorBoard export, read back by a reader written
 * here from the format's description (not from the writer): record framing,
 * masked CRC32C of length and payload, Event / Summary / Value /
 * HistogramProto field numbers and wire types, and every value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#if __has_include("trace/rec_hist.h")
#include "trace/rec_hist.h"
#define HAVE_HIST 1
#endif

/* ---- independent reader ------------------------------------------------- */

/* CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, bit by bit. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
  }
  return ~c;
}

static uint32_t mask(uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; }

static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

typedef struct pb {
  const uint8_t *p, *end;
} pb;

static uint64_t pb_varint(pb *b) {
  uint64_t v = 0;
  for (int s = 0; s < 64 && b->p < b->end; s += 7) {
    uint8_t c = *b->p++;
    v |= (uint64_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
  fail_msg("bad varint");
  return 0;
}

/* Next field: number and wire type; the value in *v (varint, fixed) or
 * *sub (length-delimited). Returns 0 at the end. */
static int pb_next(pb *b, unsigned *field, unsigned *wire, uint64_t *v, pb *sub) {
  if (b->p >= b->end) return 0;
  uint64_t key = pb_varint(b);
  *field = (unsigned)(key >> 3);
  *wire = key & 7;
  switch (*wire) {
  case 0: *v = pb_varint(b); break;
  case 1: assert_true(b->end - b->p >= 8); *v = le(b->p, 8); b->p += 8; break;
  case 5: assert_true(b->end - b->p >= 4); *v = le(b->p, 4); b->p += 4; break;
  case 2: {
    uint64_t n = pb_varint(b);
    assert_true((uint64_t)(b->end - b->p) >= n);
    sub->p = b->p;
    sub->end = b->p + n;
    b->p += n;
    break;
  }
  default: fail_msg("unexpected wire type %u", *wire);
  }
  return 1;
}

static double as_f64(uint64_t v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}

static float as_f32(uint64_t v) {
  uint32_t u = (uint32_t)v;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

#define MAX_VALUES 4096
typedef struct tb_value {
  int64_t step;
  double wall;
  char tag[96];
  int is_hist;
  float simple;
  double hmin, hmax, hnum, hsum, hsq;
  double limits[300], counts[300];
  int nlim, ncnt;
} tb_value;

typedef struct tb_file {
  char version[32];
  int version_first;
  int records;
  tb_value v[MAX_VALUES];
  int n;
} tb_file;

static void read_histo(pb *h, tb_value *o) {
  unsigned f, w;
  uint64_t v;
  pb sub;
  o->is_hist = 1;
  while (pb_next(h, &f, &w, &v, &sub)) {
    if (f >= 1 && f <= 5) {
      assert_int_equal(w, 1);
      double d = as_f64(v);
      if (f == 1) o->hmin = d;
      if (f == 2) o->hmax = d;
      if (f == 3) o->hnum = d;
      if (f == 4) o->hsum = d;
      if (f == 5) o->hsq = d;
    } else if (f == 6 || f == 7) {
      assert_int_equal(w, 2); /* packed doubles */
      assert_int_equal((sub.end - sub.p) % 8, 0);
      for (; sub.p < sub.end; sub.p += 8) {
        if (f == 6) o->limits[o->nlim++] = as_f64(le(sub.p, 8));
        else o->counts[o->ncnt++] = as_f64(le(sub.p, 8));
      }
    }
  }
}

static void read_value(pb *val, tb_file *t, int64_t step, double wall) {
  assert_true(t->n < MAX_VALUES);
  tb_value *o = &t->v[t->n++];
  memset(o, 0, sizeof *o);
  o->step = step;
  o->wall = wall;
  unsigned f, w;
  uint64_t v;
  pb sub;
  while (pb_next(val, &f, &w, &v, &sub)) {
    if (f == 1) {
      assert_int_equal(w, 2);
      size_t n = (size_t)(sub.end - sub.p);
      assert_true(n < sizeof o->tag);
      memcpy(o->tag, sub.p, n);
    } else if (f == 2) {
      assert_int_equal(w, 5);
      o->simple = as_f32(v);
    } else if (f == 5) {
      assert_int_equal(w, 2);
      read_histo(&sub, o);
    }
  }
}

static void read_event(pb *ev, tb_file *t) {
  unsigned f, w;
  uint64_t v, step = 0;
  double wall = 0;
  pb sub, summary = {NULL, NULL};
  while (pb_next(ev, &f, &w, &v, &sub)) {
    if (f == 1) { assert_int_equal(w, 1); wall = as_f64(v); }
    else if (f == 2) { assert_int_equal(w, 0); step = v; }
    else if (f == 3) {
      assert_int_equal(w, 2);
      assert_true(sub.end - sub.p < 32);
      memcpy(t->version, sub.p, (size_t)(sub.end - sub.p));
      t->version_first = t->records == 1;
    } else if (f == 5) { assert_int_equal(w, 2); summary = sub; }
  }
  if (!summary.p) return;
  while (pb_next(&summary, &f, &w, &v, &sub)) {
    assert_int_equal(f, 1);
    assert_int_equal(w, 2);
    read_value(&sub, t, (int64_t)step, wall);
  }
}

static void read_tb(const char *path, tb_file *t) {
  size_t len;
  uint8_t *d = (uint8_t *)th_read_file(path, &len);
  assert_non_null(d);
  memset(t, 0, sizeof *t);
  size_t off = 0;
  while (off < len) {
    assert_true(len - off >= 12);
    uint64_t n = le(d + off, 8);
    assert_int_equal((uint32_t)le(d + off + 8, 4), mask(crc32c_bitwise(d + off, 8)));
    assert_true(len - off - 12 >= n + 4);
    const uint8_t *payload = d + off + 12;
    assert_int_equal((uint32_t)le(payload + n, 4), mask(crc32c_bitwise(payload, n)));
    t->records++;
    pb ev = {payload, payload + n};
    read_event(&ev, t);
    off += 12 + n + 4;
  }
  free(d);
}

static const tb_value *find(const tb_file *t, const char *tag, int64_t step) {
  for (int i = 0; i < t->n; i++)
    if (t->v[i].step == step && strcmp(t->v[i].tag, tag) == 0) return &t->v[i];
  return NULL;
}

static const tb_value *must(const tb_file *t, const char *tag, int64_t step) {
  const tb_value *v = find(t, tag, step);
  if (!v) fail_msg("no value '%s' at step %lld", tag, (long long)step);
  return v;
}

/* ---- the trace ---------------------------------------------------------- */

static void ev_b(tb *t, uint32_t tid, uint64_t ts, int type, uint32_t name, uint64_t a, uint64_t b) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .name = name, .a = a, .b = b};
  if (prof__tw_events(t->w, tid, &e, 1)) abort();
}

/* Three steps on thread 1: step k spans [k*10ms, k*10ms + (4+k) ms), with a
 * data range of 1 ms and a compute range of 2 ms in each. mem.rss_bytes
 * reaches 1000+k*100 then falls back; the user counter "lr" is set twice
 * per step, last to 0.1*(k+1). prof_scalar "loss" = 2.5 - k in step k (the
 * event carries prof_step_count(), k + 1, as the producer writes it). The
 * cumulative per-thread counter cpuctr/cpu_ns of thread 1 reads 2 * ts
 * every 5 ms (stamped by the writer); thread 2's much larger readings must
 * not mix in. */
static const char *tb_trace(void) {
  tb t = tb_open("tbx");
  tb_str(&t, 1, "load");
  tb_str(&t, 2, "forward");
  tb_str(&t, 3, "mem.rss_bytes");
  tb_str(&t, 4, "lr");
  tb_str(&t, 5, "loss");
  tb_str(&t, 6, "fc1.weight");
  tb_str(&t, 7, "cpuctr/cpu_ns");
  for (uint64_t k = 0; k < 3; k++) {
    uint64_t b = k * 10000000;
    tb_sb(&t, 1, b, k);
    tb_b(&t, 1, b, 1, PROF_CAT_DATA);
    tb_e(&t, 1, b + 1000000, 1);
    tb_b(&t, 1, b + 1000000, 2, PROF_CAT_COMPUTE);
    tb_counter(&t, 1, b + 1500000, 3, 1000.0 + (double)k * 100);
    tb_counter(&t, 1, b + 1600000, 3, 500.0);
    tb_counter(&t, 1, b + 1700000, 4, 99.0);
    tb_counter(&t, 1, b + 1800000, 4, 0.1 * (double)(k + 1));
    tb_e(&t, 1, b + 3000000, 2);
    ev_b(&t, 1, b + 3100000, PROF_EV_SCALAR, 5, prof__f64_bits(2.5 - (double)k), k + 1);
    tb_se(&t, 1, b + (4 + k) * 1000000, k);
  }
  for (uint64_t ts = 0; ts <= 30000000; ts += 5000000) {
    tb_counter(&t, 1, ts, 7, 2.0 * (double)ts);
    tb_counter(&t, 2, ts, 7, 1e12 + 7.0 * (double)ts);
  }
  tb_thread_named(&t, 1, "main", 0);
  tb_thread_named(&t, 2, "other", 0);
  tb_flush(&t);
#if HAVE_HIST
  /* values {0, 0, 1.5, -3, 0.25}: zeros 2; |x| buckets 2^0, 2^1, 2^-2 */
  prof__hrec r;
  memset(&r, 0, sizeof r);
  r.ts_ns = 25000000;
  r.step1 = 3; /* at step 2 */
  r.tid = 1;
  r.tag = 6;
  const float vals[] = {0, 0, 1.5f, -3, 0.25f};
  prof__rec_hist_summarise(vals, 5, &r.sum);
  prof__buf b = {0};
  prof__buf_u8(&b, PROF_HIST_FORMAT);
  prof__rec_hist_encode(&b, &r);
  if (prof__tw_chunk(t.w, PROF_CHUNK_HIST, b.p, b.len)) abort();
  prof__buf_free(&b);
#endif
  return tb_close(&t, "0");
}

typedef struct fixture {
  tb_file f;
  char path[1024];
} fixture;

static int setup(void **state) {
  fixture *x = calloc(1, sizeof *x);
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, tb_trace(), 1, err)) return -1;
  const char *dir = th_tmp_path("tbdir", "");
  int rc = prof__export_tensorboard(an, dir, x->path, sizeof x->path, err);
  prof__an_free(an);
  if (rc) {
    fprintf(stderr, "export: %s\n", err);
    return -1;
  }
  *state = x;
  return 0;
}

static int teardown(void **state) {
  free(*state);
  return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void reader_crc_matches_the_standard_check_value(void **state) {
  (void)state;
  assert_int_equal(crc32c_bitwise((const uint8_t *)"123456789", 9), 0xe3069283u);
}

static void file_is_named_for_tensorboard_and_starts_with_the_version(void **state) {
  fixture *x = *state;
  assert_non_null(strstr(x->path, "/events.out.tfevents."));
  read_tb(x->path, &x->f);
  assert_string_equal(x->f.version, "brain.Event:2");
  assert_true(x->f.version_first);
  assert_true(x->f.records >= 1 + 3 + 3); /* version, 3 steps, 3 metrics */
}

static void step_time_and_breakdown_per_step(void **state) {
  fixture *x = *state;
  read_tb(x->path, &x->f);
  for (int k = 0; k < 3; k++) {
    assert_float_equal(must(&x->f, "step/time_ms", k)->simple, 4.0f + (float)k, 1e-4);
    assert_float_equal(must(&x->f, "breakdown/data_ms", k)->simple, 1.0f, 1e-4);
    assert_float_equal(must(&x->f, "breakdown/compute_ms", k)->simple, 2.0f, 1e-4);
    assert_float_equal(must(&x->f, "breakdown/other_ms", k)->simple, 1.0f + (float)k, 1e-4);
    assert_float_equal(must(&x->f, "breakdown/comm_ms", k)->simple, 0.0f, 1e-6);
  }
  assert_null(find(&x->f, "step/time_ms", 3));
}

static void memory_peaks_counters_and_metrics(void **state) {
  fixture *x = *state;
  read_tb(x->path, &x->f);
  for (int k = 0; k < 3; k++) {
    assert_float_equal(must(&x->f, "memory/rss_bytes_peak", k)->simple, 1000.0f + 100.0f * (float)k, 1e-3);
    assert_float_equal(must(&x->f, "counters/lr", k)->simple, 0.1f * (float)(k + 1), 1e-6);
    assert_float_equal(must(&x->f, "metrics/loss", k)->simple, 2.5f - (float)k, 1e-6);
  }
  assert_null(find(&x->f, "metrics/loss", 3));
}

static void cumulative_counters_become_per_step_values(void **state) {
  fixture *x = *state;
  read_tb(x->path, &x->f);
  for (int k = 0; k < 3; k++) /* 2 ns of CPU per ns of the (4 + k) ms step */
    assert_float_equal(must(&x->f, "counters/cpuctr/cpu_ns", k)->simple, 2e6f * (4.0f + (float)k), 1.0);
}

static void missing_parent_folders_are_created(void **state) {
  (void)state;
  prof__an *an = NULL;
  char err[256], path[1024], dir[900];
  assert_int_equal(prof__an_run_opts(&an, tb_trace(), 1, err), 0);
  snprintf(dir, sizeof dir, "%s/runs/exp1", th_tmp_path("tbparent", ""));
  assert_int_equal(prof__export_tensorboard(an, dir, path, sizeof path, err), 0);
  assert_true(th_exists(path));
  assert_int_equal(strncmp(path, dir, strlen(dir)), 0);
  prof__an_free(an);
}

static void wall_time_is_realtime_seconds(void **state) {
  fixture *x = *state;
  read_tb(x->path, &x->f);
  /* the test trace has no realtime anchor: seconds of the trace clock */
  assert_float_equal(must(&x->f, "step/time_ms", 1)->wall, 0.015, 1e-9);
}

static void histogram_of_magnitudes(void **state) {
#if HAVE_HIST
  fixture *x = *state;
  read_tb(x->path, &x->f);
  const tb_value *h = must(&x->f, "histograms/fc1.weight", 2);
  assert_true(h->is_hist);
  assert_float_equal(h->hnum, 5, 0);
  assert_float_equal(h->hmin, 0, 0);
  assert_float_equal(h->hmax, 3, 0);
  assert_float_equal(h->hsum, -1.25, 1e-9);                       /* 1.5 - 3 + 0.25 */
  assert_float_equal(h->hsq, 2.25 + 9 + 0.0625, 1e-9);
  /* limits: 0 (zeros), then 2^-1 (bucket 2^-2), 2^0 (empty), 2^1 (1.5), 2^2 (3) */
  assert_int_equal(h->nlim, 5);
  assert_int_equal(h->ncnt, 5);
  const double lim[] = {0, 0.5, 1, 2, 4}, cnt[] = {2, 1, 0, 1, 1};
  for (int i = 0; i < 5; i++) {
    assert_float_equal(h->limits[i], lim[i], 0);
    assert_float_equal(h->counts[i], cnt[i], 0);
  }
#else
  (void)state;
  skip(); /* the model-health producer (histograms) is not in this tree */
#endif
}

static void unwritable_directory_fails_with_a_message(void **state) {
  (void)state;
  prof__an *an = NULL;
  char err[256], path[256];
  assert_int_equal(prof__an_run_opts(&an, tb_trace(), 1, err), 0);
  const char *file = th_tmp_path("tbfile", ".txt"); /* a file where a folder should be */
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  char dir[900];
  snprintf(dir, sizeof dir, "%s/dir/x", file);
  assert_int_equal(prof__export_tensorboard(an, dir, path, sizeof path, err), PROF_EIO);
  assert_non_null(strstr(err, file));
  prof__an_free(an);
}

/* Optional: TensorBoard's own Python reader, when installed. */
static void tensorboard_python_reader_agrees_when_available(void **state) {
  fixture *x = *state;
  if (th_run("python3 -c 'import tensorboard.backend.event_processing.event_file_loader' 2>/dev/null", NULL) != 0)
    skip(); /* tensorboard (Python) is not installed */
  char cmd[1400];
  snprintf(cmd, sizeof cmd,
           "python3 -c \"import sys; from tensorboard.backend.event_processing import event_file_loader as l; "
           "ev=list(l.LegacyEventFileLoader(sys.argv[1]).Load()); "
           "v=[x.simple_value for e in ev if e.step==1 for x in e.summary.value if x.tag=='step/time_ms']; "
           "sys.exit(0 if ev[0].file_version=='brain.Event:2' and abs(v[0]-5.0)<1e-4 else 1)\" '%s'",
           x->path);
  assert_int_equal(th_run(cmd, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reader_crc_matches_the_standard_check_value),
      cmocka_unit_test_setup_teardown(file_is_named_for_tensorboard_and_starts_with_the_version, setup, teardown),
      cmocka_unit_test_setup_teardown(step_time_and_breakdown_per_step, setup, teardown),
      cmocka_unit_test_setup_teardown(memory_peaks_counters_and_metrics, setup, teardown),
      cmocka_unit_test_setup_teardown(wall_time_is_realtime_seconds, setup, teardown),
      cmocka_unit_test_setup_teardown(histogram_of_magnitudes, setup, teardown),
      cmocka_unit_test(unwritable_directory_fails_with_a_message),
      cmocka_unit_test_setup_teardown(cumulative_counters_become_per_step_values, setup, teardown),
      cmocka_unit_test(missing_parent_folders_are_created),
      cmocka_unit_test_setup_teardown(tensorboard_python_reader_agrees_when_available, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
