/* test_env.c — every MLPROF_* environment value is range-checked: a bad
 * value is ignored with one clear message naming it, the default applies,
 * and no value can make the profiler break the program (a schedule whose
 * cycle length overflows used to divide by zero). Switches take only
 * 1/true/yes/on for yes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/config.h"
#include "cpu/cpu.h"
#include "helpers.h"
#include "mlprof.h"

static const char *const vars[] = {"MLPROF_DISABLE", "MLPROF_RING_KB", "MLPROF_FLUSH_MS", "MLPROF_REPORT",
                                   "MLPROF_CLOCK",   "MLPROF_SCHEDULE", "MLPROF_MODULES",  "MLPROF_SAMPLE_HZ",
                                   "MLPROF_SAMPLE_MODE", "MLPROF_RESOURCE_MS", "MLPROF_OUTPUT"};

static int clean_env(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  return 0;
}

/* Resolve the configuration in a child with `name`=`value`; the child's
 * stderr goes to a file whose text is returned (malloc'd), the result to *out. */
static char *resolve_with(const char *name, const char *value, prof__cfg *out) {
  const char *err = th_tmp_path("env", ".err");
  prof__cfg *shared = out;
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    if (!freopen(err, "w", stderr)) _exit(99);
    setenv(name, value, 1);
    prof__cfg c;
    int rc = prof__config_resolve(NULL, &c);
    fflush(stderr);
    ssize_t w = write(fd[1], &c, sizeof c);
    _exit(rc == 0 && w == (ssize_t)sizeof c ? 0 : 1);
  }
  close(fd[1]);
  size_t got = 0;
  while (got < sizeof *shared) {
    ssize_t r = read(fd[0], (char *)shared + got, sizeof *shared - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd[0]);
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_int_equal(got, sizeof *shared);
  char *text = th_read_file(err, NULL);
  assert_non_null(text);
  return text;
}

static void only_yes_words_disable(void **state) {
  (void)state;
  static const char *const yes[] = {"1", "true", "yes", "on", "YES", "True"};
  static const char *const no[] = {"0", "false", "no", "off", "NO"};
  prof__cfg c;
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    char *t = resolve_with("MLPROF_DISABLE", yes[i], &c);
    if (!c.disable) fail_msg("MLPROF_DISABLE=%s did not disable", yes[i]);
    assert_string_equal(t, "");
    free(t);
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    char *t = resolve_with("MLPROF_DISABLE", no[i], &c);
    if (c.disable) fail_msg("MLPROF_DISABLE=%s disabled", no[i]);
    assert_string_equal(t, "");
    free(t);
  }
  char *t = resolve_with("MLPROF_DISABLE", "maybe", &c);
  assert_int_equal(c.disable, 0);
  assert_non_null(strstr(t, "mlprof: ignoring MLPROF_DISABLE='maybe' (expected 1/true/yes/on or 0/false/no/off)"));
  free(t);
}

static void report_switch_takes_words(void **state) {
  (void)state;
  prof__cfg c;
  char *t = resolve_with("MLPROF_REPORT", "no", &c);
  assert_int_equal(c.report, 0);
  free(t);
  t = resolve_with("MLPROF_REPORT", "2", &c);
  assert_int_equal(c.report, 1);
  assert_non_null(strstr(t, "ignoring MLPROF_REPORT='2'"));
  free(t);
}

static void numbers_out_of_range_keep_the_default(void **state) {
  (void)state;
  static const struct {
    const char *name, *value;
  } bad[] = {{"MLPROF_RING_KB", "3"},        {"MLPROF_RING_KB", "abc"},  {"MLPROF_RING_KB", "99999999999999999999"},
             {"MLPROF_RING_KB", ""},         {"MLPROF_FLUSH_MS", "0"},   {"MLPROF_FLUSH_MS", "-5"},
             {"MLPROF_FLUSH_MS", "10ms"},    {"MLPROF_RING_KB", "2097152"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    prof__cfg c;
    char *t = resolve_with(bad[i].name, bad[i].value, &c);
    assert_int_equal(c.ring_kb, 1024);
    assert_int_equal(c.flush_ms, 10);
    if (bad[i].value[0]) { /* an empty value is unset */
      char want[96];
      snprintf(want, sizeof want, "mlprof: ignoring %s='%s' (expected ", bad[i].name, bad[i].value);
      if (!strstr(t, want)) fail_msg("no message for %s=%s: '%s'", bad[i].name, bad[i].value, t);
      assert_null(strchr(strchr(t, '\n') + 1, '\n')); /* one line */
    }
    free(t);
  }
  prof__cfg c;
  char *t = resolve_with("MLPROF_RING_KB", "4096", &c);
  assert_int_equal(c.ring_kb, 4096);
  assert_string_equal(t, "");
  free(t);
}

static void unknown_clock_is_named(void **state) {
  (void)state;
  prof__cfg c;
  char *t = resolve_with("MLPROF_CLOCK", "monotonic", &c);
  assert_int_equal(c.force_monotonic, 1);
  free(t);
  t = resolve_with("MLPROF_CLOCK", "rdtscp", &c);
  assert_int_equal(c.force_monotonic, 0);
  assert_non_null(strstr(t, "ignoring MLPROF_CLOCK='rdtscp' (expected one of auto, tsc, monotonic)"));
  free(t);
}

static void schedule_cycle_overflow_is_refused(void **state) {
  (void)state;
  prof__sched s;
  assert_int_equal(prof__sched_parse("wait=1,active=18446744073709551615", &s), PROF_EINVAL);
  assert_int_equal(prof__sched_parse("warmup=9223372036854775808,wait=9223372036854775808", &s), PROF_EINVAL);
  assert_int_equal(prof__sched_parse("active=18446744073709551615", &s), 0); /* alone it fits */
  assert_int_equal(prof__sched_parse("wait=18446744073709551614,active=1", &s), 0);
  prof__cfg c;
  char *t = resolve_with("MLPROF_SCHEDULE", "wait=1,active=18446744073709551615", &c);
  assert_int_equal(c.sched.on, 0);
  assert_non_null(strstr(t, "mlprof: ignoring MLPROF_SCHEDULE='wait=1,active=18446744073709551615'"));
  free(t);
}

/* The whole session with the overflowing schedule: steps run, no SIGFPE. */
static void schedule_overflow_does_not_kill_the_program(void **state) {
  (void)state;
  const char *path = th_tmp_path("env-sched", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(99);
    setenv("MLPROF_SCHEDULE", "wait=1,active=18446744073709551615", 1);
    setenv("MLPROF_OUTPUT", path, 1);
    setenv("MLPROF_MODULES", "none", 1);
    setenv("MLPROF_REPORT", "0", 1);
    if (prof_init(NULL) != 0) _exit(1);
    for (int i = 0; i < 5; i++) {
      prof_start();
      prof_range_push("work");
      prof_range_pop();
      prof_stop();
    }
    _exit(prof_shutdown() == 0 ? 0 : 2);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("the program died by signal %d", WTERMSIG(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

/* Run a short profiled session in a child with MLPROF_OUTPUT=`out`. */
static int session_with_output(const char *out) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(99);
    setenv("MLPROF_OUTPUT", out, 1);
    setenv("MLPROF_MODULES", "none", 1);
    setenv("MLPROF_REPORT", "0", 1);
    if (prof_init(NULL) != 0) _exit(1);
    prof_start();
    prof_range_push("work");
    prof_range_pop();
    prof_stop();
    _exit(prof_shutdown() == 0 ? 0 : 2);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

/* MLPROF_OUTPUT naming folders that do not exist yet: they are created. */
static void output_folders_are_created(void **state) {
  (void)state;
  char dir[900], file[1000];
  snprintf(dir, sizeof dir, "%s/a/b/", th_tmp_path("env-out", ""));
  assert_int_equal(session_with_output(dir), 0);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int traces = 0;
  for (struct dirent *e; (e = readdir(d));) traces += strstr(e->d_name, ".mlpt") != NULL;
  closedir(d);
  assert_int_equal(traces, 1);
  snprintf(file, sizeof file, "%s/x/y/run.mlpt", th_tmp_path("env-out", ""));
  assert_int_equal(session_with_output(file), 0);
  assert_true(th_exists(file));
}

static void modules_and_sampler_values_are_checked(void **state) {
  (void)state;
  static const struct {
    const char *name, *value, *message;
  } bad[] = {
      {"MLPROF_MODULES", "cpu,gpuu", "MLPROF_MODULES='cpu,gpuu': 'gpuu' is not a module of this build"},
      {"MLPROF_SAMPLE_HZ", "-5", "ignoring MLPROF_SAMPLE_HZ='-5' (expected 0..100000)"},
      {"MLPROF_SAMPLE_HZ", "1e3", "ignoring MLPROF_SAMPLE_HZ='1e3' (expected 0..100000)"},
      {"MLPROF_SAMPLE_MODE", "both", "ignoring MLPROF_SAMPLE_MODE='both' (expected one of cpu, wall)"},
      {"MLPROF_RESOURCE_MS", "fast", "ignoring MLPROF_RESOURCE_MS='fast' (expected 0..60000)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *err = th_tmp_path("env-mod", ".err");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      if (!freopen(err, "w", stderr)) _exit(99);
      setenv(bad[i].name, bad[i].value, 1);
      setenv("MLPROF_OUTPUT", th_tmp_path("env-mod", ".mlpt"), 1);
      setenv("MLPROF_REPORT", "0", 1);
      int rc = prof_init(NULL);
      rc = rc == 0 && prof_shutdown() == 0 ? 0 : 1;
      fflush(NULL);
      _exit(rc);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *t = th_read_file(err, NULL);
    assert_non_null(t);
    if (!strstr(t, bad[i].message)) fail_msg("%s=%s: no message '%s' in '%s'", bad[i].name, bad[i].value,
                                             bad[i].message, t);
    free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(only_yes_words_disable, clean_env),
      cmocka_unit_test_setup(report_switch_takes_words, clean_env),
      cmocka_unit_test_setup(numbers_out_of_range_keep_the_default, clean_env),
      cmocka_unit_test_setup(unknown_clock_is_named, clean_env),
      cmocka_unit_test_setup(schedule_cycle_overflow_is_refused, clean_env),
      cmocka_unit_test_setup(schedule_overflow_does_not_kill_the_program, clean_env),
      cmocka_unit_test_setup(modules_and_sampler_values_are_checked, clean_env),
      cmocka_unit_test_setup(output_folders_are_created, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
