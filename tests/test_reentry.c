/* test_reentry.c — annotation calls made by a signal handler while the
 * interrupted thread is inside an annotation call, and nesting deeper than
 * the tracked depth. Every event issued is either in the trace or counted as
 * lost, exactly; the trace stays well formed; too-deep ranges are misuse,
 * not lost events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/session.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

static volatile sig_atomic_t handler_marks;
static uint32_t tick_id;
static const char tick_name[] = "tick";

static void on_alarm(int sig) {
  (void)sig;
  prof_mark_id(tick_id);
  prof_mark(tick_name); /* the name is cached on this thread already */
  handler_marks += 2;
}

typedef struct {
  uint64_t events, marks, begins, ends, lost_footer, reentry_footer;
} trace_counts;

static trace_counts read_trace(const char *path) {
  trace_counts c;
  memset(&c, 0, sizeof c);
  char err[256];
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  while (prof__reader_next(r, &rec) == 1) {
    if (rec.kind != PROF_REC_EVENT) continue;
    c.events++;
    c.marks += rec.ev.type == PROF_EV_MARK;
    c.begins += rec.ev.type == PROF_EV_RANGE_BEGIN;
    c.ends += rec.ev.type == PROF_EV_RANGE_END;
  }
  prof__reader_close(r);
  return c;
}

static void start_child_session(const char *path) {
  setenv("MLPROF_OUTPUT", path, 1);
  setenv("MLPROF_MODULES", "none", 1);
  setenv("MLPROF_REPORT", "0", 1);
  setenv("MLPROF_RING_KB", "16384", 1);
  if (prof_init(NULL) != 0) _exit(10);
}

/* Child: a timer's handler marks while the main loop pushes and pops. */
static int scenario_handler_marks(const char *path, const char *counts_path) {
  start_child_session(path);
  tick_id = prof_name_id("tick");
  prof_mark(tick_name); /* registers the thread and caches the name */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 10}, {0, 10}};
  setitimer(ITIMER_REAL, &it, NULL);
  uint64_t pairs = 0;
  while (handler_marks < 4000 && pairs < 4000000) {
    prof_range_push("outer");
    prof_range_push("inner");
    prof_range_pop();
    prof_range_pop();
    pairs += 2;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGALRM, SIG_IGN);
  if (prof_shutdown() != 0) return 11;
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  FILE *f = fopen(counts_path, "w");
  if (!f) return 12;
  fprintf(f, "%llu %llu %llu %llu\n", (unsigned long long)(1 + 2 * pairs + (uint64_t)handler_marks),
          (unsigned long long)st.events_written, (unsigned long long)st.events_lost,
          (unsigned long long)pairs);
  fclose(f);
  return 0;
}

static int run_in_child(int (*fn)(const char *, const char *), const char *a, const char *b) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(fn(a, b));
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static const char *footer_value(const char *path, const char *key, char *buf, size_t n) {
  char err[256];
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  const char *found = NULL;
  while (prof__reader_next(r, &rec) == 1) {
    if (rec.kind == PROF_REC_FOOTER && !found && strcmp(rec.key, key) == 0) {
      snprintf(buf, n, "%s", rec.value);
      found = buf;
    }
  }
  prof__reader_close(r);
  return found;
}

static void handler_calls_are_written_or_counted_lost(void **state) {
  (void)state;
  const char *path = th_tmp_path("reentry", ".mlpt");
  const char *counts = th_tmp_path("reentry", ".txt");
  assert_int_equal(run_in_child(scenario_handler_marks, path, counts), 0);
  char *text = th_read_file(counts, NULL);
  assert_non_null(text);
  unsigned long long issued, written, lost, pairs;
  assert_int_equal(sscanf(text, "%llu %llu %llu %llu", &issued, &written, &lost, &pairs), 4);
  free(text);
  print_message("issued %llu, written %llu, lost %llu\n", issued, written, lost);
  assert_int_equal(written + lost, issued);
  trace_counts c = read_trace(path);
  assert_int_equal(c.events, written); /* the trace holds what was counted written */
  assert_int_equal(c.begins, c.ends);  /* and stays well formed */
  assert_int_equal(c.begins + c.ends + c.marks, c.events);
  char buf[32];
  const char *re = footer_value(path, "events_lost_in_signal_handlers", buf, sizeof buf);
  assert_non_null(re);
  assert_true(strtoull(re, NULL, 10) <= lost);
}

static int scenario_too_deep(const char *path, const char *counts_path) {
  start_child_session(path);
  for (int i = 0; i < PROF_MAX_DEPTH + 44; i++) prof_range_push("deep");
  for (int i = 0; i < PROF_MAX_DEPTH + 44; i++) prof_range_pop();
  if (prof_shutdown() != 0) return 11;
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  FILE *f = fopen(counts_path, "w");
  if (!f) return 12;
  fprintf(f, "%llu %llu %llu\n", (unsigned long long)st.events_written, (unsigned long long)st.events_lost,
          (unsigned long long)st.misuse);
  fclose(f);
  return 0;
}

static void nesting_too_deep_is_misuse_not_lost(void **state) {
  (void)state;
  const char *path = th_tmp_path("too-deep", ".mlpt");
  const char *counts = th_tmp_path("too-deep", ".txt");
  assert_int_equal(run_in_child(scenario_too_deep, path, counts), 0);
  char *text = th_read_file(counts, NULL);
  assert_non_null(text);
  unsigned long long written, lost, misuse;
  assert_int_equal(sscanf(text, "%llu %llu %llu", &written, &lost, &misuse), 3);
  free(text);
  assert_int_equal(written, 2 * PROF_MAX_DEPTH);
  assert_int_equal(lost, 0);
  assert_int_equal(misuse, 44);
  char buf[32];
  assert_non_null(footer_value(path, "misuse.range_too_deep", buf, sizeof buf));
  assert_string_equal(buf, "44");
  trace_counts c = read_trace(path);
  assert_int_equal(c.begins, PROF_MAX_DEPTH);
  assert_int_equal(c.ends, PROF_MAX_DEPTH);
  /* The report names the misuse and reports no lost events. */
  prof__an *an = NULL;
  char err[256] = "";
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  assert_non_null(f);
  assert_int_equal(prof__report_write(an, "text", f), 0);
  fclose(f);
  prof__an_free(an);
  assert_non_null(strstr(out, "44 of them ranges nested deeper than 256 levels"));
  assert_null(strstr(out, "lost_events"));
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(handler_calls_are_written_or_counted_lost),
      cmocka_unit_test(nesting_too_deep_is_misuse_not_lost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
