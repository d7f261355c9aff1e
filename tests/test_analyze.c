/* test_analyze.c — the analyzer's model on hand-built traces: self vs total
 * time, the innermost-wins breakdown, step statistics, warm-up detection,
 * the input-bound classes, lost events, odd and damaged traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"

enum { N_OUTER = 1, N_INNER = 2, N_LOADER = 3, N_X = 4, N_FWD = 5 };

static void names(tb *t) {
  tb_str(t, N_OUTER, "outer");
  tb_str(t, N_INNER, "inner");
  tb_str(t, N_LOADER, "loader");
  tb_str(t, N_X, "x");
  tb_str(t, N_FWD, "forward");
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  int rc = prof__an_run_opts(&an, path, 1, err);
  if (rc) fail_msg("analysis failed (%d): %s", rc, err);
  return an;
}

static const prof__range_stat *range(const prof__an *an, const char *name) {
  for (size_t i = 0; i < an->nranges; i++)
    if (strcmp(prof__an_str(an, an->ranges[i].name), name) == 0) return &an->ranges[i];
  fail_msg("no range %s", name);
  return NULL;
}

static const prof__finding *finding(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return &an->findings[i];
  return NULL;
}

/* Step 0 on thread 1 over [0, 1000): outer [100, 900) compute holds inner
 * [200, 500) data. A range x [2000, 2500) lies outside every step. */
static const char *nested_trace(void) {
  tb t = tb_open("nested");
  names(&t);
  tb_sb(&t, 1, 0, 0);
  tb_b(&t, 1, 100, N_OUTER, PROF_CAT_COMPUTE);
  tb_b(&t, 1, 200, N_INNER, PROF_CAT_DATA);
  tb_e(&t, 1, 500, N_INNER);
  tb_e(&t, 1, 900, N_OUTER);
  tb_se(&t, 1, 1000, 0);
  tb_b(&t, 1, 2000, N_X, PROF_CAT_IO);
  tb_e(&t, 1, 2500, N_X);
  return tb_close(&t, "0");
}

static void nested_ranges_split_self_and_total(void **state) {
  (void)state;
  prof__an *an = analyze(nested_trace());
  const prof__range_stat *o = range(an, "outer"), *i = range(an, "inner"), *x = range(an, "x");
  assert_int_equal(o->count, 1);
  assert_int_equal(o->total_ns, 800);
  assert_int_equal(o->self_ns, 500);
  assert_int_equal(i->total_ns, 300);
  assert_int_equal(i->self_ns, 300);
  assert_int_equal(i->cat, PROF_CAT_DATA);
  assert_int_equal(x->self_ns, 500);
  assert_int_equal(o->in_step_self_ns, 500);
  assert_int_equal(i->in_step_self_ns, 300);
  assert_int_equal(x->in_step_self_ns, 0); /* outside the step */
  assert_int_equal(an->events, 8);
  assert_int_equal(an->first_ns, 0);
  assert_int_equal(an->last_ns, 2500);
  assert_int_equal(an->truncated, 0);
  assert_int_equal(an->has_footer, 1);
  prof__an_free(an);
}

static void breakdown_innermost_wins_and_counts_untracked(void **state) {
  (void)state;
  prof__an *an = analyze(nested_trace());
  assert_int_equal(an->nsteps, 1);
  const prof__step *s = &an->steps[0];
  assert_int_equal(s->begin_ns, 0);
  assert_int_equal(s->end_ns, 1000);
  assert_int_equal(s->tid, 1);
  assert_int_equal(s->bd_ns[PROF_BD_COMPUTE], 500);   /* [100,200) + [500,900) */
  assert_int_equal(s->bd_ns[PROF_BD_DATA], 300);      /* [200,500) */
  assert_int_equal(s->bd_ns[PROF_BD_UNTRACKED], 200); /* [0,100) + [900,1000) */
  assert_int_equal(s->bd_ns[PROF_BD_IO], 0);
  uint64_t sum = 0;
  for (int b = 0; b < PROF_BD_COUNT; b++) sum += s->bd_ns[b];
  assert_int_equal(sum, 1000);
  assert_int_equal(prof__an_step_at(an, 999), 0);
  assert_int_equal(prof__an_step_at(an, 1000), -1);
  assert_int_equal(prof__an_step_total_ns(an), 1000);
  prof__an_free(an);
}

/* Steps of the given durations back to back on thread 1, each fully inside
 * one compute range. */
static const char *steps_trace(const uint64_t *dur, size_t n) {
  tb t = tb_open("steps");
  names(&t);
  uint64_t ts = 1000;
  for (size_t i = 0; i < n; i++) {
    tb_sb(&t, 1, ts, i);
    tb_b(&t, 1, ts, N_FWD, PROF_CAT_COMPUTE);
    tb_e(&t, 1, ts + dur[i], N_FWD);
    tb_se(&t, 1, ts + dur[i], i);
    ts += dur[i] + 10;
  }
  return tb_close(&t, "0");
}

static void step_stats_on_known_durations(void **state) {
  (void)state;
  const uint64_t d[] = {30000, 10000, 20000, 40000, 50000, 60000, 70000, 80000, 90000, 100000};
  prof__an *an = analyze(steps_trace(d, 10));
  const prof__step_stats *st = &an->step_stats;
  assert_int_equal(st->count, 10);
  assert_int_equal(st->total_ns, 550000);
  assert_int_equal(st->mean_ns, 55000);
  assert_int_equal(st->median_ns, 55000);
  assert_int_equal(st->p95_ns, 100000); /* nearest rank: the 10th of 10 */
  assert_int_equal(st->min_ns, 10000);
  assert_int_equal(st->max_ns, 100000);
  assert_int_equal(an->steps[0].warmup_outlier, 0);
  assert_null(finding(an, "warmup_step"));
  for (size_t i = 0; i < an->nsteps; i++) assert_int_equal(an->steps[i].number, i);
  prof__an_free(an);
}

/* The writer adds events for a thread (CPU counters, samples) in blocks of
 * their own, stamped when it reads them: such a block may be later than
 * ring events of the same thread that come after it in the file. It must
 * not shift the steps and ranges that follow. */
static void late_writer_events_do_not_shift_steps(void **state) {
  (void)state;
  tb t = tb_open("late_counter");
  tb_str(&t, 1, "work");
  tb_str(&t, 2, "cpuctr/cpu_ns");
  tb_sb(&t, 7, 1000, 0);
  tb_b(&t, 7, 1100, 1, 0);
  tb_e(&t, 7, 1900, 1);
  tb_se(&t, 7, 2000, 0);
  tb_counter(&t, 7, 9000, 2, 123.0); /* read by the writer at t=9000 */
  tb_sb(&t, 7, 2000, 1);             /* ring events pushed before that */
  tb_b(&t, 7, 2100, 1, 0);
  tb_e(&t, 7, 2600, 1);
  tb_se(&t, 7, 3000, 1);
  tb_sb(&t, 7, 9500, 2);
  tb_se(&t, 7, 9600, 2);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(an->nsteps, 3);
  assert_int_equal(an->steps[0].end_ns - an->steps[0].begin_ns, 1000);
  assert_int_equal(an->steps[1].begin_ns, 2000);
  assert_int_equal(an->steps[1].end_ns - an->steps[1].begin_ns, 1000);
  assert_int_equal(an->steps[2].end_ns - an->steps[2].begin_ns, 100);
  assert_int_equal(an->nranges, 1);
  assert_int_equal(an->ranges[0].total_ns, 800 + 500);
  prof__an_free(an);
}

static void p95_and_median_of_odd_counts(void **state) {
  (void)state;
  uint64_t d[21];
  for (size_t i = 0; i < 21; i++) d[i] = (i + 1) * 100; /* 100 .. 2100 */
  prof__an *an = analyze(steps_trace(d, 21));
  assert_int_equal(an->step_stats.median_ns, 1100);
  assert_int_equal(an->step_stats.p95_ns, 2000); /* ceil(0.95 * 21) = 20th */
  prof__an_free(an);
}

static void slow_first_step_is_a_warmup_outlier(void **state) {
  (void)state;
  const uint64_t d[] = {1000, 100, 110, 90, 100};
  prof__an *an = analyze(steps_trace(d, 5));
  assert_int_equal(an->steps[0].warmup_outlier, 1);
  assert_int_equal(an->steady_stats.count, 4);
  assert_int_equal(an->steady_stats.median_ns, 100);
  assert_int_equal(an->steady_stats.max_ns, 110);
  assert_int_equal(an->step_stats.max_ns, 1000);
  const prof__finding *f = finding(an, "warmup_step");
  assert_non_null(f);
  assert_string_equal(f->severity, "info");
  assert_true(f->value > 9.99 && f->value < 10.01);
  prof__an_free(an);
}

static void first_step_at_twice_the_median_is_not_an_outlier(void **state) {
  (void)state;
  const uint64_t d[] = {200, 100, 110, 90, 100};
  prof__an *an = analyze(steps_trace(d, 5));
  assert_int_equal(an->steps[0].warmup_outlier, 0);
  assert_int_equal(an->steady_stats.count, 5);
  prof__an_free(an);
}

static void step_time_variance_flagged(void **state) {
  (void)state;
  const uint64_t d[] = {100, 100, 100, 100, 100, 100, 100, 100, 100, 300};
  prof__an *an = analyze(steps_trace(d, 10));
  const prof__finding *f = finding(an, "step_time_variance");
  assert_non_null(f);
  assert_string_equal(f->severity, "medium"); /* p95 300 = 3x median */
  prof__an_free(an);
  const uint64_t even[] = {100, 101, 99, 100, 100, 102};
  an = analyze(steps_trace(even, 6));
  assert_null(finding(an, "step_time_variance"));
  prof__an_free(an);
}

/* Ten steps of 1000 ns, each with `data_ns` of data loading inside. */
static prof__an *input_trace(uint64_t data_ns) {
  tb t = tb_open("input");
  names(&t);
  for (uint64_t i = 0; i < 10; i++) {
    uint64_t b = i * 1000;
    tb_sb(&t, 1, b, i);
    tb_b(&t, 1, b, N_FWD, PROF_CAT_COMPUTE);
    tb_e(&t, 1, b + 1000 - data_ns, N_FWD);
    if (data_ns) {
      tb_b(&t, 1, b + 1000 - data_ns, N_LOADER, PROF_CAT_DATA);
      tb_e(&t, 1, b + 1000, N_LOADER);
    }
    tb_se(&t, 1, b + 1000, i);
  }
  return analyze(tb_close(&t, "0"));
}

static void input_bound_high_at_exactly_20_percent(void **state) {
  (void)state;
  prof__an *an = input_trace(200);
  const prof__finding *f = finding(an, "input_bound");
  assert_non_null(f);
  assert_string_equal(f->severity, "high");
  assert_true(f->value > 0.1999 && f->value < 0.2001);
  assert_non_null(strstr(f->recommendation, "prefetch"));
  assert_string_equal(an->findings[0].id, "input_bound"); /* high sorts first */
  prof__an_free(an);
  an = input_trace(199);
  assert_string_equal(finding(an, "input_bound")->severity, "medium");
  prof__an_free(an);
}

static void input_bound_medium_at_5_percent_absent_below(void **state) {
  (void)state;
  prof__an *an = input_trace(50);
  assert_string_equal(finding(an, "input_bound")->severity, "medium");
  prof__an_free(an);
  an = input_trace(49);
  assert_null(finding(an, "input_bound"));
  prof__an_free(an);
  an = input_trace(0);
  assert_null(finding(an, "input_bound"));
  prof__an_free(an);
}

static void lost_events_from_thread_records(void **state) {
  (void)state;
  tb t = tb_open("lost");
  names(&t);
  tb_b(&t, 1, 10, N_FWD, 0);
  tb_e(&t, 1, 20, N_FWD);
  tb_thread_named(&t, 1, "main", 3);
  tb_flush(&t);
  tb_thread_named(&t, 1, "main", 7); /* latest wins */
  tb_thread_named(&t, 2, "loader-0", 5);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(an->lost_events, 12);
  assert_int_equal(an->nthreads, 2);
  const prof__finding *f = finding(an, "lost_events");
  assert_non_null(f);
  assert_string_equal(f->severity, "high"); /* 12 lost of 14 */
  assert_non_null(strstr(f->measured, "lost 12 events"));
  assert_non_null(strstr(f->recommendation, "MLPROF_RING_KB"));
  int named = 0;
  for (size_t i = 0; i < an->nthreads; i++)
    if (an->threads[i].tid == 2) named = strcmp(an->threads[i].name, "loader-0") == 0;
  assert_true(named);
  prof__an_free(an);
}

static void end_without_begin_is_counted(void **state) {
  (void)state;
  tb t = tb_open("orphan");
  names(&t);
  tb_e(&t, 1, 5, N_X); /* no BEGIN */
  tb_b(&t, 1, 10, N_FWD, 0);
  tb_e(&t, 1, 30, N_FWD);
  prof__an *an = analyze(tb_close(&t, "2"));
  assert_int_equal(an->unmatched_range_ends, 1);
  assert_int_equal(an->misuse, 2);
  assert_int_equal(range(an, "forward")->total_ns, 20);
  assert_non_null(finding(an, "api_misuse"));
  prof__an_free(an);
}

static void lost_end_closes_inner_range_with_parent(void **state) {
  (void)state;
  tb t = tb_open("lostend");
  names(&t);
  tb_b(&t, 1, 0, N_OUTER, 0);
  tb_b(&t, 1, 10, N_INNER, 0);
  tb_e(&t, 1, 50, N_OUTER); /* inner's END was lost */
  tb_b(&t, 1, 60, N_X, 0);  /* still open at the end of the trace */
  tb_mark(&t, 1, 90, N_FWD);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(range(an, "inner")->total_ns, 40);
  assert_int_equal(range(an, "outer")->total_ns, 50);
  assert_int_equal(range(an, "outer")->self_ns, 10);
  assert_int_equal(range(an, "x")->total_ns, 30); /* closed at the last event */
  assert_int_equal(an->unclosed_ranges, 2);
  prof__an_free(an);
}

/* The loader thread's block comes first in the file, though its events are
 * later in time than some of the main thread's. */
static void threads_keep_their_own_stacks(void **state) {
  (void)state;
  tb t = tb_open("threads");
  names(&t);
  tb_b(&t, 2, 150, N_LOADER, PROF_CAT_DATA);
  tb_b(&t, 2, 160, N_INNER, PROF_CAT_DATA);
  tb_e(&t, 2, 400, N_INNER);
  tb_e(&t, 2, 700, N_LOADER);
  tb_sb(&t, 1, 100, 0);
  tb_b(&t, 1, 100, N_FWD, PROF_CAT_COMPUTE);
  tb_e(&t, 1, 600, N_FWD);
  tb_se(&t, 1, 1100, 0);
  tb_flush(&t);
  tb_sb(&t, 1, 1200, 1);
  tb_b(&t, 2, 1250, N_LOADER, PROF_CAT_DATA);
  tb_e(&t, 2, 1300, N_LOADER);
  tb_se(&t, 1, 2200, 1);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(an->nthreads, 2);
  assert_int_equal(an->nsteps, 2);
  const prof__range_stat *l = range(an, "loader");
  assert_int_equal(l->count, 2);
  assert_int_equal(l->total_ns, 600);
  assert_int_equal(l->self_ns, 360);
  assert_int_equal(l->in_step_self_ns, 0); /* not on the step thread */
  assert_int_equal(an->steps[0].bd_ns[PROF_BD_DATA], 0);
  assert_int_equal(an->steps[0].bd_ns[PROF_BD_COMPUTE], 500);
  assert_int_equal(an->steps[0].bd_ns[PROF_BD_UNTRACKED], 500);
  assert_int_equal(an->steps[1].bd_ns[PROF_BD_UNTRACKED], 1000);
  uint64_t ev1 = 0, ev2 = 0;
  for (size_t i = 0; i < an->nthreads; i++) {
    if (an->threads[i].tid == 1) ev1 = an->threads[i].events;
    if (an->threads[i].tid == 2) ev2 = an->threads[i].events;
  }
  assert_int_equal(ev1, 6);
  assert_int_equal(ev2, 6);
  prof__an_free(an);
}

static void step_ended_on_another_thread(void **state) {
  (void)state;
  tb t = tb_open("xstep");
  tb_sb(&t, 1, 0, 0);
  tb_se(&t, 2, 500, 0);
  tb_se(&t, 2, 600, 9); /* no such step */
  tb_sb(&t, 1, 700, 1); /* never ends */
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(an->nsteps, 1);
  assert_int_equal(an->steps[0].end_ns, 500);
  assert_int_equal(an->steps[0].bd_ns[PROF_BD_UNTRACKED], 500);
  assert_int_equal(an->unmatched_step_ends, 1);
  assert_int_equal(an->unfinished_steps, 1);
  prof__an_free(an);
}

static const char *truncation_source(void) {
  tb t = tb_open("trunc");
  names(&t);
  for (uint64_t i = 0; i < 4; i++) {
    tb_sb(&t, 1, i * 100, i);
    tb_b(&t, 1, i * 100 + 10, N_FWD, 0);
    tb_e(&t, 1, i * 100 + 90, N_FWD);
    tb_se(&t, 1, i * 100 + 100, i);
    tb_flush(&t);
  }
  tb_sb(&t, 1, 400, 4); /* the crash came mid-step */
  tb_b(&t, 1, 410, N_FWD, 0);
  return tb_abort(&t);
}

static void trace_without_footer_is_analyzed_as_truncated(void **state) {
  (void)state;
  prof__an *an = analyze(truncation_source());
  assert_int_equal(an->truncated, 1);
  assert_int_equal(an->has_footer, 0);
  assert_true(strlen(an->trunc_msg) > 0);
  assert_int_equal(an->nsteps, 4);
  assert_int_equal(an->unfinished_steps, 1);
  assert_non_null(finding(an, "truncated_trace"));
  prof__an_free(an);
}

static void trace_cut_mid_chunk_is_analyzed_as_truncated(void **state) {
  (void)state;
  const char *path = truncation_source();
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(truncate(path, st.st_size - 7), 0);
  prof__an *an = analyze(path);
  assert_int_equal(an->truncated, 1);
  assert_int_equal(an->nsteps, 4); /* the last chunk held only step 4 */
  prof__an_free(an);
}

static void flip(const char *path, long off) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, off, SEEK_SET);
  int c = fgetc(f);
  fseek(f, off, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
}

static void corrupt_trace_gives_a_clean_error(void **state) {
  (void)state;
  const char *path = nested_trace();
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  flip(path, st.st_size - 3); /* inside the footer chunk */
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), PROF_EFORMAT);
  assert_null(an);
  assert_true(strlen(err) > 0);
  assert_int_equal(prof__an_run_opts(&an, "/nonexistent/x.mlpt", 1, err), PROF_ENOENT);
  assert_true(strlen(err) > 0);
}

static void every_single_byte_flip_is_survived(void **state) {
  (void)state;
  const char *path = nested_trace();
  size_t len;
  char *orig = th_read_file(path, &len);
  assert_non_null(orig);
  int errors = 0;
  for (size_t off = 0; off < len; off++) {
    FILE *f = fopen(path, "wb");
    fwrite(orig, 1, len, f);
    fclose(f);
    flip(path, (long)off);
    prof__an *an = NULL;
    char err[256];
    int rc = prof__an_run_opts(&an, path, 1, err);
    if (rc) errors++;
    else prof__an_free(an);
  }
  assert_true(errors > (int)len / 2); /* most flips hit CRC-protected bytes */
  free(orig);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(nested_ranges_split_self_and_total),
    cmocka_unit_test(breakdown_innermost_wins_and_counts_untracked),
    cmocka_unit_test(step_stats_on_known_durations),
    cmocka_unit_test(late_writer_events_do_not_shift_steps),
    cmocka_unit_test(p95_and_median_of_odd_counts),
    cmocka_unit_test(slow_first_step_is_a_warmup_outlier),
    cmocka_unit_test(first_step_at_twice_the_median_is_not_an_outlier),
    cmocka_unit_test(step_time_variance_flagged),
    cmocka_unit_test(input_bound_high_at_exactly_20_percent),
    cmocka_unit_test(input_bound_medium_at_5_percent_absent_below),
    cmocka_unit_test(lost_events_from_thread_records),
    cmocka_unit_test(end_without_begin_is_counted),
    cmocka_unit_test(lost_end_closes_inner_range_with_parent),
    cmocka_unit_test(threads_keep_their_own_stacks),
    cmocka_unit_test(step_ended_on_another_thread),
    cmocka_unit_test(trace_without_footer_is_analyzed_as_truncated),
    cmocka_unit_test(trace_cut_mid_chunk_is_analyzed_as_truncated),
    cmocka_unit_test(corrupt_trace_gives_a_clean_error),
    cmocka_unit_test(every_single_byte_flip_is_survived),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
