/* test_signals.c — the signals mlprof takes and gives back. CPU sampling
 * runs on a free realtime signal (never SIGPROF), steps aside when the
 * program takes that signal over, and leaves no timer behind; no trigger
 * signal is taken unless MLPROF_TRIGGER_SIGNAL names an allowed one, and
 * never one the program already handles. Each scenario runs in a forked
 * child (a session starts once per process) and reports by exit status.
 */
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

#include "core/crash.h"
#include "cpu/cpu.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

static volatile sig_atomic_t got_timer_sigprof, got_other_sigprof, got_sig;

static void count_sigprof(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  if (si && si->si_code == SI_TIMER) got_timer_sigprof++;
  else got_other_sigprof++;
}

static void count_sig(int sig) {
  (void)sig;
  got_sig++;
}

static volatile double sink;

static void burn(double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  double x = 1.0;
  do {
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
  sink = x;
}

static void *handler_of(int sig) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) return NULL;
  return (cur.sa_flags & SA_SIGINFO) ? (void *)cur.sa_sigaction : (void *)cur.sa_handler;
}

static void set_handler(int sig, void (*fn)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

static int start(const char *path, const char *hz) {
  setenv("MLPROF_SAMPLE_HZ", hz, 1);
  setenv("MLPROF_REPORT", "0", 1);
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  return prof_init(&c);
}

/* Run `fn(path)` in a child with stderr into `err_path` (when given);
 * returns the child's exit status, or 100 + signal when a signal ended it. */
static int in_child(int (*fn)(const char *), const char *path, const char *err_path) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (err_path && !freopen(err_path, "w", stderr)) _exit(99);
    setvbuf(stderr, NULL, _IONBF, 0);
    int rc = fn(path);
    fflush(NULL);
    _exit(rc);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static long trace_samples(const char *path) {
  char err[256];
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  long n = 0;
  while (prof__reader_next(r, &rec) == 1)
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_SAMPLE) n++;
  prof__reader_close(r);
  return n;
}

/* ---- sampling signal ---------------------------------------------------------- */

static int scenario_own_sigprof(const char *path) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = count_sigprof;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  if (start(path, "1000") != 0) return 1;
  int sig = prof__sampler_signal();
  if (sig < SIGRTMIN || sig > SIGRTMAX) return 2;
  if (handler_of(SIGPROF) != (void *)count_sigprof) return 3;
  burn(0.3);
  if (got_timer_sigprof != 0) return 4;
  return prof_shutdown() == 0 ? 0 : 5;
}

static void sampling_uses_a_realtime_signal_not_sigprof(void **state) {
  (void)state;
  const char *path = th_tmp_path("sig-own-prof", ".mlpt");
  assert_int_equal(in_child(scenario_own_sigprof, path, NULL), 0);
  assert_true(trace_samples(path) > 0); /* the sampler did run beside the handler */
}

static int scenario_skips_used(const char *path) {
  set_handler(SIGRTMIN + 4, count_sig);
  set_handler(SIGRTMIN + 5, SIG_IGN);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGRTMIN + 6); /* as a program using sigwait would */
  sigprocmask(SIG_BLOCK, &block, NULL);
  if (start(path, "200") != 0) return 1;
  int sig = prof__sampler_signal();
  if (sig < SIGRTMIN + 7 || sig > SIGRTMAX) return 2;
  if (handler_of(SIGRTMIN + 4) != (void *)count_sig || handler_of(SIGRTMIN + 5) != (void *)SIG_IGN) return 3;
  return prof_shutdown() == 0 ? 0 : 4;
}

static void sampling_skips_signals_the_program_uses(void **state) {
  (void)state;
  assert_int_equal(in_child(scenario_skips_used, th_tmp_path("sig-skip", ".mlpt"), NULL), 0);
}

static int scenario_take_over(const char *path) {
  if (start(path, "1000") != 0) return 1;
  int sig = prof__sampler_signal();
  if (!sig) return 2;
  burn(0.05);
  set_handler(sig, count_sig); /* the program takes the signal */
  for (int i = 0; i < 1000 && !prof__sampler_stepped_aside(); i++) burn(0.01);
  if (!prof__sampler_stepped_aside()) return 3;
  if (prof__sampler_signal() != 0) return 4;
  got_sig = 0;
  burn(0.3); /* every timer is gone: nothing more arrives */
  if (got_sig != 0) return 5;
  if (prof_shutdown() != 0) return 6;
  return handler_of(sig) == (void *)count_sig ? 0 : 7; /* the program's handler stays */
}

static void sampling_steps_aside_when_the_program_takes_its_signal(void **state) {
  (void)state;
  const char *err = th_tmp_path("sig-aside", ".err");
  assert_int_equal(in_child(scenario_take_over, th_tmp_path("sig-aside", ".mlpt"), err), 0);
  char *text = th_read_file(err, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "mlprof: the program installed its own handler for signal SIGRTMIN+"));
  assert_non_null(strstr(text, "CPU sampling stops\n"));
  free(text);
}

static int scenario_give_back(const char *path) {
  if (start(path, "1000") != 0) return 1;
  int sig = prof__sampler_signal();
  if (!sig) return 2;
  burn(0.1);
  if (prof_shutdown() != 0) return 3;
  if (handler_of(sig) != (void *)SIG_DFL) return 4;
  if (prof__sampler_signal() != 0) return 5;
  burn(0.2); /* a timer left running would now end this process */
  return 0;
}

static void shutdown_deletes_timers_then_gives_the_signal_back(void **state) {
  (void)state;
  assert_int_equal(in_child(scenario_give_back, th_tmp_path("sig-back", ".mlpt"), NULL), 0);
}

/* ---- trigger signal ----------------------------------------------------------- */

/* With defaults, the only disposition mlprof changes is the sampler's. */
static int scenario_defaults(const char *path) {
  unsetenv("MLPROF_TRIGGER_SIGNAL");
  void *before[NSIG];
  for (int s = 1; s < NSIG; s++) before[s] = handler_of(s);
  if (start(path, "99") != 0) return 1;
  int sampler = prof__sampler_signal();
  for (int s = 1; s < NSIG; s++)
    if (s != sampler && !prof__crash_name(s) && handler_of(s) != before[s]) return 10 + (s < 80 ? s : 80);
  return prof_shutdown() == 0 ? 0 : 2;
}

static void no_trigger_signal_by_default(void **state) {
  (void)state;
  assert_int_equal(in_child(scenario_defaults, th_tmp_path("sig-default", ".mlpt"), NULL), 0);
}

static int scenario_host_usr2(const char *path) {
  set_handler(SIGUSR2, count_sig);
  setenv("MLPROF_TRIGGER_SIGNAL", "USR2", 1);
  if (start(path, "0") != 0) return 1;
  raise(SIGUSR2);
  raise(SIGUSR2);
  if (got_sig != 2) return 2;
  return prof_shutdown() == 0 ? 0 : 3;
}

static void trigger_signal_the_program_handles_is_left_alone(void **state) {
  (void)state;
  const char *err = th_tmp_path("sig-usr2", ".err");
  assert_int_equal(in_child(scenario_host_usr2, th_tmp_path("sig-usr2", ".mlpt"), err), 0);
  char *text = th_read_file(err, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "mlprof: signal 12 (MLPROF_TRIGGER_SIGNAL) already has a handler"));
  free(text);
}

static const char *trigger_value;
static int trigger_expect;

static int scenario_trigger_value(const char *path) {
  setenv("MLPROF_TRIGGER_SIGNAL", trigger_value, 1);
  void *before[NSIG];
  for (int s = 1; s < NSIG; s++) before[s] = handler_of(s);
  if (start(path, "0") != 0) return 1;
  for (int s = 1; s < NSIG; s++) {
    int changed = handler_of(s) != before[s];
    if (!prof__crash_name(s) && changed != (s == trigger_expect)) return 2; /* crash handlers: host_safety */
  }
  return prof_shutdown() == 0 ? 0 : 3;
}

static void check_trigger(const char *value, int expect, const char *message) {
  trigger_value = value;
  trigger_expect = expect;
  const char *err = th_tmp_path("sig-trigger", ".err");
  assert_int_equal(in_child(scenario_trigger_value, th_tmp_path("sig-trigger", ".mlpt"), err), 0);
  char *text = th_read_file(err, NULL);
  assert_non_null(text);
  if (message) assert_non_null(strstr(text, message));
  else assert_null(strstr(text, "MLPROF_TRIGGER_SIGNAL"));
  free(text);
}

static void trigger_signal_accepts_usr1_usr2_and_realtime_only(void **state) {
  (void)state;
  char rt[16];
  snprintf(rt, sizeof rt, "%d", SIGRTMIN + 1);
  check_trigger("USR1", SIGUSR1, NULL);
  check_trigger("SIGUSR2", SIGUSR2, NULL);
  check_trigger("RTMIN+2", SIGRTMIN + 2, NULL);
  check_trigger("SIGRTMAX-1", SIGRTMAX - 1, NULL);
  check_trigger(rt, SIGRTMIN + 1, NULL);
  check_trigger("none", 0, NULL);
  check_trigger("SEGV", 0, "mlprof: MLPROF_TRIGGER_SIGNAL='SEGV' is not allowed");
  check_trigger("SIGINT", 0, "mlprof: MLPROF_TRIGGER_SIGNAL='SIGINT' is not allowed");
  check_trigger("11", 0, "mlprof: MLPROF_TRIGGER_SIGNAL='11' is not allowed");
  check_trigger("RTMIN+99", 0, "mlprof: MLPROF_TRIGGER_SIGNAL='RTMIN+99' is not allowed");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sampling_uses_a_realtime_signal_not_sigprof),
      cmocka_unit_test(sampling_skips_signals_the_program_uses),
      cmocka_unit_test(sampling_steps_aside_when_the_program_takes_its_signal),
      cmocka_unit_test(shutdown_deletes_timers_then_gives_the_signal_back),
      cmocka_unit_test(no_trigger_signal_by_default),
      cmocka_unit_test(trigger_signal_the_program_handles_is_left_alone),
      cmocka_unit_test(trigger_signal_accepts_usr1_usr2_and_realtime_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
