/* test_integration.c — the whole chain on a real program.
 *
 * Runs the example trainer (examples/train_mlp) with profiling on and checks
 * what a user gets: the trace and both reports beside it, 30 steps with the
 * four phase ranges in the JSON report, the same from `mlprof report
 * --format json`, an input-bound finding for a run whose data loading
 * dominates, and a readable (truncated) trace from a run killed with SIGKILL.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/util/jsonparse.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

#define TRAINER MLPROF_BIN_DIR "/examples/train_mlp"
#define CLI MLPROF_BIN_DIR "/mlprof"

/* A fresh, empty output directory. */
static const char *fresh_dir(const char *stem) {
  const char *d = th_tmp_path(stem, "");
  mkdir(d, 0755);
  return d;
}

/* The first *.mlpt file in dir (static buffer), or NULL. */
static const char *find_trace(const char *dir) {
  static char path[1024];
  DIR *d = opendir(dir);
  if (!d) return NULL;
  struct dirent *e;
  const char *found = NULL;
  while (!found && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n > 5 && !strcmp(e->d_name + n - 5, ".mlpt")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      found = path;
    }
  }
  closedir(d);
  return found;
}

/* Run the trainer with `args`, profiling into `dir`; returns its exit status. */
static int run_trainer(const char *dir, const char *args) {
  char cmd[2048];
  const char *log = th_tmp_path("trainer", ".log");
  snprintf(cmd, sizeof cmd, "MLPROF_OUTPUT='%s' MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 '%s' %s", dir, TRAINER, args);
  int rc = th_run(cmd, log);
  if (rc != 0) {
    char *out = th_read_file(log, NULL);
    print_message("%s\n-> %d\n%s\n", cmd, rc, out ? out : "");
    free(out);
  }
  return rc;
}

static prof__jv *parse_file(const char *path) {
  size_t len = 0;
  char *text = th_read_file(path, &len);
  if (!text) {
    print_message("cannot read %s\n", path);
    return NULL;
  }
  char err[128] = "";
  prof__jv *v = prof__jv_parse(text, len, err);
  if (!v) print_message("%s: %s\n", path, err);
  free(text);
  return v;
}

static double num_at(const prof__jv *v, const char *path) {
  const prof__jv *x = prof__jv_path(v, path);
  return x && x->type == PROF_JV_NUM ? x->num : -1;
}

/* The item of array `arr` whose string member `key` equals `val`, or NULL. */
static const prof__jv *find_item(const prof__jv *arr, const char *key, const char *val) {
  if (!arr || arr->type != PROF_JV_ARR) return NULL;
  for (size_t i = 0; i < arr->len; i++) {
    const prof__jv *k = prof__jv_get(&arr->items[i], key);
    if (k && k->type == PROF_JV_STR && !strcmp(k->str, val)) return &arr->items[i];
  }
  return NULL;
}

/* A 30-step report: step count, each phase range 30 times with its category. */
static void check_30_step_report(const prof__jv *rep) {
  assert_non_null(rep);
  assert_true(num_at(rep, "steps.count") == 30);
  const prof__jv *ranges = prof__jv_get(rep, "ranges");
  static const char *phases[] = {"data", "forward", "backward", "optimizer"};
  for (int i = 0; i < 4; i++) {
    const prof__jv *r = find_item(ranges, "name", phases[i]);
    if (!r) print_message("range %s missing from the report\n", phases[i]);
    assert_non_null(r);
    assert_true(num_at(r, "count") == 30);
    const prof__jv *cat = prof__jv_get(r, "category");
    assert_non_null(cat);
    assert_string_equal(cat->str, i == 0 ? "data" : "compute");
  }
}

static void trainer_writes_trace_and_both_reports(void **state) {
  (void)state;
  const char *dir = fresh_dir("train30");
  assert_int_equal(run_trainer(dir, "--steps 30"), 0);
  const char *trace = find_trace(dir);
  assert_non_null(trace);
  char txt[1100], json[1100];
  snprintf(txt, sizeof txt, "%s.report.txt", trace);
  snprintf(json, sizeof json, "%s.report.json", trace);
  assert_true(th_exists(txt));
  assert_true(th_exists(json));
  prof__jv *rep = parse_file(json);
  check_30_step_report(rep);
  prof__jv_free(rep);
}

static void cli_report_json_matches_the_run(void **state) {
  (void)state;
  const char *dir = fresh_dir("cli30");
  assert_int_equal(run_trainer(dir, "--steps 30"), 0);
  const char *trace = find_trace(dir);
  assert_non_null(trace);
  char cmd[2048];
  const char *out = th_tmp_path("cli-report", ".json");
  snprintf(cmd, sizeof cmd, "'%s' report --format json '%s' >'%s'", CLI, trace, out);
  assert_int_equal(th_run(cmd, NULL), 0);
  prof__jv *rep = parse_file(out);
  check_30_step_report(rep);
  prof__jv_free(rep);
}

static void slow_data_run_is_input_bound(void **state) {
  (void)state;
  const char *dir = fresh_dir("slow");
  assert_int_equal(run_trainer(dir, "--steps 60 --slow-data"), 0);
  const char *trace = find_trace(dir);
  assert_non_null(trace);
  char json[1100];
  snprintf(json, sizeof json, "%s.report.json", trace);
  prof__jv *rep = parse_file(json);
  assert_non_null(rep);
  const prof__jv *f = find_item(prof__jv_get(rep, "findings"), "id", "input_bound");
  assert_non_null(f);
  const prof__jv *sev = prof__jv_get(f, "severity");
  assert_non_null(sev);
  assert_string_equal(sev->str, "high");
  prof__jv_free(rep);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Read the trace as far as it goes: the number of completed steps, and the
 * reader's last answer in *last (0 clean end, PROF_ETRUNC, ...). -1 if the
 * trace cannot be opened (yet). */
static long count_steps(const char *trace, int *last) {
  prof__reader *r = NULL;
  char err[256] = "";
  if (prof__reader_open(&r, trace, err) != 0) return -1;
  prof__rec rec;
  long steps = 0;
  int n;
  while ((n = prof__reader_next(r, &rec)) == 1)
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_STEP_END) steps++;
  if (last) *last = n;
  prof__reader_close(r);
  return steps;
}

/* Start the trainer for a long run, wait until its trace holds `min_steps`
 * completed steps, and SIGKILL it. Returns 0 when it died by the signal. */
static int run_and_kill(const char *trace, long min_steps) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("MLPROF_OUTPUT", trace, 1);
    setenv("MLPROF_REPORT", "0", 1);
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execl(TRAINER, TRAINER, "--steps", "100000000", (char *)NULL);
    _exit(127);
  }
  if (pid < 0) return -1;
  for (int i = 0; i < 600 && count_steps(trace, NULL) < min_steps; i++) sleep_ms(100); /* <= ~60 s */
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

static void killed_run_leaves_a_readable_truncated_trace(void **state) {
  (void)state;
  const char *trace = th_tmp_path("killed", ".mlpt");
  assert_int_equal(run_and_kill(trace, 5), 0);

  /* The reader delivers the complete chunks, then says "truncated". */
  int last = 1;
  long steps = count_steps(trace, &last);
  assert_true(steps >= 5);
  assert_int_equal(last, PROF_ETRUNC);

  /* The command reads it too, and says so. */
  char cmd[2048];
  const char *out = th_tmp_path("killed-info", ".txt");
  snprintf(cmd, sizeof cmd, "'%s' info '%s'", CLI, trace);
  int rc = th_run(cmd, out);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  int said = strcasestr(text, "truncated") != NULL;
  if (!said || rc != 0) print_message("mlprof info (exit status %d) said:\n%s\n", rc, text);
  free(text);
  assert_true(said);
  assert_int_equal(rc, 0); /* truncated is still readable: info succeeds */
}

/* Built with -DMLPROF_BUILD_EXAMPLES=OFF there is nothing to run. */
static int need_trainer(void **state) {
  (void)state;
  if (!th_exists(TRAINER)) {
    print_message("%s not built\n", TRAINER);
    return -1;
  }
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(trainer_writes_trace_and_both_reports),
    cmocka_unit_test(cli_report_json_matches_the_run),
    cmocka_unit_test(slow_data_run_is_input_bound),
    cmocka_unit_test(killed_run_leaves_a_readable_truncated_trace),
  };
  return cmocka_run_group_tests(tests, need_trainer, NULL);
}
