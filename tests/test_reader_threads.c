/* test_reader_threads.c — the reader keeps no hidden state: reports of two
 * different traces built at the same time on two threads are byte for byte
 * the reports each trace gives alone. Run under ThreadSanitizer (the CI's
 * build-tsan), a shared sort context, lazy table or nav list is a reported
 * race; in any build, a context that leaks from one report into the other
 * shows as a difference.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "helpers.h"

/* Traces with different sections: sampled functions with stacks (sort
 * contexts, demangling, flame layout) and memory sites (leak and top-site
 * ordering). */
static const char *const traces[] = {
    MLPROF_SRC_DIR "/tests/fuzz/corpus/raw_test_functions_hot.mlpt",
    MLPROF_SRC_DIR "/tests/fuzz/corpus/raw_run_train_mlp_memfull_v2.mlpt",
};
#define NTRACES (sizeof traces / sizeof traces[0])
#define ROUNDS 3

typedef struct job {
  const char *path;
  char *out; /* every report and the Chrome export, concatenated */
  size_t len;
  int rc;
} job;

static int all_outputs(const char *path, FILE *f) {
  static const char *const formats[] = {"text", "json", "html"};
  char err[256];
  prof__an *an = NULL;
  int rc = prof__an_run(&an, path, err);
  if (rc) return rc;
  an->quiet = 1;
  for (size_t i = 0; rc == 0 && i < sizeof formats / sizeof formats[0]; i++)
    rc = prof__report_write(an, formats[i], f);
  if (rc == 0) rc = prof__export_chrome(an, f);
  prof__an_free(an);
  return rc;
}

static void *run_job(void *arg) {
  job *j = arg;
  FILE *f = open_memstream(&j->out, &j->len);
  if (!f) {
    j->rc = -1;
    return NULL;
  }
  for (int r = 0; r < ROUNDS && j->rc == 0; r++) j->rc = all_outputs(j->path, f);
  if (fclose(f) != 0 && j->rc == 0) j->rc = -1;
  return NULL;
}

static void concurrent_reports_equal_serial_ones(void **state) {
  (void)state;
  job alone[NTRACES], together[NTRACES];
  memset(alone, 0, sizeof alone);
  memset(together, 0, sizeof together);
  for (size_t i = 0; i < NTRACES; i++) {
    alone[i].path = together[i].path = traces[i];
    run_job(&alone[i]);
    assert_int_equal(alone[i].rc, 0);
    assert_true(alone[i].len > 1000);
  }
  assert_true(alone[0].len != alone[1].len || memcmp(alone[0].out, alone[1].out, alone[0].len) != 0);
  pthread_t th[NTRACES];
  for (size_t i = 0; i < NTRACES; i++) assert_int_equal(pthread_create(&th[i], NULL, run_job, &together[i]), 0);
  for (size_t i = 0; i < NTRACES; i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < NTRACES; i++) {
    assert_int_equal(together[i].rc, 0);
    assert_int_equal(together[i].len, alone[i].len);
    assert_memory_equal(together[i].out, alone[i].out, alone[i].len);
    free(alone[i].out);
    free(together[i].out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(concurrent_reports_equal_serial_ones),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
