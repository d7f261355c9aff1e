/* test_long_runs.c — the bounded trace (MLPROF_MAX_MB) at the writer
 * level: a tiny bound holds at every flush, the trace decodes, and its
 * step summaries cover every step; the summary codec round-trips and
 * rounds as its level says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/rec_stepsum.h"
#include "trace/trace.h"

#define BOUND (64u << 10)
#define STEPS 20000

static uint64_t file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void write_steps(prof__tw *w, const char *path, int check) {
  prof__event ev[4];
  uint64_t ts = 1000000;
  for (uint64_t s = 0; s < STEPS; s++) {
    memset(ev, 0, sizeof ev);
    ev[0] = (prof__event){.type = PROF_EV_STEP_BEGIN, .a = s, .ts = ts};
    ev[1] = (prof__event){.type = PROF_EV_RANGE_BEGIN, .name = 1, .cat = 1, .ts = ts + 100};
    ev[2] = (prof__event){.type = PROF_EV_RANGE_END, .name = 1, .ts = ts + 100 + 1000 * (s % 7)};
    ev[3] = (prof__event){.type = PROF_EV_STEP_END, .a = s, .ts = ts + 9000 + 37 * (s % 13)};
    ts += 20000;
    assert_int_equal(prof__tw_events(w, 42, ev, 4), 0);
    if (s % 100 == 99) {
      assert_int_equal(prof__tw_flush(w), 0);
      if (check) assert_true(file_size(path) <= BOUND);
    }
  }
}

static void bounded_trace_keeps_every_step(void **state) {
  (void)state;
  char path[] = MLPROF_TEST_TMP "/long_runs_bound.mlpt";
  unlink(path);
  prof__kv kv[] = {{"program", "test"}};
  int taken;
  char err[PROF_ERR_MAX];
  prof__tw *w = prof__tw_create(path, kv, 1, &taken, err);
  assert_non_null(w);
  assert_int_equal(prof__tw_string(w, 1, "load", 4), 0);
  assert_int_equal(prof__tw_bound(w, path, BOUND), 0);
  write_steps(w, path, 1);
  uint64_t rewrites = 0, dropped = 0, steps = 0;
  prof__tw_bound_stats(w, &rewrites, &dropped, &steps);
  assert_true(rewrites > 0);
  assert_true(dropped > 0);
  assert_int_equal(steps, STEPS);
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
  assert_true(file_size(path) <= BOUND);

  /* Every step is in the summaries, once or more, and the trace is clean. */
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  unsigned char *seen = calloc(STEPS, 1);
  prof__rec rec;
  int k;
  uint64_t detail_steps = 0;
  while ((k = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_STEP_END) detail_steps++;
    if (rec.kind != PROF_REC_CHUNK || rec.chunk_type != PROF_CHUNK_STEPSUM) continue;
    prof__ss_iter it;
    prof__ss_rec s;
    assert_int_equal(prof__ss_open(&it, rec.data, rec.len), 0);
    int q;
    while ((q = prof__ss_next(&it, &s)) == 1) {
      assert_true(s.number < STEPS);
      seen[s.number] = 1;
      assert_int_equal(s.tid, 42);
    }
    assert_int_equal(q, 0);
  }
  assert_int_equal(k, 0);
  prof__reader_close(r);
  size_t all = 0;
  for (size_t i = 0; i < STEPS; i++) all += seen[i];
  assert_int_equal(all, STEPS);
  assert_true(detail_steps > 0 && detail_steps < STEPS); /* the window only */
  free(seen);
  unlink(path);
}

static void summary_codec_rounds_by_level(void **state) {
  (void)state;
  prof__ss_rec in = {.number = 7, .tid = 3, .begin_us = 123456789, .dur_us = 100003,
                     .bd_us = {50001, 0, 0, 0, 0, 49999}};
  for (unsigned level = 0; level < PROF_SS_LEVELS; level++) {
    prof__ss_enc e = {0};
    prof__ss_enc_reset(&e, level);
    prof__ss_enc_put(&e, &in);
    in.number++;
    prof__ss_enc_put(&e, &in);
    in.number--;
    prof__buf pl = {0};
    prof__ss_hdr h = {.max_bytes = 1 << 20};
    prof__ss_payload(&pl, &e, &h);
    prof__ss_iter it;
    prof__ss_rec out;
    assert_int_equal(prof__ss_open(&it, pl.p, pl.len), 0);
    assert_int_equal(it.h.level, level);
    assert_int_equal(prof__ss_next(&it, &out), 1);
    assert_int_equal(out.number, 7);
    assert_int_equal(out.tid, 3);
    double tol = level ? 1.0 / (double)(1u << prof__ss_level_sig(level)) : 0;
    assert_true((double)(out.dur_us > in.dur_us ? out.dur_us - in.dur_us : in.dur_us - out.dur_us) <=
                tol * (double)in.dur_us);
    assert_true(in.begin_us - out.begin_us < (1ull << prof__ss_level_shift(level)));
    if (!level) assert_memory_equal(out.bd_us, in.bd_us, sizeof in.bd_us);
    assert_int_equal(prof__ss_next(&it, &out), 1);
    assert_int_equal(out.number, 8);
    assert_int_equal(prof__ss_next(&it, &out), 0);
    /* A cut payload is refused, never read past. */
    prof__ss_iter bad;
    prof__ss_rec x;
    int q = prof__ss_open(&bad, pl.p, pl.len - 1);
    while (q >= 0 && (q = prof__ss_next(&bad, &x)) == 1) {}
    assert_int_equal(q, -1);
    prof__buf_free(&pl);
    prof__ss_enc_free(&e);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bounded_trace_keeps_every_step),
      cmocka_unit_test(summary_codec_rounds_by_level),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
