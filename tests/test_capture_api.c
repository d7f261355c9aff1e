/* test_capture_api.c — captures asked for by the program (prof_capture,
 * prof_capture_done) and reports written from inside it (prof_report):
 * a capture of N steps holds exactly those steps in a complete trace of its
 * own and is counted once finished; an open-ended capture ends at
 * prof_capture(0); a second request while one is pending is refused;
 * prof_report writes JSON of the live trace and a Chrome trace of a capture,
 * and refuses an unknown format. Jobs run in forked children. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

static int steps_in(const char *path, uint64_t *first, int *complete) {
  prof__reader *r;
  char err[256];
  if (prof__reader_open(&r, path, err) != 0) return -1;
  prof__rec rec;
  int rc, n = 0;
  while ((rc = prof__reader_next(r, &rec)) == 1)
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_STEP_BEGIN && n++ == 0) *first = rec.ev.a;
  *complete = rc == 0;
  prof__reader_close(r);
  return n;
}

static void one_step(void) {
  prof_start();
  prof_range_push("work");
  usleep(2000);
  prof_range_pop();
  prof_stop();
}

/* Wait (at most ~20 s) until `count` captures are finished; their paths. */
static int wait_done(uint64_t count, char paths[][4096]) {
  for (int i = 0; i < 2000 && prof_capture_done(0, NULL, 0) < count; i++) usleep(10000);
  if (prof_capture_done(0, NULL, 0) < count) return -1;
  for (uint64_t k = 1; k <= count; k++) prof_capture_done(k, paths[k - 1], 4096);
  return 0;
}

static int child(const char *trace, const char *dir) {
  prof_config c = prof_config_default();
  c.output = trace;
  c.report = 0;
  if (prof_init(&c) != 0) return 3;
  if (prof_capture_done(0, NULL, 0) != 0) return 4;
  one_step();                                       /* step 0: not captured */
  if (prof_capture(2) != 0) return 5;               /* steps 1 and 2 */
  if (prof_capture(3) != PROF_ESTATE) return 6;     /* one at a time */
  for (int i = 0; i < 3; i++) one_step();           /* steps 1..3 */
  if (prof_capture(1000000) != 0) return 7;         /* open-ended, from step 4 */
  one_step();
  one_step();                                       /* steps 4, 5 */
  if (prof_capture(0) != 0) return 8;               /* ends between steps */
  one_step();                                       /* step 6: not captured */
  char paths[2][4096], out[4200];
  if (wait_done(2, paths) != 0) return 9;
  char want[4200];
  snprintf(want, sizeof want, "%.*s.capture1.mlpt", (int)(strlen(trace) - 5), trace);
  if (strcmp(paths[0], want) != 0) return 10;
  snprintf(want, sizeof want, "%.*s.capture2.mlpt", (int)(strlen(trace) - 5), trace);
  if (strcmp(paths[1], want) != 0) return 11;
  snprintf(out, sizeof out, "%s/live.json", dir);
  if (prof_report(NULL, "json", out) != 0) return 12;
  snprintf(out, sizeof out, "%s/capture1.chrome.json", dir);
  if (prof_report(paths[0], "chrome", out) != 0) return 13;
  if (prof_report(paths[0], "pdf", out) != PROF_EINVAL) return 14;
  return prof_shutdown() == 0 ? 0 : 15;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static void program_captures(void **state) {
  (void)state;
  const char *trace = th_tmp_path("capture_api", ".mlpt");
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(trace, '/') - trace), trace);
  char seg[4200];
  for (int k = 1; k <= 2; k++) { /* an earlier run's captures would push the names on */
    snprintf(seg, sizeof seg, "%.*s.capture%d.mlpt", (int)(strlen(trace) - 5), trace, k);
    unlink(seg);
  }
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(child(trace, dir));
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail_msg("child failed: status %d", WEXITSTATUS(st));
  uint64_t first = 0;
  int complete = 0;
  snprintf(seg, sizeof seg, "%.*s.capture1.mlpt", (int)(strlen(trace) - 5), trace);
  assert_int_equal(steps_in(seg, &first, &complete), 2);
  assert_int_equal(first, 1);
  assert_true(complete);
  snprintf(seg, sizeof seg, "%.*s.capture2.mlpt", (int)(strlen(trace) - 5), trace);
  assert_int_equal(steps_in(seg, &first, &complete), 2);
  assert_int_equal(first, 4);
  assert_true(complete);
  assert_int_equal(steps_in(trace, &first, &complete), 7); /* the main trace has every step */
  char path[4200];
  snprintf(path, sizeof path, "%s/live.json", dir);
  const char *live = slurp(path);
  assert_non_null(live);
  assert_non_null(strstr(live, "\"live_snapshot\""));
  assert_non_null(strstr(live, "\"work\""));
  snprintf(path, sizeof path, "%s/capture1.chrome.json", dir);
  const char *chrome = slurp(path);
  assert_non_null(chrome);
  assert_non_null(strstr(chrome, "traceEvents"));
  assert_non_null(strstr(chrome, "\"work\""));
}

static void refused_when_not_running(void **state) {
  (void)state;
  assert_int_equal(prof_capture(3), PROF_ESTATE);
  assert_int_equal(prof_report(NULL, "json", "/dev/null"), PROF_ESTATE);
  assert_int_equal(prof_report(NULL, NULL, "/dev/null"), PROF_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refused_when_not_running),
      cmocka_unit_test(program_captures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
