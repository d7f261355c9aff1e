/* test_capture.c — interactive profiling through real processes: the
 * step schedule (only active steps recorded, one complete trace per cycle),
 * on-demand capture from the live page and from the signal, `mlprof top
 * --once` and `mlprof trigger` against a running job, and MLPROF_BREAK_AT
 * with `mlprof resume`. Jobs run in forked children; the live pages go to
 * the test's tmp folder (MLPROF_LIVE_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "mlprof.h"
#include "live/live.h"
#include "trace/trace.h"

#define CLI MLPROF_BIN_DIR "/mlprof"

typedef struct trace_facts {
  int complete;
  int nsteps;
  uint64_t steps[64];
  uint64_t misuse;
  int work_ranges;
} trace_facts;

static int read_facts(const char *path, trace_facts *f) {
  memset(f, 0, sizeof *f);
  prof__reader *r;
  char err[256];
  if (prof__reader_open(&r, path, err) != 0) return -1;
  prof__rec rec;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_STEP_BEGIN && f->nsteps < 64)
      f->steps[f->nsteps++] = rec.ev.a;
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_RANGE_BEGIN) f->work_ranges++;
    if (rec.kind == PROF_REC_FOOTER && strcmp(rec.key, "misuse") == 0) f->misuse = strtoull(rec.value, NULL, 10);
  }
  f->complete = rc == 0;
  prof__reader_close(r);
  return 0;
}

static void expect_steps(const trace_facts *f, const uint64_t *want, int n) {
  if (f->nsteps != n) fail_msg("%d steps, expected %d", f->nsteps, n);
  for (int i = 0; i < n; i++)
    if (f->steps[i] != want[i]) fail_msg("step %d is %llu, expected %llu", i, (unsigned long long)f->steps[i],
                                         (unsigned long long)want[i]);
}

static void one_step(int sleep_us) {
  prof_start();
  prof_range_push("work");
  prof_scalar("train/loss", 1.0);
  if (sleep_us) usleep((useconds_t)sleep_us);
  prof_range_pop();
  prof_stop();
}

static int wait_child(pid_t pid) {
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* "<base>.<kind><k>.mlpt" beside a trace "<base>.mlpt" */
static void seg_path(char *out, size_t n, const char *trace, const char *kind, int k) {
  snprintf(out, n, "%.*s.%s%d.mlpt", (int)(strlen(trace) - 5), trace, kind, k);
}

/* ---- schedule ------------------------------------------------------------------- */

static int scenario_schedule(const char *path) {
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  c.schedule = "skip_first=2,wait=1,warmup=1,active=2,repeat=2";
  if (prof_init(&c) != 0) return 1;
  prof_range_push("setup"); /* before any step: not an active step */
  prof_range_pop();
  for (int s = 0; s < 14; s++) one_step(0);
  return prof_shutdown() ? 2 : 0;
}

static void schedule_records_active_steps_one_trace_per_cycle(void **state) {
  (void)state;
  const char *path = th_tmp_path("sched", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_schedule(path));
  assert_int_equal(wait_child(pid), 0);
  trace_facts f;
  const uint64_t all[] = {4, 5, 8, 9}, c1[] = {4, 5}, c2[] = {8, 9};
  assert_int_equal(read_facts(path, &f), 0);
  assert_true(f.complete);
  expect_steps(&f, all, 4);
  assert_int_equal(f.work_ranges, 4); /* "setup" and paused steps left out */
  assert_int_equal(f.misuse, 0);      /* calls while paused are not misuse */
  char p[600];
  seg_path(p, sizeof p, path, "cycle", 1);
  assert_int_equal(read_facts(p, &f), 0);
  assert_true(f.complete);
  expect_steps(&f, c1, 2);
  assert_int_equal(f.work_ranges, 2);
  seg_path(p, sizeof p, path, "cycle", 2);
  assert_int_equal(read_facts(p, &f), 0);
  assert_true(f.complete);
  expect_steps(&f, c2, 2);
  seg_path(p, sizeof p, path, "cycle", 3);
  assert_false(th_exists(p));
}

static int scenario_back_to_back(const char *path) {
  setenv("MLPROF_SCHEDULE", "active=3,repeat=3", 1);
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  if (prof_init(&c) != 0) return 1;
  for (int s = 0; s < 12; s++) one_step(0); /* faster than the writer: cycles wait in slots */
  return prof_shutdown() ? 2 : 0;
}

static void back_to_back_cycles_from_the_environment(void **state) {
  (void)state;
  const char *path = th_tmp_path("sched-env", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_back_to_back(path));
  assert_int_equal(wait_child(pid), 0);
  trace_facts f;
  char p[600];
  for (int k = 1; k <= 3; k++) {
    const uint64_t want[] = {(uint64_t)(k - 1) * 3, (uint64_t)(k - 1) * 3 + 1, (uint64_t)(k - 1) * 3 + 2};
    seg_path(p, sizeof p, path, "cycle", k);
    assert_int_equal(read_facts(p, &f), 0);
    assert_true(f.complete);
    expect_steps(&f, want, 3);
  }
  assert_int_equal(read_facts(path, &f), 0);
  assert_int_equal(f.nsteps, 9);
}

/* ---- on-demand ---------------------------------------------------------------------- */

static int scenario_trigger(const char *path) {
  setenv("MLPROF_TRIGGER_STEPS", "3", 1);
  setenv("MLPROF_TRIGGER_SIGNAL", "USR2", 1); /* no trigger signal unless named */
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  if (prof_init(&c) != 0) return 1;
  prof__live_page *p = prof__live_self();
  if (!p) return 2;
  for (int s = 0; s < 4; s++) one_step(0);
  __atomic_store_n(&p->ctl.trigger_steps, 2, __ATOMIC_RELEASE); /* what `mlprof trigger` does */
  for (int s = 4; s < 9; s++) one_step(0);
  raise(SIGUSR2);
  for (int s = 9; s < 14; s++) one_step(0);
  return prof_shutdown() ? 3 : 0;
}

static void trigger_from_page_and_signal_captures_next_steps(void **state) {
  (void)state;
  const char *path = th_tmp_path("trig", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_trigger(path));
  assert_int_equal(wait_child(pid), 0);
  trace_facts f;
  char p[600];
  const uint64_t t1[] = {4, 5}, t2[] = {9, 10, 11};
  seg_path(p, sizeof p, path, "trigger", 1);
  assert_int_equal(read_facts(p, &f), 0);
  assert_true(f.complete);
  expect_steps(&f, t1, 2);
  seg_path(p, sizeof p, path, "trigger", 2);
  assert_int_equal(read_facts(p, &f), 0);
  expect_steps(&f, t2, 3);
  assert_int_equal(read_facts(path, &f), 0);
  assert_int_equal(f.nsteps, 14); /* the main trace keeps every step */
}

/* ---- live tools against a running job ------------------------------------------------- */

static int scenario_slow_job(const char *path) {
  setenv("MLPROF_CLI", CLI, 1); /* the capture's report by the mlprof command, as a linked program's */
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 1;
  if (prof_init(&c) != 0) return 1;
  for (int s = 0; s < 400; s++) one_step(10000); /* ~4 s */
  return prof_shutdown() ? 2 : 0;
}

static prof__live_page *wait_page(pid_t pid) {
  for (int i = 0; i < 500; i++) {
    prof__live_page *p = prof__livepage_open(pid, NULL, 0);
    if (p) return p;
    usleep(10000);
  }
  return NULL;
}

static void top_once_and_trigger_on_a_running_job(void **state) {
  (void)state;
  const char *path = th_tmp_path("live", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_slow_job(path));
  prof__live_page *p = wait_page(pid), v;
  assert_non_null(p);
  for (int i = 0; i < 300; i++) { /* until the top ranges are published (about 1 s) */
    if (prof__livepage_read(p, &v) == 0 && v.bg.nranges > 0 && v.step.steps >= 3) break;
    usleep(10000);
  }
  assert_true(v.bg.nranges > 0);
  assert_int_equal(v.pid, pid);
  /* every step sleeps >= 10 ms, also the first ones (before the clock was calibrated) */
  assert_true(v.step.min_step_ns >= 10000000ull);
  assert_true(v.step.max_step_ns >= v.step.min_step_ns);
  assert_true(v.bg.peak_rss_bytes >= v.bg.rss_bytes);
  char cmd[1024];
  const char *out = th_tmp_path("top", ".txt");
  snprintf(cmd, sizeof cmd, CLI " top %d --once", (int)pid);
  assert_int_equal(th_run(cmd, out), 0);
  char *txt = th_read_file(out, NULL);
  assert_non_null(txt);
  char want[64];
  snprintf(want, sizeof want, "pid %d", (int)pid);
  assert_non_null(strstr(txt, want));
  assert_non_null(strstr(txt, "steps:"));
  assert_non_null(strstr(txt, "throughput"));
  assert_non_null(strstr(txt, "memory: rss"));
  assert_non_null(strstr(txt, "work"));
  free(txt);
  /* on a terminal, 'q' quits at once (a 1-hour refresh period would
   * otherwise keep it until the timeout) */
  if (system("command -v script >/dev/null 2>&1") == 0) {
    snprintf(cmd, sizeof cmd, "printf q | timeout 20 script -qec '" CLI " top %d --interval 3600' /dev/null", (int)pid);
    out = th_tmp_path("top-q", ".txt");
    assert_int_equal(th_run(cmd, out), 0);
  } else {
    print_message("script(1) not installed: the 'q' key of mlprof top is not checked\n");
  }
  snprintf(cmd, sizeof cmd, CLI " trigger %d --steps 3 --timeout 30", (int)pid);
  out = th_tmp_path("trigger", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  txt = th_read_file(out, NULL);
  char seg[600];
  seg_path(seg, sizeof seg, path, "trigger", 1);
  assert_non_null(strstr(txt, seg));
  free(txt);
  trace_facts f;
  assert_int_equal(read_facts(seg, &f), 0);
  assert_true(f.complete);
  assert_int_equal(f.nsteps, 3);
  assert_int_equal(f.steps[1], f.steps[0] + 1);
  char rep[700];
  snprintf(rep, sizeof rep, "%s.report.txt", seg);
  assert_true(th_exists(rep)); /* trigger names the capture once its reports exist */
  snprintf(rep, sizeof rep, "%s.report.json", seg);
  txt = th_read_file(rep, NULL);
  assert_non_null(txt);
  assert_non_null(strstr(txt, "\"written_by\": \"cli\""));
  free(txt);
  prof__livepage_close(p);
  kill(pid, SIGKILL);
  wait_child(pid);
  snprintf(cmd, sizeof cmd, CLI " top %d --once", (int)pid); /* killed: the page stays, the process is gone */
  out = th_tmp_path("top-gone", ".txt");
  assert_int_equal(th_run(cmd, out), 0);
  txt = th_read_file(out, NULL);
  assert_non_null(strstr(txt, "process ended"));
  free(txt);
  char page[600];
  prof__livepage_path((int)pid, page, sizeof page);
  unlink(page);
}

static void top_without_a_page_fails_cleanly(void **state) {
  (void)state;
  assert_int_equal(th_run(CLI " top abc --once", th_tmp_path("nopage", ".txt")), 1);
  assert_int_equal(th_run(CLI " top --once", th_tmp_path("nopage", ".txt")), 1);
  assert_int_equal(th_run(CLI " top 2147483000 --once", th_tmp_path("nopage", ".txt")), 2);
  assert_int_equal(th_run(CLI " trigger x", th_tmp_path("nopage", ".txt")), 1);
}

/* ---- break and resume ------------------------------------------------------------------- */

static int scenario_break(const char *path) {
  setenv("MLPROF_BREAK_AT", "step:3", 1);
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  if (prof_init(&c) != 0) return 1;
  for (int s = 0; s < 6; s++) one_step(0);
  return prof_shutdown() ? 2 : 0;
}

static void break_at_step_pauses_until_resume(void **state) {
  (void)state;
  const char *path = th_tmp_path("brk", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_break(path));
  prof__live_page *p = wait_page(pid), v;
  assert_non_null(p);
  int paused = 0;
  for (int i = 0; i < 1000 && !paused; i++) {
    paused = prof__livepage_read(p, &v) == 0 && v.ctl.paused_step == 4;
    if (!paused) usleep(10000);
  }
  assert_true(paused);
  usleep(100000);
  assert_int_equal(waitpid(pid, NULL, WNOHANG), 0); /* still waiting */
  prof__livepage_read(p, &v);
  assert_int_equal(v.step.steps, 3);                /* steps 0..2 done, 3 not begun */
  char snap[600];
  snprintf(snap, sizeof snap, "%s.snapshot.txt", path);
  assert_string_equal(v.ctl.last_snapshot, snap);
  char *txt = th_read_file(snap, NULL);
  assert_non_null(txt);
  /* a paused, live job: never "truncated" or "killed" */
  assert_null(strstr(txt, "killed"));
  assert_null(strstr(txt, "truncated"));
  assert_non_null(strstr(txt, "Snapshot of a running program"));
  free(txt);
  char cmd[256];
  snprintf(cmd, sizeof cmd, CLI " resume %d", (int)pid);
  assert_int_equal(th_run(cmd, th_tmp_path("resume", ".txt")), 0);
  prof__livepage_close(p);
  assert_int_equal(wait_child(pid), 0);
  trace_facts f;
  assert_int_equal(read_facts(path, &f), 0);
  assert_int_equal(f.nsteps, 6);
}

int main(void) {
  setenv("MLPROF_LIVE_DIR", MLPROF_TEST_TMP, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(schedule_records_active_steps_one_trace_per_cycle),
      cmocka_unit_test(back_to_back_cycles_from_the_environment),
      cmocka_unit_test(trigger_from_page_and_signal_captures_next_steps),
      cmocka_unit_test(top_once_and_trigger_on_a_running_job),
      cmocka_unit_test(top_without_a_page_fails_cleanly),
      cmocka_unit_test(break_at_step_pauses_until_resume),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
