/* test_workers.c — the forked-workers part of the functions section on
 * hand-built traces: when the kernel refused to let the parent read its
 * workers' memory (ptrace rules), the text, JSON and HTML reports say so
 * and that the workers' CPU is not known; without refusals and without
 * worker samples, they say nothing about workers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/ev_sample.h"
#include "trace/trace.h"

/* A trace of 30 steps on one thread, a CPU sample in each, with the
 * workers' META pairs. */
static const char *write_trace(const char *stem, const char *seen, const char *refused) {
  char err[256];
  const char *path = th_tmp_path(stem, ".mlpt");
  prof__kv hdr[] = {{"program", "workers-test"}, {"pid", "1"}};
  prof__tw *w = prof__tw_open(path, hdr, 2, err);
  assert_non_null(w);
  uint64_t now = 1000000;
  for (uint64_t s = 0; s < 30; s++) {
    /* the parent's own CPU samples (the functions section needs some) */
    prof__event e[3] = {{.ts = now, .type = PROF_EV_STEP_BEGIN, .a = s},
                        {.ts = now + 1000000, .type = PROF_EV_SAMPLE, .b = 1000000, .aux = PROF_SAMPLE_CPU},
                        {.ts = now + 2000000, .type = PROF_EV_STEP_END, .a = s}};
    assert_int_equal(prof__tw_events(w, 7, e, 3), 0);
    now += 2001000;
  }
  prof__kv meta[] = {{PROF_META_WORKERS, seen}, {PROF_META_WORKER_SAMPLES, "0"}, {PROF_META_WORKER_REFUSED, refused}};
  assert_int_equal(prof__tw_meta(w, meta, 3), 0);
  prof__kv f[] = {{"events_lost", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  return path;
}

static char *report(const char *path, const char *format) {
  prof__an *an = NULL;
  char err[256], *buf = NULL;
  size_t len = 0;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  FILE *o = open_memstream(&buf, &len);
  assert_non_null(o);
  assert_int_equal(prof__report_write(an, format, o), 0);
  fclose(o);
  prof__an_free(an);
  return buf;
}

static void refused_reads_are_said_in_every_format(void **state) {
  (void)state;
  const char *path = write_trace("workers-refused", "2", "7");
  char *t = report(path, "text"), *j = report(path, "json"), *h = report(path, "html");
  if (!strstr(t, "2 forked workers seen; the kernel refused 7 reads of their memory"))
    fail_msg("text report does not say the reads were refused:\n%s", t);
  if (!strstr(t, "not known")) fail_msg("text report: %s", strstr(t, "orked worker"));
  assert_non_null(strstr(j, "\"reads_refused\": 7"));
  assert_non_null(strstr(j, "\"seen\": 2"));
  assert_non_null(strstr(h, "the kernel refused 7 reads"));
  free(t);
  free(j);
  free(h);
}

static void no_workers_no_word(void **state) {
  (void)state;
  const char *path = write_trace("workers-none", "0", "0");
  char *t = report(path, "text"), *j = report(path, "json");
  assert_null(strstr(t, "orked worker"));
  assert_null(strstr(j, "\"reads_refused\""));
  free(t);
  free(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refused_reads_are_said_in_every_format),
      cmocka_unit_test(no_workers_no_word),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
