/* test_savings.c — predicted savings on hand-built traces: each model gives
 * the saving the trace was built to have (input-bound overlap, a wait for a
 * loader that already overlaps, a lock held by another thread, periodic
 * slow steps among stray ones, rare outliers); findings with a saving come
 * first, largest first; the JSON keys, the report headlines and `mlprof
 * diff`'s prediction against the realised drop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/diff/diff.h"
#include "analyze/engine/an_internal.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/event.h"
#include "trace/trace.h"

#define MS 1000000ull
enum { STEP_TID = 7, LOADER_TID = 8, WRITER_TID = 9 };
enum { S_LOAD = 1, S_FWD, S_NEXT, S_PUBLISH, S_FLUSH, S_CKPT, S_STALL };

typedef struct tb {
  prof__tw *w;
  const char *path;
  uint64_t now;
} tb;

/* A trace with the test's names; sampling: the CPU sampling header (1 kHz). */
static void tb_open(tb *t, const char *stem, int sampling) {
  char err[256];
  memset(t, 0, sizeof *t);
  t->path = th_tmp_path(stem, ".mlpt");
  prof__kv hdr[] = {{"program", "savings-test"}, {"pid", "1"}, {"cpu.sample_hz", "1000"}, {"cpu.sample_mode", "cpu"}};
  t->w = prof__tw_open(t->path, hdr, sampling ? 4 : 2, err);
  if (!t->w) fail_msg("%s", err);
  static const char *const names[] = {"load", "forward", "next_batch", "publish", "flush", "checkpoint", "stall"};
  for (uint32_t i = 0; i < 7; i++) assert_int_equal(prof__tw_string(t->w, i + 1, names[i], strlen(names[i])), 0);
  t->now = 1000 * MS;
}

static void ev(tb *t, uint32_t tid, uint64_t ts, int type, uint32_t name, uint8_t cat, uint64_t a) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .cat = cat, .name = name, .a = a};
  assert_int_equal(prof__tw_events(t->w, tid, &e, 1), 0);
}

static void range(tb *t, uint32_t tid, uint64_t b, uint64_t e, uint32_t name, uint8_t cat) {
  ev(t, tid, b, PROF_EV_RANGE_BEGIN, name, cat, 0);
  ev(t, tid, e, PROF_EV_RANGE_END, name, cat, 0);
}

/* CPU samples every ms of [b, e) on tid, in range `name`. */
static void samples(tb *t, uint32_t tid, uint64_t b, uint64_t e, uint32_t name) {
  for (uint64_t ts = b + MS / 2; ts < e; ts += MS) {
    prof__event s = {.ts = ts, .type = PROF_EV_SAMPLE, .name = 0, .a = name, .b = 1, .aux = 0};
    assert_int_equal(prof__tw_events(t->w, tid, &s, 1), 0);
  }
}

static const char *tb_close(tb *t) {
  assert_int_equal(prof__tw_close(t->w, NULL, 0), 0);
  return t->path;
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, path, 1, err)) fail_msg("%s", err);
  return an;
}

static const prof__finding *find(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (!strcmp(an->findings[i].id, id)) return &an->findings[i];
  return NULL;
}

static const char *key_str(const prof__finding *f, const char *key) {
  for (int k = 0; k < f->nkeys; k++)
    if (!f->keys[k].is_num && !strcmp(f->keys[k].key, key)) return f->keys[k].str;
  return NULL;
}

static char *report(prof__an *an, const char *format) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  assert_int_equal(prof__report_write(an, format, out), 0);
  fclose(out);
  return text;
}

/* `n` steps: inline loading `data` ms, then compute `comp` ms. */
static const char *inline_input(const char *stem, int n, uint64_t data, uint64_t comp) {
  tb t;
  tb_open(&t, stem, 0);
  for (int i = 0; i < n; i++) {
    uint64_t b = t.now;
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    if (data) range(&t, STEP_TID, b, b + data * MS, S_LOAD, PROF_CAT_DATA);
    range(&t, STEP_TID, b + data * MS, b + (data + comp) * MS, S_FWD, PROF_CAT_COMPUTE);
    t.now = b + (data + comp) * MS;
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 100000;
  }
  return tb_close(&t);
}

/* ---- models ---------------------------------------------------------------- */

/* Loading 4 ms inline before 6 ms of compute: overlapped, each step takes
 * max(4, 6) = 6 ms: 4 ms saved of a 10 ms step. */
static void input_bound_predicts_the_overlap(void **state) {
  (void)state;
  prof__an *an = analyze(inline_input("sv-input", 30, 4, 6));
  const prof__finding *f = find(an, "input_bound");
  assert_non_null(f);
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 4 * MS);
  assert_true(fabs(f->saving_pct - 40.0) < 1e-6);
  assert_non_null(strstr(f->saving_model, "max(data, rest)"));
  assert_string_equal(prof__an_confidence_label(f->saving_conf), "medium"); /* 30 steps */
  assert_ptr_equal(f, &an->findings[0]);
  prof__an_free(an);
}

/* The step thread waits 6 ms in next_batch while the loader thread runs
 * load_batch: loading already overlaps, so the saving is the wait (6 ms),
 * not min(data, rest) (4 ms), and the loader is named. */
static void input_wait_for_a_loader_is_attributed(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "sv-loader", 1);
  assert_int_equal(prof__tw_thread(t.w, LOADER_TID, "loader", 0, 0), 0);
  for (int i = 0; i < 30; i++) {
    uint64_t b = t.now;
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    range(&t, STEP_TID, b, b + 6 * MS, S_NEXT, PROF_CAT_DATA);
    range(&t, LOADER_TID, b - MS, b + 6 * MS, S_LOAD, PROF_CAT_DATA);
    range(&t, STEP_TID, b + 6 * MS, b + 10 * MS, S_FWD, PROF_CAT_COMPUTE);
    samples(&t, STEP_TID, b + 6 * MS, b + 10 * MS, S_FWD);
    t.now = b + 10 * MS;
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 2 * MS;
  }
  prof__an *an = analyze(tb_close(&t));
  const prof__finding *f = find(an, "input_bound");
  assert_non_null(f);
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 6 * MS);
  assert_non_null(strstr(f->saving_model, "already overlaps"));
  assert_non_null(strstr(f->saving_model, "'loader'"));
  assert_string_equal(key_str(f, "waits_for_thread"), "loader");
  assert_string_equal(key_str(f, "waits_for_range"), "load");
  prof__an_free(an);
}

/* A lock wait: 3 ms of compute (on a CPU), then 5 ms in publish with no
 * CPU sample while the writer thread sits in flush. */
static const char *lock_trace(const char *stem, int sampling, int spin) {
  tb t;
  tb_open(&t, stem, sampling);
  assert_int_equal(prof__tw_thread(t.w, WRITER_TID, "writer", 0, 0), 0);
  for (int i = 0; i < 30; i++) {
    uint64_t b = t.now;
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    range(&t, STEP_TID, b, b + 3 * MS, S_FWD, PROF_CAT_COMPUTE);
    samples(&t, STEP_TID, b, b + 3 * MS, S_FWD);
    range(&t, STEP_TID, b + 3 * MS, b + 8 * MS, S_PUBLISH, PROF_CAT_OTHER);
    if (spin) samples(&t, STEP_TID, b + 3 * MS, b + 8 * MS, S_PUBLISH);
    range(&t, WRITER_TID, b, b + 8 * MS, S_FLUSH, PROF_CAT_IO);
    t.now = b + 8 * MS;
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 100000;
  }
  return tb_close(&t);
}

static void a_lock_wait_names_the_holder(void **state) {
  (void)state;
  prof__an *an = analyze(lock_trace("sv-lock", 1, 0));
  const prof__finding *f = find(an, "step_wait");
  assert_non_null(f);
  assert_string_equal(f->severity, "high");
  assert_string_equal(key_str(f, "phase"), "publish");
  assert_string_equal(key_str(f, "waits_for_thread"), "writer");
  assert_string_equal(key_str(f, "waits_for_range"), "flush");
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 5 * MS);
  assert_non_null(strstr(f->title, "'writer'"));
  assert_non_null(strstr(f->saving_model, "off-CPU"));
  prof__an_free(an);
}

/* Without CPU sampling nothing says the thread was off-CPU; a thread that
 * spins in publish (samples there) is not waiting. */
static void no_wait_without_evidence_of_it(void **state) {
  (void)state;
  prof__an *an = analyze(lock_trace("sv-nosampling", 0, 0));
  assert_null(find(an, "step_wait"));
  prof__an_free(an);
  an = analyze(lock_trace("sv-spin", 1, 1));
  assert_null(find(an, "step_wait"));
  prof__an_free(an);
}

/* 100 steps of 10 ms; every 10th step checkpoints 40 ms more; three stray
 * steps are 6 ms slower (a busy machine). The period is still found and
 * the saving is the checkpoints' time spread over the steps: 4 ms. */
static void periodic_work_among_stray_slow_steps(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "sv-periodic", 0);
  for (int i = 0; i < 100; i++) {
    uint64_t b = t.now, d = 10 * MS + (i == 13 || i == 44 || i == 71 ? 6 * MS : 0);
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    range(&t, STEP_TID, b, b + d, S_FWD, PROF_CAT_COMPUTE);
    t.now = b + d;
    if (i % 10 == 9) {
      range(&t, STEP_TID, t.now, t.now + 40 * MS, S_CKPT, PROF_CAT_IO);
      t.now += 40 * MS;
    }
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 100000;
  }
  prof__an *an = analyze(tb_close(&t));
  const prof__finding *f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_true(f->value == 10);
  assert_string_equal(key_str(f, "phase"), "checkpoint");
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 4 * MS);
  assert_null(find(an, "step_wait")); /* a spike every 10 steps is not a per-step wait */
  prof__an_free(an);
}

/* Three 100 ms stalls in 100 steps of 10 ms: 3 ms per step. */
static void outliers_predict_their_excess(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "sv-outliers", 0);
  for (int i = 0; i < 100; i++) {
    uint64_t b = t.now;
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    range(&t, STEP_TID, b, b + 10 * MS, S_FWD, PROF_CAT_COMPUTE);
    t.now = b + 10 * MS;
    if (i == 17 || i == 52 || i == 60) {
      range(&t, STEP_TID, t.now, t.now + 100 * MS, S_STALL, PROF_CAT_OTHER);
      t.now += 100 * MS;
    }
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 100000;
  }
  prof__an *an = analyze(tb_close(&t));
  const prof__finding *f = find(an, "slow_step_outliers");
  assert_non_null(f);
  assert_true(f->has_saving);
  assert_int_equal(f->saving_ns, 3 * MS);
  assert_string_equal(prof__an_confidence_label(f->saving_conf), "low"); /* three outliers */
  prof__an_free(an);
}

/* ---- ranking, keys, reports ------------------------------------------------- */

static void findings_with_savings_come_first(void **state) {
  (void)state;
  prof__an *an = analyze(inline_input("sv-sort", 30, 4, 6));
  size_t base = an->nfindings;
  prof__an_finding(an, "health_a", "high", 1, "a", "m", "r");
  prof__an_finding(an, "perf_small", "low", 1, "b", "m", "r");
  prof__an_finding_saving(an, 1 * MS, 0.9, "small");
  prof__an_finding(an, "health_b", "info", 1, "c", "m", "r");
  prof__an_finding(an, "perf_big", "info", 1, "d", "m", "r");
  prof__an_finding_saving(an, 5 * MS, 0.9, "big %d", 5);
  prof__an_finding(an, "health_c", "medium", 1, "e", "m", "r");
  prof__findings_sort(an);
  const char *want[] = {"perf_big", "input_bound", "perf_small", "health_a", "health_c", "health_b"};
  assert_int_equal(an->nfindings, base + 5);
  for (size_t i = 0; i < 6; i++) assert_string_equal(an->findings[i].id, want[i]);
  assert_string_equal(an->findings[0].saving_model, "big 5");
  prof__an_free(an);
}

static void json_and_reports_carry_the_savings(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "sv-json", 0);
  for (int i = 0; i < 30; i++) {
    uint64_t b = t.now;
    ev(&t, STEP_TID, b, PROF_EV_STEP_BEGIN, 0, 0, (uint64_t)i);
    range(&t, STEP_TID, b, b + 4 * MS, S_LOAD, PROF_CAT_DATA);
    range(&t, STEP_TID, b + 4 * MS, b + 10 * MS, S_FWD, PROF_CAT_COMPUTE);
    t.now = b + 10 * MS;
    ev(&t, STEP_TID, t.now, PROF_EV_STEP_END, 0, 0, (uint64_t)i);
    t.now += 100000;
  }
  ev(&t, STEP_TID, t.now, PROF_EV_RANGE_END, S_STALL, 0, 0); /* an unmatched end: api_misuse, no saving */
  prof__an *an = analyze(tb_close(&t));
  assert_non_null(find(an, "api_misuse"));
  assert_false(find(an, "api_misuse")->has_saving);
  char *json = report(an, "json");
  const char *ib = strstr(json, "\"id\": \"input_bound\""), *mis = strstr(json, "\"id\": \"api_misuse\"");
  assert_non_null(ib);
  assert_non_null(mis);
  assert_true(ib < mis);
  const char *sv = strstr(ib, "\"saving_ns\": 4000000");
  assert_non_null(sv);
  assert_true(sv < mis);
  assert_non_null(strstr(ib, "\"saving_pct\": 40"));
  assert_non_null(strstr(ib, "\"saving_model\": \"loading overlapped"));
  assert_non_null(strstr(ib, "\"saving_confidence\": \"medium\""));
  assert_null(strstr(mis, "\"saving_ns\""));
  free(json);
  char *text = report(an, "text");
  const char *head = strstr(text, "What would make steps faster"), *fnd = strstr(text, "Findings (");
  assert_non_null(head);
  assert_non_null(fnd);
  assert_true(head < fnd);
  assert_non_null(strstr(head, "  1.    4.00 ms  40.0%  medium  input_bound:"));
  assert_non_null(strstr(fnd, "saving:   4.00 ms per step (40.0%, medium confidence)"));
  free(text);
  char *html = report(an, "html");
  const char *hs = strstr(html, "id=\"savings\""), *sum = strstr(html, "id=\"summary\"");
  assert_non_null(hs);
  assert_non_null(sum);
  assert_true(hs < sum);
  assert_non_null(strstr(hs, "What would make steps faster"));
  free(html);
  prof__an_free(an);
}

static void confidence_follows_the_evidence(void **state) {
  (void)state;
  assert_true(prof__an_confidence(0, 0) == 0);
  assert_true(fabs(prof__an_confidence(100, 0) - 0.9) < 1e-9);
  assert_true(fabs(prof__an_confidence(1000, 16) - 0.75) < 1e-9); /* the fewer samples decide */
  assert_string_equal(prof__an_confidence_label(prof__an_confidence(100, 0)), "high");
  assert_string_equal(prof__an_confidence_label(prof__an_confidence(1000, 16)), "medium");
  assert_string_equal(prof__an_confidence_label(prof__an_confidence(4, 0)), "low");
}

/* ---- diff --------------------------------------------------------------------- */

static void diff_sets_the_prediction_against_the_result(void **state) {
  (void)state;
  prof__an *base = analyze(inline_input("sv-base", 30, 4, 6)), *cur = analyze(inline_input("sv-new", 30, 0, 6));
  prof__diff d;
  assert_int_equal(prof__diff_compute(&d, base, cur), 0);
  assert_int_equal(d.nsavings, 1);
  assert_string_equal(d.savings[0].id, "input_bound");
  assert_true(d.savings[0].gone);
  assert_true(fabs(d.savings[0].predicted - 4e6) < 1);
  assert_true(fabs(d.saved - 4e6) < 1);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__diff_write(&d, "text", 0, out), 0);
  fclose(out);
  assert_non_null(strstr(text, "input_bound                      predicted 4.000 ms, saved 4.000 ms (gone in NEW)"));
  free(text);
  out = open_memstream(&text, &len);
  assert_int_equal(prof__diff_write(&d, "json", 0, out), 0);
  fclose(out);
  assert_non_null(strstr(text, "\"saved_ns\": 4000000"));
  assert_non_null(strstr(text, "\"predicted_ns\": 4000000"));
  free(text);
  prof__diff_free(&d);
  /* the same run against itself: nothing was fixed */
  assert_int_equal(prof__diff_compute(&d, base, base), 0);
  assert_int_equal(d.nsavings, 0);
  prof__diff_free(&d);
  prof__an_free(base);
  prof__an_free(cur);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(input_bound_predicts_the_overlap),
      cmocka_unit_test(input_wait_for_a_loader_is_attributed),
      cmocka_unit_test(a_lock_wait_names_the_holder),
      cmocka_unit_test(no_wait_without_evidence_of_it),
      cmocka_unit_test(periodic_work_among_stray_slow_steps),
      cmocka_unit_test(outliers_predict_their_excess),
      cmocka_unit_test(findings_with_savings_come_first),
      cmocka_unit_test(json_and_reports_carry_the_savings),
      cmocka_unit_test(confidence_follows_the_evidence),
      cmocka_unit_test(diff_sets_the_prediction_against_the_result),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
