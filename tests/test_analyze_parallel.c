/* test_analyze_parallel.c — the analyzer with its decode thread gives the
 * same reports as the serial analyzer, byte for byte: text and JSON of
 * hand-built traces spanning many chunks (three threads, steps, ranges,
 * counters, marks, samples, allocations, strings defined and redefined
 * between events, META and opaque chunks), the same trace cut short inside
 * a chunk and with a corrupt chunk (the same error status and message),
 * and every trace of the fuzz seed corpus and regression cases. The
 * parallel runs must really have used the decode thread, a failed
 * pthread_create() must fall back to the serial pass, and a one-event
 * change must show in the reports (the comparison can fail).
 */
// wrap: pthread_create
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/engine/an_internal.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/ev_mem.h"
#include "trace/ev_sample.h"
#include "trace/trace.h"

#define T0 1000000000ull

/* ---- pthread_create that can be made to fail ---------------------------- */

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
static int create_fails, create_calls;
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  create_calls++;
  if (create_fails) return EAGAIN;
  return __real_pthread_create(th, attr, fn, arg);
}

/* ---- traces ------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(uint64_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng % n;
}

static void ev(prof__tw *w, uint32_t tid, uint8_t type, uint8_t cat, uint32_t name, uint64_t ts, uint64_t a,
               uint64_t b, uint16_t aux) {
  prof__event e = {.ts = ts, .type = type, .cat = cat, .aux = aux, .name = name, .a = a, .b = b};
  assert_int_equal(prof__tw_events(w, tid, &e, 1), 0);
}

static const char *names[] = {"data", "forward", "backward", "attn", "mlp", "optimizer", "loss",
                               "queue_depth", "read", "decode", "mem.live_bytes", "epoch"};
enum { N_DATA = 1, N_FWD, N_BWD, N_ATTN, N_MLP, N_OPT, N_LOSS, N_QD, N_READ, N_DECODE, N_LIVE, N_EPOCH };

/* A training-like trace of `steps` steps on thread 1 and two loaders,
 * flushed often so that it spans many chunks. `tweak` changes one range's
 * duration (the negative control). */
static const char *write_trace(const char *stem, int steps, int tweak) {
  const char *path = th_tmp_path(stem, ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "test_analyze_parallel"}, {"pid", "4242"}, {"cpu.sample_hz", "1000"},
                    {"cpu.sample_mode", "cpu"}};
  prof__tw *w = prof__tw_open(path, hdr, 4, err);
  assert_non_null(w);
  for (uint32_t i = 0; i < sizeof names / sizeof names[0]; i++)
    assert_int_equal(prof__tw_string(w, i + 1, names[i], strlen(names[i])), 0);
  prof__kv meta[] = {{"cpu.signal", "SIGPROF"}};
  assert_int_equal(prof__tw_meta(w, meta, 1), 0);
  uint64_t ts[4] = {0, T0, T0, T0};
  for (int s = 0; s < steps; s++) {
    uint64_t *t = &ts[1];
    ev(w, 1, PROF_EV_STEP_BEGIN, 0, 0, *t, (uint64_t)s, 0, 0);
    ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_DATA, N_DATA, *t += 100, 0, 0, 0);
    ev(w, 1, PROF_EV_RANGE_END, PROF_CAT_DATA, N_DATA, *t += 20000 + rnd(5000), 0, 0, 0);
    ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_COMPUTE, N_FWD, *t += 50, 0, 0, 0);
    for (int l = 0; l < 6; l++) {
      ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_COMPUTE, N_ATTN, *t += 30, 0, 0, 0);
      ev(w, 1, PROF_EV_SAMPLE, 0, 0, *t + 10, N_ATTN, 1000000, PROF_SAMPLE_CPU);
      ev(w, 1, PROF_EV_ALLOC, 0, 0, *t += 40, 4096u << (l % 4), 0x1000 + (uint64_t)l * 64, 0);
      ev(w, 1, PROF_EV_RANGE_END, PROF_CAT_COMPUTE, N_ATTN, *t += 5000 + rnd(3000) + (tweak && s == 7 && l == 3), 0, 0, 0);
      ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_COMPUTE, N_MLP, *t += 30, 0, 0, 0);
      ev(w, 1, PROF_EV_FREE, 0, 0, *t += 40, 4096u << (l % 4), 0x1000 + (uint64_t)l * 64, 0);
      ev(w, 1, PROF_EV_RANGE_END, PROF_CAT_COMPUTE, N_MLP, *t += 4000 + rnd(2000), 0, 0, 0);
    }
    ev(w, 1, PROF_EV_RANGE_END, PROF_CAT_COMPUTE, N_FWD, *t += 40, 0, 0, 0);
    ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_COMPUTE, N_BWD, *t += 50, 0, 0, 0);
    ev(w, 1, PROF_EV_RANGE_END, PROF_CAT_COMPUTE, N_BWD, *t += 60000 + rnd(20000), 0, 0, 0);
    if (s % 10 == 3) ev(w, 1, PROF_EV_RANGE_BEGIN, PROF_CAT_COMPUTE, N_OPT, *t += 50, 0, 0, 0); /* left open: lost END */
    ev(w, 1, PROF_EV_COUNTER, 0, N_LOSS, *t += 10, prof__f64_bits(3.0 / (1.0 + s)), 0, 0);
    ev(w, 1, PROF_EV_COUNTER, 0, N_LIVE, *t += 10, prof__f64_bits(1e6 + (double)rnd(100000)), 0, 0);
    if (s % 25 == 0) ev(w, 1, PROF_EV_MARK, 0, N_EPOCH, *t, (uint64_t)s, 0, 0);
    ev(w, 1, PROF_EV_STEP_END, 0, 0, *t += 200, (uint64_t)s, 0, 0);
    for (uint32_t tid = 2; tid <= 3; tid++)
      while (ts[tid] < *t) {
        ev(w, tid, PROF_EV_RANGE_BEGIN, PROF_CAT_IO, N_READ, ts[tid] += 100, 0, 0, 0);
        ev(w, tid, PROF_EV_RANGE_END, PROF_CAT_IO, N_READ, ts[tid] += 7000 + rnd(9000), 0, 0, 0);
        ev(w, tid, PROF_EV_RANGE_BEGIN, PROF_CAT_DATA, N_DECODE, ts[tid] += 100, 0, 0, 0);
        ev(w, tid, PROF_EV_RANGE_END, PROF_CAT_DATA, N_DECODE, ts[tid] += 9000 + rnd(9000), 0, 0, 0);
        ev(w, tid, PROF_EV_COUNTER, 0, N_QD, ts[tid], prof__f64_bits((double)rnd(8)), 0, 0);
      }
    if (s % 16 == 15) {
      assert_int_equal(prof__tw_flush(w), 0); /* many small chunks */
      if (s == 47) { /* a name redefined and a new one between events */
        assert_int_equal(prof__tw_string(w, N_QD, "loader.queue", 12), 0);
        assert_int_equal(prof__tw_string(w, 40, "late_name", 9), 0);
        static uint8_t blob[100000]; /* longer than any string before it */
        for (size_t i = 0; i < sizeof blob; i++) blob[i] = (uint8_t)(i * 7);
        assert_int_equal(prof__tw_chunk(w, 200, blob, sizeof blob), 0); /* unknown: reaches the hooks */
      }
    }
  }
  assert_int_equal(prof__tw_thread(w, 1, "main", 0, 0), 0);
  assert_int_equal(prof__tw_thread(w, 2, "loader", 3, 1), 0);
  assert_int_equal(prof__tw_thread(w, 3, NULL, 0, 0), 0);
  prof__kv foot[] = {{"events_written", "1000"}, {"events_lost", "3"}};
  assert_int_equal(prof__tw_close(w, foot, 2), 0);
  return path;
}

/* A copy of src: its first `len` bytes (truncation), or all of it with the
 * byte at `flip` inverted (corruption; SIZE_MAX: none). */
static const char *copy_trace(const char *src, const char *stem, size_t len, size_t flip) {
  size_t n;
  char *buf = th_read_file(src, &n);
  assert_non_null(buf);
  if (len > n) len = n;
  if (flip != SIZE_MAX && flip < len) buf[flip] = (char)~buf[flip];
  const char *path = th_tmp_path(stem, ".mlpt");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, len, f), len);
  fclose(f);
  free(buf);
  return path;
}

/* ---- analysis in one mode ------------------------------------------------ */

typedef struct outcome {
  int rc;
  int threads; /* the decode thread was used (2) or not (1) */
  char err[PROF_ERR_MAX];
  char *text, *json;
  size_t text_len, json_len;
} outcome;

static char *report(prof__an *an, const char *format, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  assert_non_null(f);
  assert_int_equal(prof__report_write(an, format, f), 0);
  fclose(f);
  return buf;
}

static outcome run(const char *path, const char *threads) {
  outcome o;
  memset(&o, 0, sizeof o);
  assert_int_equal(setenv("MLPROF_ANALYZE_THREADS", threads, 1), 0);
  prof__an *an = NULL;
  o.rc = prof__an_run_opts(&an, path, 1, o.err);
  unsetenv("MLPROF_ANALYZE_THREADS");
  if (an) {
    o.threads = an_priv_of(an)->threads;
    o.text = report(an, "text", &o.text_len);
    o.json = report(an, "json", &o.json_len);
    prof__an_free(an);
  }
  return o;
}

static void outcome_free(outcome *o) {
  free(o->text);
  free(o->json);
}

static int two_cpus(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2;
}

/* Serial and parallel outcomes of `path` are identical; returns the number
 * of parallel runs that used the decode thread (0 or 1). */
static int same_both_ways(const char *path) {
  outcome s = run(path, "1"), p = run(path, "2");
  if (s.rc != p.rc || strcmp(s.err, p.err) != 0)
    fail_msg("%s: serial rc %d '%s', parallel rc %d '%s'", path, s.rc, s.err, p.rc, p.err);
  if (s.rc == 0) {
    assert_int_equal(s.threads, 1);
    if (s.text_len != p.text_len || memcmp(s.text, p.text, s.text_len) != 0)
      fail_msg("%s: text reports differ (serial %zu bytes, parallel %zu)", path, s.text_len, p.text_len);
    if (s.json_len != p.json_len || memcmp(s.json, p.json, s.json_len) != 0)
      fail_msg("%s: JSON reports differ (serial %zu bytes, parallel %zu)", path, s.json_len, p.json_len);
  }
  int used = p.rc == 0 && p.threads == 2;
  outcome_free(&s);
  outcome_free(&p);
  return used;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_hand_built_traces(void **state) {
  (void)state;
  const char *full = write_trace("par-full", 400, 0);
  outcome s = run(full, "1");
  assert_int_equal(s.rc, 0);
  assert_non_null(strstr(s.text, "400 steps"));
  assert_true(s.json_len > 1000);
  outcome_free(&s);
  int used = same_both_ways(full);
  if (two_cpus()) assert_int_equal(used, 1);
  assert_int_equal(same_both_ways(write_trace("par-small", 3, 0)), two_cpus());

  long size;
  FILE *f = fopen(full, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fclose(f);
  /* cut inside a chunk in the middle and just before the footer */
  same_both_ways(copy_trace(full, "par-cut", (size_t)size / 2, SIZE_MAX));
  same_both_ways(copy_trace(full, "par-nofooter", (size_t)size - 40, SIZE_MAX));
  /* a corrupt byte in a chunk in the middle: a checksum error mid-trace */
  outcome c = run(copy_trace(full, "par-bad", (size_t)size, (size_t)size / 2), "2");
  assert_true(c.rc < 0);
  assert_non_null(strstr(c.err, "checksum"));
  outcome_free(&c);
  same_both_ways(copy_trace(full, "par-bad2", (size_t)size, (size_t)size / 2));
}

/* The comparison sees a one-nanosecond change of one range. */
static void test_comparison_can_fail(void **state) {
  (void)state;
  rng = 0x9E3779B97F4A7C15ull;
  outcome a = run(write_trace("par-a", 50, 0), "2");
  rng = 0x9E3779B97F4A7C15ull;
  outcome b = run(write_trace("par-b", 50, 1), "2");
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  assert_true(a.json_len != b.json_len || memcmp(a.json, b.json, a.json_len) != 0);
  outcome_free(&a);
  outcome_free(&b);
}

static void test_corpus(void **state) {
  (void)state;
  const char *dirs[] = {MLPROF_SRC_DIR "/tests/fuzz/corpus", MLPROF_SRC_DIR "/tests/fuzz/regressions"};
  int files = 0;
  for (size_t d = 0; d < 2; d++) {
    struct dirent **ents;
    int n = scandir(dirs[d], &ents, NULL, alphasort);
    assert_true(n > 2);
    for (int k = 0; k < n; k++) {
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", dirs[d], ents[k]->d_name);
      if (ents[k]->d_name[0] != '.' && strstr(ents[k]->d_name, ".mlpt")) {
        same_both_ways(p);
        files++;
      }
      free(ents[k]);
    }
    free(ents);
  }
  assert_true(files >= 20);
}

/* No thread: the serial pass, the same report. */
static void test_no_thread_falls_back(void **state) {
  (void)state;
  const char *path = write_trace("par-nothread", 60, 0);
  outcome s = run(path, "1");
  create_fails = 1;
  create_calls = 0;
  outcome p = run(path, "2");
  create_fails = 0;
  assert_int_equal(p.rc, 0);
  assert_int_equal(p.threads, 1);
  if (two_cpus()) assert_true(create_calls >= 1);
  assert_int_equal(s.json_len, p.json_len);
  assert_memory_equal(s.json, p.json, s.json_len);
  assert_int_equal(s.text_len, p.text_len);
  assert_memory_equal(s.text, p.text, s.text_len);
  outcome_free(&s);
  outcome_free(&p);
  /* MLPROF_ANALYZE_THREADS=1 starts no thread at all */
  create_calls = 0;
  outcome q = run(path, "1");
  assert_int_equal(create_calls, 0);
  outcome_free(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_built_traces),
      cmocka_unit_test(test_comparison_can_fail),
      cmocka_unit_test(test_corpus),
      cmocka_unit_test(test_no_thread_falls_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
