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

#include "analyze/analyze.h"
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
    ts += 100000;
    assert_int_equal(prof__tw_events(w, 42, ev, 4), 0);
    if (s % 100 == 99) {
      prof__tw_bound_cycle(w); /* the writer's hooks ran (they record no memory here) */
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
  /* No memory readings: a step is held two writer cycles for them
   * (PROF_SS_NOMEM_CYCLES), the last ones until the close. */
  assert_true(steps <= STEPS && steps >= STEPS - 200);
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

/* |a - b| <= tol * b */
static int near(uint64_t a, uint64_t b, double tol) {
  return (double)(a > b ? a - b : b - a) <= tol * (double)b;
}

/* Version 2: CPU time and memory peaks round-trip exactly at level 0 and
 * within the level's precision above; records without them stay without;
 * the memory deltas survive a record in between that lacks them. */
static void summary_codec_v2_fields(void **state) {
  (void)state;
  prof__ss_rec in[4] = {
      {.number = 1, .tid = 3, .begin_us = 1000, .dur_us = 900, .have = PROF_SS_HAS_ALL, .cpu_us = 777,
       .rss_bytes = 512ull << 20, .live_bytes = 123456789},
      {.number = 2, .tid = 3, .begin_us = 2000, .dur_us = 900}, /* none of them */
      {.number = 3, .tid = 3, .begin_us = 3000, .dur_us = 200000, .have = PROF_SS_HAS_CPU | PROF_SS_HAS_RSS,
       .cpu_us = 123457, .rss_bytes = (512ull << 20) - 4096},
      {.number = 4, .tid = 4, .begin_us = 4000, .dur_us = 900, .have = PROF_SS_HAS_LIVE, .live_bytes = 5},
  };
  for (unsigned level = 0; level < PROF_SS_LEVELS; level++) {
    prof__ss_enc e = {0};
    prof__ss_enc_reset(&e, level);
    for (int i = 0; i < 4; i++) prof__ss_enc_put(&e, &in[i]);
    prof__buf pl = {0};
    prof__ss_hdr h = {0};
    prof__ss_payload(&pl, &e, &h);
    assert_int_equal(pl.p[0], 2); /* the version written */
    prof__ss_iter it;
    prof__ss_rec out;
    assert_int_equal(prof__ss_open(&it, pl.p, pl.len), 0);
    double tol = level ? 1.0 / (double)(1u << prof__ss_level_sig(level)) : 0;
    for (int i = 0; i < 4; i++) {
      assert_int_equal(prof__ss_next(&it, &out), 1);
      assert_int_equal(out.number, in[i].number);
      assert_int_equal(out.have, in[i].have);
      if (in[i].have & PROF_SS_HAS_CPU) assert_true(near(out.cpu_us, in[i].cpu_us, tol));
      if (in[i].have & PROF_SS_HAS_RSS) assert_true(near(out.rss_bytes, in[i].rss_bytes, tol));
      if (in[i].have & PROF_SS_HAS_LIVE) assert_true(near(out.live_bytes, in[i].live_bytes, tol));
      if (!level) {
        assert_int_equal(out.cpu_us, in[i].cpu_us);
        assert_int_equal(out.rss_bytes, in[i].rss_bytes);
        assert_int_equal(out.live_bytes, in[i].live_bytes);
      }
    }
    assert_int_equal(prof__ss_next(&it, &out), 0);
    /* reserved bits of the optional fields' byte are refused */
    prof__ss_iter bad;
    size_t first = pl.len - e.b.len; /* the first record's flags, then its fields byte */
    assert_true(pl.p[first] & 0x80);
    pl.p[first + 1] |= 0x40;
    assert_int_equal(prof__ss_open(&bad, pl.p, pl.len), 0);
    assert_int_equal(prof__ss_next(&bad, &out), -1);
    prof__buf_free(&pl);
    prof__ss_enc_free(&e);
  }
}

/* A step's CPU time stays within its length at every level, or no
 * further above it than it was: the two are rounded apart, so a thread
 * busy for the whole step (CPU a microsecond or two under or over the
 * length) came out up to 4 us above it at level 1. */
static void summary_codec_cpu_within_length(void **state) {
  (void)state;
  for (unsigned level = 0; level < PROF_SS_LEVELS; level++) {
    prof__ss_enc e = {0};
    prof__ss_enc_reset(&e, level);
    uint64_t n = 0;
    for (uint64_t dur = 100; dur < 20000; dur += 7)
      for (uint64_t k = 0; k < 5; k++) {
        n++;
        prof__ss_rec in = {.number = n, .tid = 1, .begin_us = n * 30000, .dur_us = dur, .have = PROF_SS_HAS_CPU,
                           .cpu_us = dur + k - 2};
        prof__ss_enc_put(&e, &in);
      }
    prof__buf pl = {0};
    prof__ss_hdr h = {0};
    prof__ss_payload(&pl, &e, &h);
    prof__ss_iter it;
    prof__ss_rec out;
    assert_int_equal(prof__ss_open(&it, pl.p, pl.len), 0);
    uint64_t seen = 0, over = 0;
    while (prof__ss_next(&it, &out) == 1) {
      uint64_t k = (out.number - 1) % 5, above = k > 2 ? k - 2 : 0; /* how far the CPU was above */
      seen++;
      if (out.cpu_us > out.dur_us + above) over++;
    }
    assert_int_equal(seen, n);
    assert_int_equal(over, 0);
    prof__buf_free(&pl);
    prof__ss_enc_free(&e);
  }
}

/* A version 1 payload, byte by byte as version 1 writers made it, still
 * reads (without the optional fields); the fields' flag bit is refused in it. */
static void summary_codec_reads_v1(void **state) {
  (void)state;
  prof__buf b = {0};
  prof__buf_u8(&b, 1);          /* version */
  prof__buf_varint(&b, 0);      /* level */
  prof__buf_varint(&b, 1 << 20); /* max_bytes */
  prof__buf_varint(&b, 10);     /* dropped bytes */
  prof__buf_varint(&b, 1);      /* dropped chunks */
  prof__buf_varint(&b, 2);      /* compactions */
  prof__buf_varint(&b, 2);      /* count */
  prof__buf_u8(&b, 0x01 | 0x02); /* tid follows, bucket 0 */
  prof__buf_varint(&b, 9);      /* tid */
  prof__buf_svarint(&b, 41);    /* number: 41 - (UINT64_MAX + 1) */
  prof__buf_svarint(&b, 5000);  /* begin */
  prof__buf_varint(&b, 700);    /* duration */
  prof__buf_varint(&b, 600);    /* compute */
  prof__buf_u8(&b, 0);          /* same thread, no buckets */
  prof__buf_svarint(&b, 0);     /* number 42 */
  prof__buf_svarint(&b, 1000);  /* begin 6000 */
  prof__buf_varint(&b, 800);
  prof__ss_iter it;
  prof__ss_rec r;
  assert_int_equal(prof__ss_open(&it, b.p, b.len), 0);
  assert_int_equal(it.h.compactions, 2);
  assert_int_equal(prof__ss_next(&it, &r), 1);
  assert_int_equal(r.number, 41);
  assert_int_equal(r.tid, 9);
  assert_int_equal(r.begin_us, 5000);
  assert_int_equal(r.dur_us, 700);
  assert_int_equal(r.bd_us[0], 600);
  assert_int_equal(r.have, 0);
  assert_int_equal(prof__ss_next(&it, &r), 1);
  assert_int_equal(r.number, 42);
  assert_int_equal(r.begin_us, 6000);
  assert_int_equal(r.have, 0);
  assert_int_equal(prof__ss_next(&it, &r), 0);
  /* the second record's flags with the version 2 bit: not in version 1 */
  size_t second = b.len - 6; /* flags, number (1 byte), begin and duration (2 each) */
  assert_int_equal(b.p[second], 0);
  b.p[second] = 0x80;
  assert_int_equal(prof__ss_open(&it, b.p, b.len), 0);
  assert_int_equal(prof__ss_next(&it, &r), 1);
  assert_int_equal(prof__ss_next(&it, &r), -1);
  prof__buf_free(&b);
}

/* The summariser reads the step thread's CPU clock around each step and the
 * process's RSS (on another thread, arriving after the steps it covers);
 * the summaries carry both, and the last steps too (held to the end). */
#define CSTEPS 1000
static void summaries_carry_cpu_and_memory(void **state) {
  (void)state;
  char path[] = MLPROF_TEST_TMP "/long_runs_cpu_mem.mlpt";
  unlink(path);
  prof__kv kv[] = {{"program", "test"}};
  int taken;
  char err[PROF_ERR_MAX];
  prof__tw *w = prof__tw_create(path, kv, 1, &taken, err);
  assert_non_null(w);
  assert_int_equal(prof__tw_bound(w, path, BOUND), 0);
  assert_int_equal(prof__tw_string(w, 2, "cpuctr/cpu_ns", 13), 0);
  assert_int_equal(prof__tw_string(w, 3, "mem.rss_bytes", 13), 0);
  uint64_t ts = 1000000;
  double cpu = 1e9;
  for (uint64_t s = 0; s < CSTEPS; s++) {
    prof__event ev[5];
    memset(ev, 0, sizeof ev);
    ev[0] = (prof__event){.type = PROF_EV_COUNTER, .cat = 1, .name = 2, .a = prof__f64_bits(cpu), .ts = ts};
    ev[1] = (prof__event){.type = PROF_EV_STEP_BEGIN, .a = s, .ts = ts + 10};
    ev[2] = (prof__event){.type = PROF_EV_STEP_END, .a = s, .ts = ts + 9000};
    cpu += 1000.0 * (double)(s % 7 + 1); /* s % 7 + 1 microseconds */
    ev[3] = (prof__event){.type = PROF_EV_COUNTER, .cat = 1, .name = 2, .a = prof__f64_bits(cpu), .ts = ts + 9010};
    /* a periodic (unmarked) reading between steps: never a boundary */
    ev[4] = (prof__event){.type = PROF_EV_COUNTER, .name = 2, .a = prof__f64_bits(cpu + 5e6), .ts = ts + 9500};
    assert_int_equal(prof__tw_events(w, 42, ev, 5), 0);
    ts += 20000;
    if (s % 100 == 99) { /* the writer's memory reading, then its flush */
      prof__event m = {.type = PROF_EV_COUNTER, .name = 3, .a = prof__f64_bits((double)((1 + s) << 20)), .ts = ts};
      assert_int_equal(prof__tw_events(w, 7, &m, 1), 0);
      assert_int_equal(prof__tw_flush(w), 0);
    }
  }
  /* the last steps: a CPU end reading never came for none, no memory
   * reading after them: they go out at the close */
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  unsigned char *seen = calloc(CSTEPS, 1);
  prof__rec rec;
  size_t with_rss = 0;
  while (prof__reader_next(r, &rec) == 1) {
    if (rec.kind != PROF_REC_CHUNK || rec.chunk_type != PROF_CHUNK_STEPSUM) continue;
    prof__ss_iter it;
    prof__ss_rec x;
    assert_int_equal(prof__ss_open(&it, rec.data, rec.len), 0);
    int q;
    while ((q = prof__ss_next(&it, &x)) == 1) {
      assert_true(x.number < CSTEPS);
      seen[x.number] = 1;
      assert_true(x.have & PROF_SS_HAS_CPU);
      uint64_t want = x.number % 7 + 1;
      if (it.h.level == 0) assert_int_equal(x.cpu_us, want);
      else assert_true(near(x.cpu_us, want, 0.5));
      /* the reading in effect (before it); before the first, the first */
      assert_true(x.have & PROF_SS_HAS_RSS);
      uint64_t in_effect = x.number < 100 ? 100 : x.number / 100 * 100;
      assert_int_equal(x.rss_bytes, in_effect << 20);
      with_rss++;
    }
    assert_int_equal(q, 0);
  }
  for (uint64_t s = 0; s < CSTEPS; s++) assert_true(seen[s]);
  assert_int_equal(with_rss, CSTEPS);
  free(seen);
  prof__reader_close(r);
  unlink(path);
}

/* The summariser (writer) and the analyzer (detail steps) apply the same
 * rules: a trace whose bound keeps every step in detail has summaries that
 * agree with the analyzer's steps on CPU time, peak RSS (readings arriving
 * after the steps, some inside a step, going up and down) and peak live
 * heap (a reading at every step end), step by step. */
#define ASTEPS 2000
static void summaries_agree_with_detail(void **state) {
  (void)state;
  char path[] = MLPROF_TEST_TMP "/long_runs_agree.mlpt";
  unlink(path);
  prof__kv kv[] = {{"program", "test"}};
  int taken;
  char err[PROF_ERR_MAX];
  prof__tw *w = prof__tw_create(path, kv, 1, &taken, err);
  assert_non_null(w);
  assert_int_equal(prof__tw_bound(w, path, 64u << 20), 0);
  assert_int_equal(prof__tw_string(w, 2, "cpuctr/cpu_ns", 13), 0);
  assert_int_equal(prof__tw_string(w, 3, "mem.rss_bytes", 13), 0);
  assert_int_equal(prof__tw_string(w, 4, "mem.live_bytes", 14), 0);
  assert_int_equal(prof__tw_string(w, 5, "work", 4), 0);
  uint64_t ts = 5000000;
  double cpu = 3e9;
  prof__event mem[2 * ASTEPS];
  size_t nmem = 0;
  uint32_t rnd = 1;
  for (uint64_t s = 0; s < ASTEPS; s++) {
    rnd = rnd * 1103515245u + 12345u;
    uint64_t dur = 5000 + (rnd >> 16) % 40000;
    prof__event ev[6];
    memset(ev, 0, sizeof ev);
    ev[0] = (prof__event){.type = PROF_EV_COUNTER, .cat = 1, .name = 2, .a = prof__f64_bits(cpu), .ts = ts};
    ev[1] = (prof__event){.type = PROF_EV_STEP_BEGIN, .a = s, .ts = ts + 100};
    ev[2] = (prof__event){.type = PROF_EV_RANGE_BEGIN, .name = 5, .cat = 0, .ts = ts + 200};
    ev[3] = (prof__event){.type = PROF_EV_RANGE_END, .name = 5, .ts = ts + dur / 2};
    ev[4] = (prof__event){.type = PROF_EV_STEP_END, .a = s, .ts = ts + dur};
    cpu += (double)(dur - (rnd >> 20) % 3000);
    ev[5] = (prof__event){.type = PROF_EV_COUNTER, .cat = 1, .name = 2, .a = prof__f64_bits(cpu), .ts = ts + dur + 50};
    assert_int_equal(prof__tw_events(w, 42, ev, 6), 0);
    /* the live heap at the step end; now and then the RSS inside the step */
    mem[nmem++] = (prof__event){.type = PROF_EV_COUNTER, .name = 4, .a = prof__f64_bits((double)(1000 + (rnd >> 8) % 5000)),
                                .ts = ts + dur};
    if (s % 7 == 3)
      mem[nmem++] = (prof__event){.type = PROF_EV_COUNTER, .name = 3,
                                  .a = prof__f64_bits((double)((64 + (rnd >> 24) % 32) << 20)), .ts = ts + dur / 3};
    ts += dur + 1000;
    if (s % 100 == 99) { /* the writer's memory hook, then its flush */
      assert_int_equal(prof__tw_events(w, 7, mem, nmem), 0);
      nmem = 0;
      assert_int_equal(prof__tw_flush(w), 0);
    }
  }
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);

  prof__ss_rec *sum = calloc(ASTEPS, sizeof *sum);
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  while (prof__reader_next(r, &rec) == 1) {
    if (rec.kind != PROF_REC_CHUNK || rec.chunk_type != PROF_CHUNK_STEPSUM) continue;
    prof__ss_iter it;
    prof__ss_rec x;
    assert_int_equal(prof__ss_open(&it, rec.data, rec.len), 0);
    assert_int_equal(it.h.level, 0);
    while (prof__ss_next(&it, &x) == 1) {
      assert_true(x.number < ASTEPS);
      sum[x.number] = x;
    }
  }
  prof__reader_close(r);
  prof__an *an = NULL;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  assert_int_equal(an->nsteps, ASTEPS);
  for (size_t i = 0; i < an->nsteps; i++) {
    const prof__step *d = &an->steps[i];
    const prof__ss_rec *x = &sum[d->number];
    assert_int_equal(x->number, d->number);
    assert_int_equal(d->have, PROF_STEP_HAS_CPU | PROF_STEP_HAS_RSS | PROF_STEP_HAS_LIVE);
    assert_int_equal(x->have, d->have);
    assert_true(x->cpu_us * 1000 + 500 >= d->cpu_ns && x->cpu_us * 1000 <= d->cpu_ns + 500);
    assert_int_equal(x->rss_bytes, d->rss_peak_bytes);
    assert_int_equal(x->live_bytes, d->live_peak_bytes);
  }
  prof__an_free(an);
  free(sum);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bounded_trace_keeps_every_step),
      cmocka_unit_test(summary_codec_rounds_by_level),
      cmocka_unit_test(summary_codec_v2_fields),
      cmocka_unit_test(summary_codec_cpu_within_length),
      cmocka_unit_test(summary_codec_reads_v1),
      cmocka_unit_test(summaries_carry_cpu_and_memory),
      cmocka_unit_test(summaries_agree_with_detail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
