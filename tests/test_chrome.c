/* test_chrome.c — the Chrome Trace Event export: valid JSON with complete
 * events in microseconds, thread names, steps on their own track, marks and
 * counters; ranges closed at one instant and zero-length ranges, and the
 * stack of open ranges that every Chrome writer closes them with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <unistd.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"
#include "analyze/export/chrome_range.h"
#include "analyze/export/gzfile.h"

/* Base time 5 ms. Thread 7 "main": step 0 [5000000, 5004000), range
 * "forward" [5001000, 5003500) holding "matmul" [5001500, 5002250),
 * a mark at 5003600 and counters loss=0.5, loss=NaN. Thread 9 has an
 * unclosed range "load" from 5000250; its last event is at 5003000. */
static const char *chrome_trace(void) {
  tb t = tb_open("chrome");
  tb_str(&t, 1, "forward");
  tb_str(&t, 2, "matmul");
  tb_str(&t, 3, "epoch-end");
  tb_str(&t, 4, "loss");
  tb_str(&t, 5, "load");
  tb_sb(&t, 7, 5000000, 0);
  tb_b(&t, 7, 5001000, 1, PROF_CAT_COMPUTE);
  tb_b(&t, 7, 5001500, 2, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 5002250, 2);
  tb_e(&t, 7, 5003500, 1);
  tb_mark(&t, 7, 5003600, 3);
  tb_counter(&t, 7, 5003700, 4, 0.5);
  tb_counter(&t, 7, 5003800, 4, NAN);
  tb_se(&t, 7, 5004000, 0);
  tb_b(&t, 9, 5000250, 5, PROF_CAT_DATA);
  tb_mark(&t, 9, 5003000, 3);
  tb_thread_named(&t, 7, "main", 0);
  tb_thread_named(&t, 9, "loader \"0\"", 0);
  return tb_close(&t, "0");
}

typedef struct exported {
  char *text;
  prof__jv *root;
  const prof__jv *events;
} exported;

/* Export the trace at `path` with options `o` (NULL: none) and parse it. */
static exported *export_path(const char *path, const prof__chrome_opts *o) {
  exported *x = calloc(1, sizeof *x);
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, path, 1, err)) return NULL;
  size_t len = 0;
  FILE *f = open_memstream(&x->text, &len);
  int rc = prof__export_chrome_opts(an, f, o);
  fclose(f);
  prof__an_free(an);
  if (rc) return NULL;
  x->root = prof__jv_parse(x->text, len, err);
  if (!x->root) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  x->events = prof__jv_get(x->root, "traceEvents");
  return x;
}

static exported *export_with(const prof__chrome_opts *o) { return export_path(chrome_trace(), o); }

static int export_setup(void **state) {
  *state = export_with(NULL);
  return *state ? 0 : -1;
}

static int export_teardown(void **state) {
  exported *x = *state;
  prof__jv_free(x->root);
  free(x->text);
  free(x);
  return 0;
}

static const char *sget(const prof__jv *e, const char *k) {
  const prof__jv *v = prof__jv_get(e, k);
  return v && v->type == PROF_JV_STR ? v->str : "";
}

static double nget(const prof__jv *e, const char *k) {
  const prof__jv *v = prof__jv_get(e, k);
  return v && v->type == PROF_JV_NUM ? v->num : -1;
}

/* The n-th event with this phase and name (NULL if none). */
static const prof__jv *find(const exported *x, const char *ph, const char *name, int n) {
  for (size_t i = 0; i < x->events->len; i++) {
    const prof__jv *e = &x->events->items[i];
    if (strcmp(sget(e, "ph"), ph) == 0 && strcmp(sget(e, "name"), name) == 0 && n-- == 0) return e;
  }
  return NULL;
}

static int count_ph(const exported *x, const char *ph) {
  int n = 0;
  for (size_t i = 0; i < x->events->len; i++) n += strcmp(sget(&x->events->items[i], "ph"), ph) == 0;
  return n;
}

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

static void ranges_are_complete_events_in_microseconds(void **state) {
  exported *x = *state;
  assert_int_equal(x->events->type, PROF_JV_ARR);
  const prof__jv *fwd = find(x, "X", "forward", 0), *mm = find(x, "X", "matmul", 0);
  assert_non_null(fwd);
  assert_non_null(mm);
  assert_true(near(nget(fwd, "ts"), 1.0)); /* (5001000 - 5000000) ns */
  assert_true(near(nget(fwd, "dur"), 2.5));
  assert_true(near(nget(mm, "ts"), 1.5));
  assert_true(near(nget(mm, "dur"), 0.75));
  assert_true(nget(fwd, "tid") == 7);
  assert_true(nget(fwd, "pid") == 4242);
  assert_string_equal(sget(fwd, "cat"), "compute");
}

static void unclosed_range_ends_at_last_event_of_its_thread(void **state) {
  exported *x = *state;
  const prof__jv *load = find(x, "X", "load", 0);
  assert_non_null(load);
  assert_true(near(nget(load, "ts"), 0.25));
  assert_true(near(nget(load, "dur"), 2.75));
  assert_true(nget(load, "tid") == 9);
  assert_string_equal(sget(load, "cat"), "data");
}

/* Steps are slices on the thread that ran them (tid 7), enclosing its
 * ranges, not on a made-up thread. */
static void steps_are_on_the_step_thread(void **state) {
  exported *x = *state;
  const prof__jv *s = find(x, "X", "step 0", 0);
  assert_non_null(s);
  assert_true(near(nget(s, "ts"), 0.0));
  assert_true(near(nget(s, "dur"), 4.0));
  assert_true(nget(s, "tid") == 7);
  for (int i = 0; i < 4; i++) {
    const prof__jv *m = find(x, "M", "thread_name", i);
    if (m) assert_string_not_equal(sget(prof__jv_get(m, "args"), "name"), "steps");
  }
  assert_int_equal(count_ph(x, "X"), 4);
}

static void threads_and_process_are_named(void **state) {
  exported *x = *state;
  const prof__jv *p = find(x, "M", "process_name", 0);
  assert_non_null(p);
  assert_string_equal(sget(prof__jv_get(p, "args"), "name"), "unit-train");
  int seen = 0;
  for (int i = 0; i < 3; i++) {
    const prof__jv *m = find(x, "M", "thread_name", i);
    if (!m) continue;
    const char *name = sget(prof__jv_get(m, "args"), "name");
    if (nget(m, "tid") == 7 && strcmp(name, "main") == 0) seen |= 1;
    if (nget(m, "tid") == 9 && strcmp(name, "loader \"0\"") == 0) seen |= 2;
  }
  assert_int_equal(seen, 3);
}

static void marks_and_finite_counters_are_exported(void **state) {
  exported *x = *state;
  const prof__jv *m = find(x, "i", "epoch-end", 0);
  assert_non_null(m);
  assert_true(near(nget(m, "ts"), 3.6));
  assert_string_equal(sget(m, "s"), "t");
  assert_non_null(find(x, "i", "epoch-end", 1));
  const prof__jv *c = find(x, "C", "loss", 0);
  assert_non_null(c);
  assert_true(near(nget(c, "ts"), 3.7));
  assert_true(nget(prof__jv_get(c, "args"), "value") == 0.5);
  assert_null(find(x, "C", "loss", 1)); /* NaN sample skipped */
  assert_true(nget(prof__jv_get(x->root, "otherData"), "ts_base_ns") == 5000000);
}

static double sort_index(const exported *x, const char *what, double tid) {
  for (int i = 0;; i++) {
    const prof__jv *m = find(x, "M", what, i);
    if (!m) return -100;
    if (nget(m, "tid") == tid || tid < 0) return nget(prof__jv_get(m, "args"), "sort_index");
  }
}

static void tracks_are_sorted_step_thread_first(void **state) {
  exported *x = *state;
  assert_true(sort_index(x, "process_sort_index", -1) == 0);
  assert_true(sort_index(x, "thread_sort_index", 7) == 0); /* runs the steps */
  assert_true(sort_index(x, "thread_sort_index", 9) == 1);
  const prof__jv *st = find(x, "X", "step 0", 0);
  assert_true(sort_index(x, "thread_sort_index", nget(st, "tid")) == 0);
}

static void free_export(exported *x);

/* Step 0 [1000000, 2000000) on thread 7 holds "forward" [1100000, 1400000)
 * and "backward" [1500000, 1900000). The writer thread's per-thread counter
 * readings are stamped when it read them (1950000, later than the ranges
 * that follow them in the file); thread 9 has its own cycles reading. */
static const char *late_counter_trace(void) {
  tb t = tb_open("chrome-late");
  tb_str(&t, 1, "forward");
  tb_str(&t, 2, "backward");
  tb_str(&t, 3, "cpuctr/cycles");
  tb_sb(&t, 7, 1000000, 0);
  tb_b(&t, 7, 1100000, 1, PROF_CAT_COMPUTE);
  tb_counter(&t, 7, 1950000, 3, 100);
  tb_counter(&t, 9, 1950000, 3, 300);
  tb_e(&t, 7, 1400000, 1);
  tb_b(&t, 7, 1500000, 2, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 1900000, 2);
  tb_se(&t, 7, 2000000, 0);
  tb_b(&t, 9, 1200000, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 9, 1300000, 1);
  tb_thread_named(&t, 7, "main", 0);
  tb_thread_named(&t, 9, "loader", 0);
  return tb_close(&t, "0");
}

static void ranges_keep_their_duration_inside_their_step_past_late_counters(void **state) {
  (void)state;
  exported *x = export_path(late_counter_trace(), NULL);
  assert_non_null(x);
  const prof__jv *st = find(x, "X", "step 0", 0), *f = find(x, "X", "forward", 0), *b = find(x, "X", "backward", 0);
  assert_non_null(st);
  assert_non_null(f);
  assert_non_null(b);
  double s0 = nget(st, "ts"), s1 = s0 + nget(st, "dur");
  assert_true(near(nget(f, "ts"), 100.0));
  assert_true(near(nget(f, "dur"), 300.0));
  assert_true(near(nget(b, "ts"), 500.0));
  assert_true(near(nget(b, "dur"), 400.0));
  for (const prof__jv *r = f; r; r = r == f ? b : NULL) {
    assert_true(nget(r, "ts") >= s0);
    assert_true(nget(r, "ts") + nget(r, "dur") <= s1);
  }
  free_export(x);
}

static void per_thread_counters_get_a_track_per_thread(void **state) {
  (void)state;
  exported *x = export_path(late_counter_trace(), NULL);
  assert_non_null(x);
  const prof__jv *a = find(x, "C", "cpuctr/cycles [main 7]", 0), *b = find(x, "C", "cpuctr/cycles [loader 9]", 0);
  assert_non_null(a);
  assert_non_null(b);
  assert_true(nget(prof__jv_get(a, "args"), "value") == 100);
  assert_true(nget(prof__jv_get(b, "args"), "value") == 300);
  assert_null(find(x, "C", "cpuctr/cycles", 0));
  free_export(x);
}

static void free_export(exported *x) {
  void *p = x;
  export_teardown(&p);
}

/* Thread 7: "epoch" [1000, 5000) holds "batch" from 2000 and "layer" from
 * 3000 that never end (epoch's end closes them); "tick" is zero-length at
 * 6000, where "load" [6000, 8000) begins; "outer" from 9000 holds "inner"
 * from 9500, both open at the thread's last event (a mark at 9900). */
static const char *closed_together_trace(void) {
  tb t = tb_open("chrome-together");
  const char *s[] = {"epoch", "batch", "layer", "tick", "load", "outer", "inner", "last"};
  for (uint32_t i = 0; i < 8; i++) tb_str(&t, i + 1, s[i]);
  tb_b(&t, 7, 1000, 1, PROF_CAT_COMPUTE);
  tb_b(&t, 7, 2000, 2, PROF_CAT_COMPUTE);
  tb_b(&t, 7, 3000, 3, PROF_CAT_COMPUTE);
  tb_e(&t, 7, 5000, 1);
  tb_b(&t, 7, 6000, 4, PROF_CAT_OTHER);
  tb_e(&t, 7, 6000, 4);
  tb_b(&t, 7, 6000, 5, PROF_CAT_DATA);
  tb_e(&t, 7, 8000, 5);
  tb_b(&t, 7, 9000, 6, PROF_CAT_COMPUTE);
  tb_b(&t, 7, 9500, 7, PROF_CAT_COMPUTE);
  tb_mark(&t, 7, 9900, 8);
  tb_thread_named(&t, 7, "main", 0);
  return tb_close(&t, "2");
}

static double end_of(const exported *x, const char *name) {
  const prof__jv *e = find(x, "X", name, 0);
  assert_non_null(e);
  return nget(e, "ts") + nget(e, "dur");
}

/* Ranges closed at one instant end 1 ns apart, innermost first, so a viewer
 * adding ts and dur in doubles still sees each end after the one it holds
 * (speedscope nests the rest of the thread wrongly otherwise); a zero-length
 * range is a begin/end pair, which speedscope takes in file order. */
static void ranges_closed_together_end_apart_and_zero_length_is_a_pair(void **state) {
  (void)state;
  exported *x = export_path(closed_together_trace(), NULL);
  assert_non_null(x);
  assert_true(near(end_of(x, "layer"), 4.0)); /* (5000 - 1000) ns after the first event */
  assert_true(near(end_of(x, "batch"), 4.001));
  assert_true(near(end_of(x, "epoch"), 4.002));
  assert_true(near(end_of(x, "inner"), 8.9));
  assert_true(near(end_of(x, "outer"), 8.901));
  assert_null(find(x, "X", "tick", 0));
  const prof__jv *b = find(x, "B", "tick", 0), *e = find(x, "E", "tick", 0);
  assert_non_null(b);
  assert_non_null(e);
  assert_true(near(nget(b, "ts"), 5.0) && near(nget(e, "ts"), 5.0));
  assert_true(b < e); /* begin first in the file */
  assert_string_equal(sget(b, "cat"), "other");
  assert_true(nget(e, "tid") == 7);
  assert_true(near(nget(find(x, "X", "load", 0), "ts"), 5.0));
  free_export(x);
}

typedef struct closed {
  uint32_t name[8];
  uint64_t end[8];
  int n;
} closed;

static void on_close(void *ctx, const prof__exp_crange *r, uint64_t end) {
  closed *c = ctx;
  if (c->n < 8) c->name[c->n] = r->name, c->end[c->n] = end;
  c->n++;
}

/* The open-range stack alone: an end closes the innermost range of its name
 * among the 8 innermost and those it holds, 1 ns apart; an end matching
 * none of them is ignored; ranges past the depth limit are skipped with
 * their ends; what is left closes innermost first. */
static void open_ranges_close_innermost_first_a_nanosecond_apart(void **state) {
  (void)state;
  prof__exp_crange_stack s = {0};
  closed c = {0};
  for (uint32_t name = 1; name <= 10; name++) prof__exp_crange_begin(&s, name, PROF_CAT_COMPUTE, 100 * name);
  prof__exp_crange_end(&s, 2, 5000, on_close, &c); /* 9th from the top: not matched */
  assert_int_equal(c.n, 0);
  prof__exp_crange_end(&s, 7, 5000, on_close, &c); /* closes 10, 9, 8, then 7 */
  assert_int_equal(c.n, 4);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(c.name[i], 10 - i);
    assert_int_equal(c.end[i], 5000 + (uint64_t)i);
  }
  assert_int_equal(s.depth, 6);
  assert_int_equal(prof__exp_crange_top(&s)->name, 6);
  prof__exp_crange_stack_free(&s);
  c.n = 0;
  uint32_t deep = 0;
  for (; s.depth < 100000 && !s.overflow; deep++) prof__exp_crange_begin(&s, 1, PROF_CAT_COMPUTE, deep);
  assert_true(s.overflow == 1 && deep > 1000); /* the model's depth limit */
  assert_null(prof__exp_crange_top(&s));
  prof__exp_crange_begin(&s, 2, PROF_CAT_COMPUTE, deep);
  prof__exp_crange_end(&s, 2, deep, on_close, &c);
  prof__exp_crange_end(&s, 1, deep, on_close, &c);
  assert_int_equal(c.n, 0); /* both ends belong to ranges past the limit */
  prof__exp_crange_end(&s, 1, deep + 10, on_close, &c);
  assert_int_equal(c.n, 1);
  assert_int_equal(c.end[0], deep + 10);
  prof__exp_crange_close_all(&s, UINT64_MAX - 2, on_close, &c);
  assert_int_equal(s.depth, 0);
  assert_int_equal(c.n, (int)deep - 1); /* all but the one past the limit */
  assert_int_equal(c.end[1], UINT64_MAX - 2);
  assert_int_equal(c.end[4], UINT64_MAX); /* never wraps around */
  prof__exp_crange_stack_free(&s);
}

/* A range that begins at the nanosecond the thread's previous complete
 * event ended begins 1 ns later; after a zero-length range (a begin/end
 * pair, whose end is exact) it keeps its time. The same rule on a track of
 * its own (the steps). */
static void back_to_back_ranges_begin_a_nanosecond_apart(void **state) {
  (void)state;
  prof__exp_crange_stack s = {0};
  closed c = {0};
  prof__exp_crange_begin(&s, 1, PROF_CAT_COMPUTE, 100);
  prof__exp_crange_end(&s, 1, 200, on_close, &c);
  prof__exp_crange_begin(&s, 2, PROF_CAT_COMPUTE, 200);
  assert_int_equal(prof__exp_crange_top(&s)->begin, 201);
  prof__exp_crange_end(&s, 2, 300, on_close, &c);
  prof__exp_crange_begin(&s, 3, PROF_CAT_COMPUTE, 301); /* not touching: unchanged */
  assert_int_equal(prof__exp_crange_top(&s)->begin, 301);
  prof__exp_crange_end(&s, 3, 301, on_close, &c); /* zero length */
  prof__exp_crange_begin(&s, 4, PROF_CAT_COMPUTE, 301);
  assert_int_equal(prof__exp_crange_top(&s)->begin, 301);
  prof__exp_crange_end(&s, 4, 301, on_close, &c);
  assert_int_equal(c.n, 4);
  assert_int_equal(c.end[1], 300);
  prof__exp_crange_stack_free(&s);
  prof__exp_crange_track t = {0};
  assert_int_equal(prof__exp_crange_track_begin(&t, 0), 0);
  prof__exp_crange_track_end(&t, 0, 50);
  assert_int_equal(prof__exp_crange_track_begin(&t, 50), 51);
  assert_int_equal(prof__exp_crange_track_begin(&t, 60), 60);
  prof__exp_crange_track_end(&t, 60, 60); /* a pair: not counted */
  assert_int_equal(prof__exp_crange_track_begin(&t, 60), 60);
}

static int timed_events(const exported *x) { return count_ph(x, "X") + count_ph(x, "i") + count_ph(x, "C"); }

static void max_events_caps_and_says_so(void **state) {
  (void)state;
  prof__chrome_opts o = {.max_events = 2};
  exported *x = export_with(&o);
  assert_non_null(x);
  assert_int_equal(timed_events(x), 2);
  const prof__jv *od = prof__jv_get(x->root, "otherData");
  assert_true(prof__jv_get(od, "capped")->boolean);
  assert_true(nget(od, "events_written") == 2);
  assert_true(nget(od, "max_events") == 2);
  free_export(x);
  o.max_events = 100; /* above the 7 timed events: not capped */
  x = export_with(&o);
  assert_int_equal(timed_events(x), 7);
  assert_false(prof__jv_get(prof__jv_get(x->root, "otherData"), "capped")->boolean);
  free_export(x);
}

static void window_keeps_events_overlapping_it(void **state) {
  (void)state;
  /* [1.2 us, 2.0 us) after the first event: the step, forward, matmul and
   * the unclosed load overlap it; marks and counters (>= 3 us) do not. */
  prof__chrome_opts o = {.window_begin_ns = 1200, .window_end_ns = 2000};
  exported *x = export_with(&o);
  assert_non_null(x);
  assert_int_equal(count_ph(x, "X"), 4);
  assert_non_null(find(x, "X", "matmul", 0));
  assert_non_null(find(x, "X", "load", 0));
  assert_int_equal(count_ph(x, "i") + count_ph(x, "C"), 0);
  assert_true(nget(prof__jv_get(x->root, "otherData"), "window_end_ns") == 2000);
  free_export(x);
}

static void gzip_output_decompresses_to_the_same_json(void **state) {
  exported *x = *state;
  prof__an *an = NULL;
  char err[256], cmd[1400];
  assert_int_equal(prof__an_run_opts(&an, chrome_trace(), 1, err), 0);
  const char *gz = th_tmp_path("chrome", ".json.gz");
  assert_true(prof__gz_wanted(gz));
  assert_false(prof__gz_wanted("x.json"));
  FILE *f = prof__gz_open(gz, err);
  assert_non_null(f);
  assert_int_equal(prof__export_chrome(an, f), 0);
  assert_int_equal(fclose(f), 0);
  prof__an_free(an);
  const char *plain = th_tmp_path("chrome-gunzip", ".json");
  snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", gz, plain);
  assert_int_equal(th_run(cmd, NULL), 0);
  size_t len;
  char *text = th_read_file(plain, &len);
  assert_non_null(text);
  assert_int_equal(len, strlen(x->text));
  /* the trace path differs (a new trace file); everything else is equal */
  assert_int_equal(count_ph(x, "X"), 4);
  assert_non_null(strstr(text, "\"traceEvents\""));
  assert_non_null(strstr(text, "\"name\":\"matmul\""));
  free(text);
  assert_null(prof__gz_open("/nonexistent/dir/x.json.gz", err));
  assert_non_null(strstr(err, "/nonexistent/dir/x.json.gz"));
}

/* A gzip export never writes through a symlink planted at its path. */
static void gzip_output_refuses_a_symlink(void **state) {
  (void)state;
  char err[256], victim[600];
  snprintf(victim, sizeof victim, "%s", th_tmp_path("chrome-victim", ".txt"));
  FILE *v = fopen(victim, "w");
  assert_non_null(v);
  fputs("victim", v);
  fclose(v);
  const char *link = th_tmp_path("chrome-link", ".json.gz");
  unlink(link);
  assert_int_equal(symlink(victim, link), 0);
  assert_null(prof__gz_open(link, err));
  assert_non_null(strstr(err, "symbolic link"));
  char *text = th_read_file(victim, NULL);
  assert_string_equal(text, "victim");
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(ranges_are_complete_events_in_microseconds),
    cmocka_unit_test(unclosed_range_ends_at_last_event_of_its_thread),
    cmocka_unit_test(steps_are_on_the_step_thread),
    cmocka_unit_test(threads_and_process_are_named),
    cmocka_unit_test(marks_and_finite_counters_are_exported),
    cmocka_unit_test(tracks_are_sorted_step_thread_first),
    cmocka_unit_test(max_events_caps_and_says_so),
    cmocka_unit_test(window_keeps_events_overlapping_it),
    cmocka_unit_test(gzip_output_decompresses_to_the_same_json),
    cmocka_unit_test(gzip_output_refuses_a_symlink),
    cmocka_unit_test(ranges_keep_their_duration_inside_their_step_past_late_counters),
    cmocka_unit_test(per_thread_counters_get_a_track_per_thread),
    cmocka_unit_test(ranges_closed_together_end_apart_and_zero_length_is_a_pair),
    cmocka_unit_test(back_to_back_ranges_begin_a_nanosecond_apart),
    cmocka_unit_test(open_ranges_close_innermost_first_a_nanosecond_apart),
  };
  return cmocka_run_group_tests(tests, export_setup, export_teardown);
}
