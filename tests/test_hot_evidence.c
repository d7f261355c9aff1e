/* test_hot_evidence.c — the hot_function finding follows its evidence, on
 * hand-built traces whose stacks point at functions of this program (so the
 * analyzer names them): a share from few samples is "low", "high" needs many
 * samples; functions of one family (gemm_nn, gemm_nt, gemm_tn) that are hot
 * together are one finding summing them, with advice that fits a matrix
 * kernel; and the text report has no "advice=generic" detail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "test_html_util.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

#define T0 1000000000ull
#define US 1000ull

volatile int he_sink;
__attribute__((noinline)) void gemm_nn(void) { for (int i = 0; i < 3; i++) he_sink += i; }
__attribute__((noinline)) void gemm_nt(void) { for (int i = 0; i < 3; i++) he_sink += i * 2; }
__attribute__((noinline)) void gemm_tn(void) { for (int i = 0; i < 3; i++) he_sink += i * 3; }
__attribute__((noinline)) void he_other(void) { for (int i = 0; i < 3; i++) he_sink += i * 4; }
__attribute__((noinline)) void he_root(void) { for (int i = 0; i < 3; i++) he_sink += i * 5; }

static uintptr_t pc_in(void (*fn)(void)) { return (uintptr_t)fn + 4; }

/* Stacks 1..4: gemm_nn, gemm_nt, gemm_tn, he_other, each under he_root. */
static void stacks_chunk(prof__tw *w) {
  void (*leaf[4])(void) = {gemm_nn, gemm_nt, gemm_tn, he_other};
  prof__buf b = {0};
  prof__buf_varint(&b, 4);
  for (int i = 0; i < 4; i++) {
    prof__buf_varint(&b, (uint64_t)i + 1);
    prof__buf_varint(&b, 2);
    prof__buf_svarint(&b, (int64_t)pc_in(leaf[i]));
    prof__buf_svarint(&b, (int64_t)(pc_in(he_root) - pc_in(leaf[i])));
  }
  assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_STACKS, b.p, b.len), 0);
  prof__buf_free(&b);
}

/* One step holding `n` samples spread over the stacks by `share` (per
 * mille of stacks 1..4). */
static const char *trace_of(const char *stem, int n, const int share[4]) {
  char err[256];
  prof__kv hdr[] = {{"program", "he-train"}, {"pid", "7"}, {"cpu.sample_hz", "1000"}};
  const char *path = th_tmp_path(stem, ".mlpt");
  prof__tw *w = prof__tw_open(path, hdr, 3, err);
  if (!w) fail_msg("%s", err);
  modules_chunk(w);
  stacks_chunk(w);
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  for (int i = 0; i < n; i++) {
    int r = (int)((long)i * 1000 / n), stack = 4;
    for (int k = 0, acc = 0; k < 4; k++)
      if (r < (acc += share[k])) {
        stack = k + 1;
        break;
      }
    put(w, 1, T0 + (uint64_t)(i + 1) * US, PROF_EV_SAMPLE, (uint32_t)stack, 0, 0, 1);
  }
  put(w, 1, T0 + (uint64_t)(n + 2) * US, PROF_EV_STEP_END, 0, 0, 0, 0);
  return close_trace(w, path);
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  return an;
}

static const prof__finding *hot(const prof__an *an) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (!strcmp(an->findings[i].id, "hot_function")) return &an->findings[i];
  return NULL;
}

/* 60 % in gemm_nn: "low" from 40 samples, "high" from 1000. */
static void severity_follows_the_sample_count(void **state) {
  (void)state;
  const int one[4] = {600, 0, 0, 400};
  prof__an *few = analyze(trace_of("he-few", 40, one)), *many = analyze(trace_of("he-many", 1000, one));
  assert_non_null(hot(few));
  assert_non_null(hot(many));
  assert_string_equal(hot(few)->severity, "low");
  assert_string_equal(hot(many)->severity, "high");
  /* its saving is an upper bound: the self time per step, capped at the step */
  assert_true(hot(many)->has_saving);
  assert_true(hot(many)->saving_ns > 0 && hot(many)->saving_ns <= many->step_stats.mean_ns);
  assert_non_null(strstr(hot(many)->saving_model, "upper bound"));
  prof__an_free(few);
  prof__an_free(many);
}

/* 25 % + 25 % + 25 % in gemm_*: the family holds more than any single
 * function (he_other, 25 %), so it is the hot spot. */
static void a_hot_family_is_summed(void **state) {
  (void)state;
  const int fam[4] = {250, 250, 250, 250};
  prof__an *an = analyze(trace_of("he-family", 1000, fam));
  const prof__finding *f = hot(an);
  assert_non_null(f);
  assert_non_null(strstr(f->title, "gemm_*"));
  assert_non_null(strstr(f->title, "75%"));
  assert_non_null(strstr(f->measured, "gemm_nt"));
  assert_non_null(strstr(f->recommendation, "cblas_sgemm"));
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", out), 0);
  fclose(out);
  assert_non_null(strstr(text, "advice=matrix_kernel"));
  assert_null(strstr(text, "advice=generic"));
  free(text);
  prof__an_free(an);
}

/* he_other is hot alone (generic advice): no "advice=generic" detail. */
static void generic_advice_is_not_a_detail(void **state) {
  (void)state;
  const int other[4] = {0, 0, 0, 1000};
  prof__an *an = analyze(trace_of("he-generic", 500, other));
  assert_non_null(hot(an));
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", out), 0);
  fclose(out);
  assert_non_null(strstr(text, "he_other"));
  assert_null(strstr(text, "advice=generic"));
  free(text);
  prof__an_free(an);
}

/* CPU outside every step (evaluation, start-up) is named and measured, and
 * samples outside every range are "Outside every range", not "(none)". */
static void cpu_outside_steps_is_named_with_its_share(void **state) {
  (void)state;
  char err[256];
  prof__kv hdr[] = {{"program", "he-train"}, {"pid", "7"}, {"cpu.sample_hz", "1000"}};
  const char *path = th_tmp_path("he-outside", ".mlpt");
  prof__tw *w = prof__tw_open(path, hdr, 3, err);
  if (!w) fail_msg("%s", err);
  modules_chunk(w);
  stacks_chunk(w);
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  for (int i = 0; i < 100; i++) put(w, 1, T0 + (uint64_t)(i + 1) * US, PROF_EV_SAMPLE, 1, 0, 0, 1);
  put(w, 1, T0 + 200 * US, PROF_EV_STEP_END, 0, 0, 0, 0);
  for (int i = 0; i < 300; i++) put(w, 1, T0 + (uint64_t)(300 + i) * US, PROF_EV_SAMPLE, 4, 0, 0, 1);
  prof__an *an = analyze(close_trace(w, path));
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", out), 0);
  fclose(out);
  assert_non_null(strstr(text, "Outside steps: 75.0% of the CPU samples"));
  assert_non_null(strstr(text, "Outside every range (100%)"));
  assert_null(strstr(text, "(none)"));
  free(text);
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(severity_follows_the_sample_count),
      cmocka_unit_test(a_hot_family_is_summed),
      cmocka_unit_test(generic_advice_is_not_a_detail),
      cmocka_unit_test(cpu_outside_steps_is_named_with_its_share),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
