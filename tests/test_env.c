/* test_env.c — every MLPROF_* environment value is range-checked: a bad
 * value is ignored with one clear message naming it (once per process, also
 * when a schedule writes many files), the default applies, and no value can
 * make the profiler break the program (a schedule whose cycle length
 * overflows used to divide by zero). Switches take only 1/true/yes/on for
 * yes. A sampling rate above 10 kHz is capped, with a message. */
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
#include "core/modules.h"
#include "cpu/cpu.h"
#include "gpu/gpu.h"
#include "helpers.h"
#include "live/live.h"
#include "mem/mem.h"
#include "mlprof.h"

static const char *const vars[] = {"MLPROF_DISABLE", "MLPROF_RING_KB", "MLPROF_FLUSH_MS", "MLPROF_REPORT",
                                   "MLPROF_CLOCK",   "MLPROF_SCHEDULE", "MLPROF_MODULES",  "MLPROF_SAMPLE_HZ",
                                   "MLPROF_SAMPLE_MODE", "MLPROF_SAMPLER", "MLPROF_RESOURCE_MS", "MLPROF_OUTPUT",
                                   "MLPROF_LIVE", "MLPROF_GPU", "MLPROF_MEM_SAMPLE_BYTES", "MLPROF_MEM"};

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

/* prof__env reads MLPROF_<name> exactly: not a longer or shorter name that
 * shares its start, not an empty value. */
static void env_names_match_whole(void **state) {
  (void)state;
  setenv("MLPROF_MAX_MBX", "9", 1);
  setenv("MLPROF_MAX", "8", 1);
  setenv("XMLPROF_MAX_MB", "7", 1);
  assert_null(prof__env("MAX_MB"));
  setenv("MLPROF_MAX_MB", "", 1);
  assert_null(prof__env("MAX_MB"));
  setenv("MLPROF_MAX_MB", "12", 1);
  assert_string_equal(prof__env("MAX_MB"), "12");
  assert_string_equal(prof__env("MAX"), "8");
  assert_string_equal(prof__env("MAX_MBX"), "9");
  unsetenv("MLPROF_MAX_MBX");
  unsetenv("MLPROF_MAX");
  unsetenv("XMLPROF_MAX_MB");
  unsetenv("MLPROF_MAX_MB");
  assert_null(prof__env("MAX_MB"));
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
      {"MLPROF_SAMPLE_HZ", "-5", "ignoring MLPROF_SAMPLE_HZ='-5' (expected 0..10000)"},
      {"MLPROF_SAMPLE_HZ", "1e3", "ignoring MLPROF_SAMPLE_HZ='1e3' (expected 0..10000)"},
      {"MLPROF_SAMPLE_MODE", "both", "ignoring MLPROF_SAMPLE_MODE='both' (expected one of cpu, wall)"},
      {"MLPROF_SAMPLER", "perf", "ignoring MLPROF_SAMPLER='perf' (expected one of auto, timer)"},
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

/* ---- values read by the modules: the message and what applies ---------------------- */

static int live_on(void) { return prof__live_self() != NULL; }
static int live_off(void) { return prof__live_self() == NULL; }
static int gpu_auto(void) { return prof__gpu_env() == -1; }
static int mem_default(void) { return prof__mem_sample_bytes() == prof__mem_sample_bytes_default(); }
static int hz_capped(void) { return prof__sampler_hz() == PROF_SAMPLE_HZ_MAX; }
static int hz_max(void) { return prof__sampler_hz() == 10000; }
static int hz_default(void) { return prof__sampler_hz() == PROF_SAMPLE_HZ_DEFAULT; }
static int health_on(void) { return prof__modules_running("health") && !prof__modules_running("cpu"); }
static int health_off(void) { return !prof__modules_running("health") && prof__modules_running("cpu"); }

typedef struct env_case {
  const char *name, *value, *modules;
  const char *message; /* NULL: none */
  int (*applies)(void); /* in the child, after prof_init */
} env_case;

/* Run a session with the case's value in a child: the program runs its
 * steps, the message is there once (or there is none), and what applies
 * is checked in the child (exit 3 when it is not). */
static void check_case(const env_case *c, const char *schedule) {
  const char *err = th_tmp_path("env-case", ".err");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen(err, "w", stderr)) _exit(99);
    setenv(c->name, c->value, 1);
    setenv("MLPROF_MODULES", c->modules, 1);
    setenv("MLPROF_OUTPUT", th_tmp_path("env-case", ".mlpt"), 1);
    setenv("MLPROF_REPORT", "0", 1);
    if (schedule) setenv("MLPROF_SCHEDULE", schedule, 1);
    if (prof_init(NULL) != 0) _exit(1);
    int ok = c->applies();
    for (int i = 0; i < 6; i++) {
      prof_start();
      prof_range_push("work");
      prof_range_pop();
      prof_stop();
    }
    int rc = prof_shutdown() != 0 ? 2 : ok ? 0 : 3;
    fflush(NULL);
    _exit(rc);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("%s=%s: the program died of signal %d", c->name, c->value, WTERMSIG(st));
  char *t = th_read_file(err, NULL);
  assert_non_null(t);
  if (WEXITSTATUS(st) == 3) fail_msg("%s=%s: the value applied is not the expected one", c->name, c->value);
  if (WEXITSTATUS(st) != 0) fail_msg("%s=%s: the session failed (%d): %s", c->name, c->value, WEXITSTATUS(st), t);
  const char *at = c->message ? strstr(t, c->message) : NULL;
  if (c->message && !at) fail_msg("%s=%s: no message '%s' in '%s'", c->name, c->value, c->message, t);
  if (!c->message && strstr(t, c->name)) fail_msg("%s=%s: unexpected message '%s'", c->name, c->value, t);
  if (at && strstr(at + strlen(c->message), c->name))
    fail_msg("%s=%s: said more than once: '%s'", c->name, c->value, t);
  free(t);
}

/* The five values that used to pass without a word. */
static void live_gpu_and_memory_values_are_said(void **state) {
  (void)state;
  static const env_case cases[] = {
      {"MLPROF_LIVE", "perhaps", "live",
       "mlprof: ignoring MLPROF_LIVE='perhaps' (expected 1/true/yes/on or 0/false/no/off); using 1", live_on},
      {"MLPROF_LIVE", "off", "live", NULL, live_off},
      {"MLPROF_GPU", "2", "gpu", "mlprof: ignoring MLPROF_GPU='2' (expected 0/off, 1/on or auto); using auto",
       gpu_auto},
      {"MLPROF_GPU", "auto", "gpu", NULL, gpu_auto},
      {"MLPROF_MEM_SAMPLE_BYTES", "0", "mem",
       "mlprof: ignoring MLPROF_MEM_SAMPLE_BYTES='0' (expected a number of bytes, 1..1099511627776); using 524288",
       mem_default},
      {"MLPROF_MEM_SAMPLE_BYTES", "-1", "mem",
       "mlprof: ignoring MLPROF_MEM_SAMPLE_BYTES='-1' (expected a number of bytes, 1..1099511627776); using 524288",
       mem_default},
      {"MLPROF_LIVE_DIR", "/nonexistent", "live",
       "mlprof: ignoring MLPROF_LIVE_DIR='/nonexistent' (expected an existing folder: No such file or directory); "
       "no live page for mlprof top",
       live_off},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], NULL);
}

/* 10 kHz is the most: above it, the rate is capped with a message. */
static void sampling_rate_is_capped_at_10_khz(void **state) {
  (void)state;
  static const env_case cases[] = {
      {"MLPROF_SAMPLE_HZ", "100000", "stack,cpu",
       "mlprof: MLPROF_SAMPLE_HZ='100000' is above the maximum 10000 (a faster timer on every thread slows the "
       "program); using 10000",
       hz_capped},
      {"MLPROF_SAMPLE_HZ", "10001", "stack,cpu", "MLPROF_SAMPLE_HZ='10001' is above the maximum 10000", hz_capped},
      {"MLPROF_SAMPLE_HZ", "10000", "stack,cpu", NULL, hz_max},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], NULL);
}

/* The health producer is named "health"; its former name "model" still
 * selects it, without a word. */
static void the_health_module_answers_to_both_names(void **state) {
  (void)state;
  static const env_case cases[] = {
      {"MLPROF_MODULES", "health", "health", NULL, health_on},
      {"MLPROF_MODULES", "model", "model", NULL, health_on},
      {"MLPROF_MODULES", "stack,cpu", "stack,cpu", NULL, health_off},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], NULL);
}

/* Every capture file of a schedule reads the module headers again: the
 * message is still said once. */
static void a_bad_value_is_said_once(void **state) {
  (void)state;
  static const env_case c = {"MLPROF_SAMPLE_HZ", "fast", "stack,cpu",
                             "ignoring MLPROF_SAMPLE_HZ='fast' (expected 0..10000); using 99", NULL};
  env_case k = c;
  k.applies = hz_default;
  check_case(&k, "active=1,repeat=4");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(env_names_match_whole, clean_env),
      cmocka_unit_test_setup(only_yes_words_disable, clean_env),
      cmocka_unit_test_setup(report_switch_takes_words, clean_env),
      cmocka_unit_test_setup(numbers_out_of_range_keep_the_default, clean_env),
      cmocka_unit_test_setup(unknown_clock_is_named, clean_env),
      cmocka_unit_test_setup(schedule_cycle_overflow_is_refused, clean_env),
      cmocka_unit_test_setup(schedule_overflow_does_not_kill_the_program, clean_env),
      cmocka_unit_test_setup(modules_and_sampler_values_are_checked, clean_env),
      cmocka_unit_test_setup(output_folders_are_created, clean_env),
      cmocka_unit_test_setup(live_gpu_and_memory_values_are_said, clean_env),
      cmocka_unit_test_setup(sampling_rate_is_capped_at_10_khz, clean_env),
      cmocka_unit_test_setup(a_bad_value_is_said_once, clean_env),
      cmocka_unit_test_setup(the_health_module_answers_to_both_names, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
