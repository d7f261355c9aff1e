/* test_steptime.c — the step-time pattern findings on hand-built traces:
 * a drift names its slope and the growing range, a slow step every 25
 * names the period and the range, rare outliers are listed by step number,
 * and steady steps with noise stay quiet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "trace/event.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

enum { TID = 7 };

static unsigned rng = 99;
static double noise(void) { /* +-2% */
  rng = rng * 1103515245u + 12345u;
  return 1 + 0.04 * ((double)((rng >> 8) % 1000) / 1000 - 0.5);
}

typedef struct tb {
  prof__tw *w;
  const char *path;
  uint64_t now;
} tb;

static void tb_open(tb *t, const char *stem) {
  char err[256];
  memset(t, 0, sizeof *t);
  t->path = th_tmp_path(stem, ".mlpt");
  prof__kv hdr[] = {{"program", "steptime-test"}, {"pid", "1"}};
  t->w = prof__tw_open(t->path, hdr, 2, err);
  assert_non_null(t->w);
  static const char *const names[] = {"data", "forward", "backward", "checkpoint", "train_step"};
  for (uint32_t i = 0; i < 5; i++) assert_int_equal(prof__tw_string(t->w, i + 1, names[i], strlen(names[i])), 0);
  t->now = 1000000;
}

static void ev(tb *t, int type, uint32_t name, uint8_t cat, uint64_t a) {
  prof__event e = {.ts = t->now, .type = (uint8_t)type, .cat = cat, .name = name, .a = a};
  assert_int_equal(prof__tw_events(t->w, TID, &e, 1), 0);
}

static void range(tb *t, uint32_t name, uint8_t cat, uint64_t ns) {
  ev(t, PROF_EV_RANGE_BEGIN, name, cat, 0);
  t->now += ns;
  ev(t, PROF_EV_RANGE_END, name, cat, 0);
}

/* One step: data 2 ms, forward fwd ns, backward 4 ms, optional checkpoint,
 * all inside an enclosing "train_step" range (the finding must name the
 * innermost range that carries the effect, not the enclosing one). */
static void step(tb *t, uint64_t n, uint64_t fwd, uint64_t ckpt) {
  ev(t, PROF_EV_STEP_BEGIN, 0, 0, n);
  ev(t, PROF_EV_RANGE_BEGIN, 5, PROF_CAT_OTHER, 0);
  range(t, 1, PROF_CAT_DATA, (uint64_t)(2e6 * noise()));
  range(t, 2, PROF_CAT_COMPUTE, (uint64_t)((double)fwd * noise()));
  range(t, 3, PROF_CAT_COMPUTE, (uint64_t)(4e6 * noise()));
  if (ckpt) range(t, 4, PROF_CAT_IO, ckpt);
  ev(t, PROF_EV_RANGE_END, 5, PROF_CAT_OTHER, 0);
  ev(t, PROF_EV_STEP_END, 0, 0, n);
  t->now += 1000;
}

static prof__an *tb_analyze(tb *t) {
  prof__kv f[] = {{"events_lost", "0"}};
  assert_int_equal(prof__tw_close(t->w, f, 1), 0);
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, t->path, 1, err), 0);
  return an;
}

static const prof__finding *find(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return &an->findings[i];
  return NULL;
}

static const prof__fkey *key(const prof__finding *f, const char *k) {
  for (int i = 0; i < f->nkeys; i++)
    if (strcmp(f->keys[i].key, k) == 0) return &f->keys[i];
  fail_msg("finding %s has no key %s", f->id, k);
  return NULL;
}

static void steady_steps_have_no_pattern(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-steady");
  for (uint64_t s = 0; s < 200; s++) step(&t, s, 3000000, 0);
  prof__an *an = tb_analyze(&t);
  assert_null(find(an, "step_time_drift"));
  assert_null(find(an, "periodic_slow_steps"));
  assert_null(find(an, "slow_step_outliers"));
  prof__an_free(an);
}

static void growing_forward_is_a_drift_with_slope_and_phase(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-drift");
  /* forward grows 20 us per step: 2 ms per 100 steps */
  for (uint64_t s = 0; s < 300; s++) step(&t, s, 3000000 + 20000 * s, 0);
  prof__an *an = tb_analyze(&t);
  const prof__finding *f = find(an, "step_time_drift");
  assert_non_null(f);
  assert_true(f->value > 1.8e6 && f->value < 2.2e6);
  assert_string_equal(key(f, "phase")->str, "forward");
  assert_non_null(strstr(f->title, "forward"));
  assert_null(find(an, "periodic_slow_steps"));
  prof__an_free(an);
}

/* Steps with many range names: their per-step times fill more than one of
 * the section's storage blocks (4 MiB, 262144 names x steps), and the
 * drift is still found in them and named. */
static void many_names_per_step_fill_several_blocks(void **state) {
  (void)state;
  enum { FILL = 150, STEPS = 2000 };
  tb t;
  tb_open(&t, "steptime-many-names");
  char nm[16];
  for (uint32_t i = 0; i < FILL; i++) {
    int n = snprintf(nm, sizeof nm, "fill%u", i);
    assert_int_equal(prof__tw_string(t.w, 6 + i, nm, (size_t)n), 0);
  }
  for (uint64_t s = 0; s < STEPS; s++) {
    ev(&t, PROF_EV_STEP_BEGIN, 0, 0, s);
    for (uint32_t i = 0; i < FILL; i++) range(&t, 6 + i, PROF_CAT_COMPUTE, 1000);
    range(&t, 2, PROF_CAT_COMPUTE, 3000000 + 2000 * s); /* forward: 0.2 ms more per 100 steps */
    ev(&t, PROF_EV_STEP_END, 0, 0, s);
    t.now += 1000;
  }
  prof__an *an = tb_analyze(&t);
  assert_int_equal(an->nsteps, STEPS);
  const prof__finding *f = find(an, "step_time_drift");
  assert_non_null(f);
  assert_string_equal(key(f, "phase")->str, "forward");
  assert_true(f->value > 1.8e5 && f->value < 2.2e5); /* per 100 steps */
  prof__an_free(an);
}

static void checkpoint_every_25_steps_is_periodic(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-period");
  for (uint64_t s = 0; s < 250; s++) step(&t, s, 3000000, s % 25 == 24 ? 12000000 : 0);
  prof__an *an = tb_analyze(&t);
  const prof__finding *f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_int_equal((int)f->value, 25);
  assert_string_equal(key(f, "phase")->str, "checkpoint");
  double extra = key(f, "extra_ns")->num;
  assert_true(extra > 11e6 && extra < 13e6);
  assert_int_equal((int)key(f, "first_step")->num, 24);
  /* the keys reach the text and HTML reports too */
  for (int html = 0; html < 2; html++) {
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_int_equal(prof__report_write(an, html ? "html" : "text", o), 0);
    fclose(o);
    assert_non_null(strstr(buf, "phase=checkpoint"));
    assert_non_null(strstr(buf, "first_step=24"));
    free(buf);
  }
  assert_null(find(an, "step_time_drift"));
  assert_null(find(an, "slow_step_outliers"));
  prof__an_free(an);
}

/* One slow data fetch every `period` steps (one missed in eight), in a
 * run whose META says `workers` forked DataLoader workers ran (0: none). */
static prof__an *slow_data_every(const char *stem, uint64_t period, int workers) {
  tb t;
  tb_open(&t, stem);
  for (uint64_t s = 0; s < 240; s++) {
    int slow = s % period == 0 && s % (8 * period) != 8 * period - period;
    ev(&t, PROF_EV_STEP_BEGIN, 0, 0, s);
    range(&t, 1, PROF_CAT_DATA, (uint64_t)((slow ? 9e6 : 1e6) * noise()));
    range(&t, 2, PROF_CAT_COMPUTE, (uint64_t)(4e6 * noise()));
    ev(&t, PROF_EV_STEP_END, 0, 0, s);
    t.now += 1000;
  }
  if (workers) {
    char v[16];
    snprintf(v, sizeof v, "%d", workers);
    prof__kv m[] = {{"cpu.workers", v}};
    assert_int_equal(prof__tw_meta(t.w, m, 1), 0);
  }
  return tb_analyze(&t);
}

/* Two workers taking turns, one of them slow: every 2nd step waits for data.
 * That is the workers' round robin, not a checkpoint or a collection. */
static void worker_round_robin_is_not_called_a_checkpoint(void **state) {
  (void)state;
  prof__an *an = slow_data_every("steptime-workers", 2, 2);
  const prof__finding *f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_int_equal((int)f->value, 2);
  assert_string_equal(key(f, "cause")->str, "worker_round_robin");
  assert_true(key(f, "workers")->num == 2);
  assert_non_null(strstr(f->title, "2 DataLoader workers"));
  assert_non_null(strstr(f->recommendation, "persistent_workers"));
  assert_null(strstr(f->recommendation, "checkpoint"));
  assert_null(strstr(f->recommendation, "gc."));
  assert_true(f->saving_ns > 0); /* the predicted saving is kept */
  prof__an_free(an);
  /* the same steps without workers: periodic work on the training thread */
  an = slow_data_every("steptime-noworkers", 2, 0);
  f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_non_null(strstr(f->recommendation, "checkpoint"));
  for (int i = 0; i < f->nkeys; i++) assert_string_not_equal(f->keys[i].key, "cause");
  prof__an_free(an);
  /* 4 workers and a period of 3 (not a divisor): not the workers' turns */
  an = slow_data_every("steptime-workers3", 3, 4);
  f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_int_equal((int)f->value, 3);
  assert_non_null(strstr(f->recommendation, "checkpoint"));
  prof__an_free(an);
}

/* A loop left with `break` after prof_start(): the last step never ends,
 * then 300 ms of shutdown work. It is not a step: not in the statistics
 * or the slowest steps, and the report says it was left out and for how
 * long it had been open. */
static void step_left_open_by_break_is_left_out_and_said(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-break");
  for (uint64_t s = 0; s < 30; s++) step(&t, s, 3000000, 0);
  ev(&t, PROF_EV_STEP_BEGIN, 0, 0, 30);
  range(&t, 1, PROF_CAT_DATA, 1000000);
  range(&t, 4, PROF_CAT_IO, 300000000); /* the loader's shutdown */
  prof__an *an = tb_analyze(&t);
  assert_int_equal(an->nsteps, 30);
  assert_int_equal(an->unfinished_steps, 1);
  assert_true(an->step_stats.max_ns < 20000000);
  assert_int_equal(an->unfinished_last_number, 30);
  assert_true(an->unfinished_last_open_ns >= 301000000 && an->unfinished_last_open_ns < 302000000);
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, "text", o), 0);
  fclose(o);
  assert_non_null(strstr(buf, "1 unfinished step not counted"));
  assert_non_null(strstr(buf, "step 30, was open 301."));
  assert_null(strstr(buf, "step 30    "));
  free(buf);
  prof__an_free(an);
}

static void rare_slow_steps_are_listed_with_numbers_and_phase(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-outlier");
  for (uint64_t s = 0; s < 200; s++) step(&t, s, s == 57 || s == 140 ? 30000000 : 3000000, 0);
  prof__an *an = tb_analyze(&t);
  const prof__finding *f = find(an, "slow_step_outliers");
  assert_non_null(f);
  assert_int_equal((int)f->value, 2);
  assert_non_null(strstr(f->measured, "step 57"));
  assert_non_null(strstr(f->measured, "step 140"));
  assert_non_null(strstr(f->measured, "(forward)"));
  assert_null(find(an, "step_time_variance")); /* the p95 rule cannot see 1% of the steps */
  assert_null(find(an, "periodic_slow_steps"));
  prof__an_free(an);
}

/* The checkpoint calls itself (a checkpoint range inside a checkpoint
 * range): its time counts once, from its outermost instance (the engine's
 * context says which is outermost), not once per level. */
static void a_recursive_range_counts_once(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-recursive");
  for (uint64_t s = 0; s < 250; s++) {
    if (s % 25 != 24) {
      step(&t, s, 3000000, 0);
      continue;
    }
    ev(&t, PROF_EV_STEP_BEGIN, 0, 0, s);
    range(&t, 1, PROF_CAT_DATA, 2000000);
    range(&t, 2, PROF_CAT_COMPUTE, 3000000);
    range(&t, 3, PROF_CAT_COMPUTE, 4000000);
    ev(&t, PROF_EV_RANGE_BEGIN, 4, PROF_CAT_IO, 0);
    t.now += 6000000;
    range(&t, 4, PROF_CAT_IO, 6000000);
    ev(&t, PROF_EV_RANGE_END, 4, PROF_CAT_IO, 0);
    ev(&t, PROF_EV_STEP_END, 0, 0, s);
    t.now += 1000;
  }
  prof__an *an = tb_analyze(&t);
  const prof__finding *f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_string_equal(key(f, "phase")->str, "checkpoint");
  double extra = key(f, "extra_ns")->num;
  if (!(extra > 11e6 && extra < 13e6)) fail_msg("checkpoint extra %.0f ns, expected 12 ms once", extra);
  /* the range's own share of it: 12 ms, not 18 ms (6 ms counted twice) */
  const char *adds = strstr(f->measured, "(io) adds ");
  assert_non_null(adds);
  double ms = atof(adds + strlen("(io) adds "));
  if (!(ms > 11 && ms < 13)) fail_msg("'%s': the checkpoint range counted %.2f ms, expected 12", f->measured, ms);
  prof__an_free(an);
}

/* A range left open across the step's end counts up to the end in that
 * step, and from the next step's begin in the next. */
static void an_open_range_is_clipped_to_each_step(void **state) {
  (void)state;
  tb t;
  tb_open(&t, "steptime-open");
  for (uint64_t s = 0; s < 250; s++) {
    ev(&t, PROF_EV_STEP_BEGIN, 0, 0, s);
    if (s % 25 == 24) {
      t.now += 9000000; /* ... and ends 9 ms into step 24 */
      ev(&t, PROF_EV_RANGE_END, 4, PROF_CAT_IO, 0);
    }
    range(&t, 2, PROF_CAT_COMPUTE, (uint64_t)(3e6 * noise()));
    if (s % 25 == 23) ev(&t, PROF_EV_RANGE_BEGIN, 4, PROF_CAT_IO, 0); /* opens late in step 23 */
    t.now += 1000000;
    ev(&t, PROF_EV_STEP_END, 0, 0, s);
    t.now += 1000;
  }
  prof__an *an = tb_analyze(&t);
  const prof__finding *f = find(an, "periodic_slow_steps");
  assert_non_null(f);
  assert_int_equal((int)key(f, "first_step")->num, 24);
  assert_string_equal(key(f, "phase")->str, "checkpoint");
  /* the 9 ms in step 24, not the 1 ms of step 23 nor the 10 ms of both */
  const char *adds = strstr(f->measured, "(io) adds ");
  assert_non_null(adds);
  double ms = atof(adds + strlen("(io) adds "));
  if (!(ms > 8.5 && ms < 9.5)) fail_msg("'%s': the checkpoint range counted %.2f ms, expected 9", f->measured, ms);
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(steady_steps_have_no_pattern),
      cmocka_unit_test(growing_forward_is_a_drift_with_slope_and_phase),
      cmocka_unit_test(many_names_per_step_fill_several_blocks),
      cmocka_unit_test(checkpoint_every_25_steps_is_periodic),
      cmocka_unit_test(worker_round_robin_is_not_called_a_checkpoint),
      cmocka_unit_test(step_left_open_by_break_is_left_out_and_said),
      cmocka_unit_test(rare_slow_steps_are_listed_with_numbers_and_phase),
      cmocka_unit_test(a_recursive_range_counts_once),
      cmocka_unit_test(an_open_range_is_clipped_to_each_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
