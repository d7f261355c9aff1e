/* test_functions.c — the "functions" section from real sampled runs: a
 * planted hot function ranks first by self samples, its only caller first
 * by total; a sleeping loader thread shows in wall-clock mode only; steps
 * are classified compute vs waiting; the hot_function finding fires. Each
 * run happens in a forked child (one session per process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"
#include "helpers.h"
#include "mlprof.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

volatile double sink;
/* Non-static so the symbol table names them whatever the optimiser does. */
__attribute__((noinline)) void planted_hot_leaf(double seconds) {
  double x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < seconds)
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}
__attribute__((noinline)) void planted_caller(void) {
  planted_hot_leaf(0.5);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void sleepy_loader(void) {
  struct timespec ts = {0, 400 * 1000000L}, rem;
  while (nanosleep(&ts, &rem) != 0) ts = rem;
  __asm__ volatile("" ::: "memory");
}
static void *loader_thread(void *arg) {
  (void)arg;
  sleepy_loader();
  return NULL;
}

static void hot_scenario(void) {
  for (int i = 0; i < 2; i++) {
    prof_start();
    prof_range_push("forward");
    planted_caller();
    prof_range_pop();
    prof_stop();
  }
  prof_start(); /* a waiting step */
  struct timespec ts = {0, 200 * 1000000L};
  nanosleep(&ts, NULL);
  prof_stop();
}

static void loader_scenario(void) {
  pthread_t th;
  pthread_create(&th, NULL, loader_thread, NULL);
  planted_hot_leaf(0.1);
  pthread_join(th, NULL);
}

static void run_child(const char *path, const char *mode, void (*fn)(void)) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    setenv("MLPROF_SAMPLE_MODE", mode, 1);
    prof_config c = prof_config_default();
    c.output = path;
    c.report = 0;
    if (prof_init(&c) != 0) _exit(3);
    fn();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Analyze and return the parsed JSON report (caller frees). */
static prof__jv *report_of(const char *path, char **text_out) {
  char err[256];
  prof__an *an;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *buf = NULL, *tbuf = NULL;
  size_t len = 0, tlen = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, "json", f), 0);
  fclose(f);
  f = open_memstream(&tbuf, &tlen);
  assert_int_equal(prof__report_write(an, "text", f), 0);
  fclose(f);
  prof__an_free(an);
  prof__jv *v = prof__jv_parse(buf, len, err);
  if (!v) fail_msg("report JSON does not parse: %s", err);
  free(buf);
  if (text_out) *text_out = tbuf;
  else free(tbuf);
  return v;
}

static const prof__jv *find_func(const prof__jv *arr, const char *name) {
  for (size_t i = 0; arr && i < arr->len; i++) {
    const prof__jv *n = prof__jv_get(&arr->items[i], "name");
    if (n && n->str && strcmp(n->str, name) == 0) return &arr->items[i];
  }
  return NULL;
}

static void hot_leaf_first_by_self_caller_first_by_total(void **state) {
  (void)state;
  const char *path = th_tmp_path("functions_hot", ".mlpt");
  run_child(path, "cpu", hot_scenario);
  char *text;
  prof__jv *r = report_of(path, &text);
  const prof__jv *fn = prof__jv_get(r, "functions");
  assert_non_null(fn);
  assert_string_equal(prof__jv_get(fn, "mode")->str, "cpu");
  /* the event counts agree: recorded (the footer's) + the profiler's = read */
  const prof__jv *tr = prof__jv_get(r, "trace");
  const prof__jv *rec = prof__jv_get(tr, "events_recorded"), *own = prof__jv_get(tr, "events_profiler");
  assert_true(rec && own);
  assert_true(rec->num + own->num == prof__jv_get(tr, "events")->num);
  assert_true(rec->num == strtod(prof__jv_get(prof__jv_get(tr, "footer"), "events_written")->str, NULL));
  assert_true(own->num > 0); /* the samples and counter readings */
  const prof__jv *self = prof__jv_get(fn, "top_self"), *total = prof__jv_get(fn, "top_total");
  assert_true(self && self->len >= 1 && total && total->len >= 2);
  assert_string_equal(prof__jv_get(&self->items[0], "name")->str, "planted_hot_leaf");
  assert_true(prof__jv_get(&self->items[0], "self_pct")->num > 80);
  /* planted_caller's total equals the leaf's; main and the test runner
   * above it have at least as much, so look at the caller's share */
  const prof__jv *caller = find_func(total, "planted_caller");
  assert_non_null(caller);
  assert_true(prof__jv_get(caller, "total_pct")->num > 80);
  assert_true(prof__jv_get(caller, "self_pct")->num < 5);
  const prof__jv *caller_self = find_func(self, "planted_caller");
  assert_true(!caller_self || prof__jv_get(caller_self, "self_pct")->num < 5);
  /* call tree: planted_caller -> planted_hot_leaf is the top edge */
  const prof__jv *tree = prof__jv_get(fn, "call_tree");
  int edge = 0;
  for (size_t i = 0; tree && i < tree->len; i++)
    if (strcmp(prof__jv_get(&tree->items[i], "caller")->str, "planted_caller") == 0 &&
        strcmp(prof__jv_get(&tree->items[i], "callee")->str, "planted_hot_leaf") == 0 &&
        prof__jv_get(&tree->items[i], "pct")->num > 80)
      edge = 1;
  assert_true(edge);
  /* the range "forward" holds the samples, with the leaf on top */
  const prof__jv *ranges = prof__jv_get(fn, "ranges");
  assert_true(ranges && ranges->len >= 1);
  assert_string_equal(prof__jv_get(&ranges->items[0], "range")->str, "forward");
  assert_string_equal(prof__jv_get(prof__jv_at(prof__jv_get(&ranges->items[0], "top_self"), 0), "name")->str,
                      "planted_hot_leaf");
  /* steps: two that burned ~0.5 s of CPU each, one that slept (its kind is
   * "waiting"; the busy ones' kind depends on the machine's load, so only
   * their CPU time is checked) */
  const prof__jv *steps = prof__jv_get(fn, "steps");
  assert_true(steps && steps->len == 3);
  for (int i = 0; i < 2; i++) {
    double c = prof__jv_get(&steps->items[i], "cpu_ms")->num;
    assert_true(c > 300 && c < 700);
  }
  assert_true(prof__jv_get(&steps->items[2], "cpu_ms")->num < 20);
  assert_string_equal(prof__jv_get(&steps->items[2], "kind")->str, "waiting");
  /* the finding */
  const prof__jv *findings = prof__jv_get(r, "findings");
  int hot = 0;
  for (size_t i = 0; findings && i < findings->len; i++) {
    const prof__jv *id = prof__jv_get(&findings->items[i], "id");
    if (id && strcmp(id->str, "hot_function") == 0) hot = 1;
  }
  assert_true(hot);
  assert_non_null(strstr(text, "planted_hot_leaf"));
  free(text);
  /* the counters section: per-step CPU time of the step thread from the
   * counter readings agrees with what the steps burned */
  const prof__jv *ctr = prof__jv_get(r, "counters");
  assert_non_null(ctr);
  const char *src = prof__jv_get(ctr, "source")->str;
  assert_true(strcmp(src, "software") == 0 || strcmp(src, "papi+software") == 0);
  const prof__jv *ps = prof__jv_get(ctr, "per_step");
  assert_true(ps && ps->len == 3);
  for (int i = 0; i < 2; i++) {
    double c = prof__jv_get(&ps->items[i], "cpu_ms")->num;
    assert_true(c > 350 && c < 650);
  }
  assert_true(prof__jv_get(&ps->items[2], "cpu_ms")->num < 20);
  prof__jv_free(r);
}

static double func_pct(const prof__jv *r, const char *name) {
  const prof__jv *fn = prof__jv_get(r, "functions");
  const prof__jv *f = fn ? find_func(prof__jv_get(fn, "top_self"), name) : NULL;
  return f ? prof__jv_get(f, "self_pct")->num : 0;
}

static void sleeping_loader_shows_in_wall_mode_only(void **state) {
  (void)state;
  const char *cpu = th_tmp_path("functions_cpu", ".mlpt"), *wall = th_tmp_path("functions_wall", ".mlpt");
  run_child(cpu, "cpu", loader_scenario);
  run_child(wall, "wall", loader_scenario);
  prof__jv *rc = report_of(cpu, NULL), *rw = report_of(wall, NULL);
  /* the sleeping thread's innermost frame is in libc (nanosleep); its
   * function shows as total time, so check the total list */
  const prof__jv *tw = prof__jv_get(prof__jv_get(rw, "functions"), "top_total");
  const prof__jv *tc = prof__jv_get(prof__jv_get(rc, "functions"), "top_total");
  const prof__jv *lw = find_func(tw, "sleepy_loader"), *lc = find_func(tc, "sleepy_loader");
  assert_non_null(lw);
  assert_true(prof__jv_get(lw, "total_pct")->num > 20);
  if (lc) print_message("sleepy_loader in CPU mode: %.2f %% of the samples\n", prof__jv_get(lc, "total_pct")->num);
  assert_true(!lc || prof__jv_get(lc, "total_pct")->num < 5);
  /* In CPU mode the busy thread dominates (the share is loose: the
   * profiler's own writer thread and a loaded machine take samples too). */
  const prof__jv *top = prof__jv_get(prof__jv_get(rc, "functions"), "top_self");
  assert_true(top && top->len > 0);
  if (strcmp(prof__jv_get(&top->items[0], "name")->str, "planted_hot_leaf") != 0 ||
      func_pct(rc, "planted_hot_leaf") <= 50)
    for (size_t i = 0; i < top->len && i < 5; i++)
      print_message("CPU mode, top self %zu: %s %.2f %%\n", i, prof__jv_get(&top->items[i], "name")->str,
                    prof__jv_get(&top->items[i], "self_pct")->num);
  assert_string_equal(prof__jv_get(&top->items[0], "name")->str, "planted_hot_leaf");
  assert_true(func_pct(rc, "planted_hot_leaf") > 50);
  prof__jv_free(rc);
  prof__jv_free(rw);
}

/* ---- off-CPU time: waiting for a core vs blocked ------------------------ */

static volatile int competitor_stop;

static void *competitor(void *arg) {
  (void)arg;
  volatile unsigned long x = 0;
  while (!__atomic_load_n(&competitor_stop, __ATOMIC_RELAXED)) x++;
  return NULL;
}

static void busy_wall_ms(int ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  volatile unsigned long x = 0;
  do {
    for (int i = 0; i < 10000; i++) x++;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* One CPU shared with a spinning thread: the step thread waits for the
 * core about half of a busy step; a sleeping step is blocked, not queued. */
static void starved_scenario(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one); /* the whole process: threads created later inherit it */
  pthread_t th;
  pthread_create(&th, NULL, competitor, NULL);
  prof_start();
  busy_wall_ms(400);
  prof_stop();
  __atomic_store_n(&competitor_stop, 1, __ATOMIC_RELAXED);
  pthread_join(th, NULL);
  prof_start();
  struct timespec ts = {0, 300 * 1000000L};
  nanosleep(&ts, NULL);
  prof_stop();
}

static void off_cpu_time_splits_into_run_queue_and_blocked(void **state) {
  (void)state;
  const char *path = th_tmp_path("functions_starved", ".mlpt");
  run_child(path, "cpu", starved_scenario);
  char *text;
  prof__jv *r = report_of(path, &text);
  const prof__jv *ps = prof__jv_get(prof__jv_get(r, "counters"), "per_step");
  assert_true(ps && ps->len == 2);
  const prof__jv *q0 = prof__jv_get(&ps->items[0], "runq_ms"), *q1 = prof__jv_get(&ps->items[1], "runq_ms");
  if (access("/proc/self/schedstat", R_OK) != 0) skip(); /* a kernel without schedstat */
  assert_non_null(q0);
  assert_non_null(q1);
  print_message("run-queue wait: busy step %.1f ms, sleeping step %.1f ms\n", q0->num, q1->num);
  assert_true(q0->num > 80);  /* of ~400 ms sharing one core with a spinner */
  /* a sleep is blocked time, not queued: of the 300 ms only the wake-up
   * waits for the core (on a loaded machine that wait can reach tens of ms) */
  assert_true(q1->num < 150);
  assert_non_null(strstr(text, "waiting for a core (run queue)"));
  free(text);
  prof__jv_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hot_leaf_first_by_self_caller_first_by_total),
      cmocka_unit_test(sleeping_loader_shows_in_wall_mode_only),
      cmocka_unit_test(off_cpu_time_splits_into_run_queue_and_blocked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
