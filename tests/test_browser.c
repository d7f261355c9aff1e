/* test_browser.c — the demo's HTML report in a real browser: runs the
 * example trainer with reports on, then scripts/browser-check, which loads
 * the page in headless Chromium, checks the rendered DOM for every section
 * of tests/browser/sections.txt, that the page's script ran without console
 * errors, and saves a screenshot. Skips when Chromium (Debian package
 * `chromium`) or the example is not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define CHROMIUM "/usr/bin/chromium"
#define TRAINER MLPROF_BIN_DIR "/examples/train_mlp"

static void demo_report_renders_in_chromium(void **state) {
  (void)state;
  if (!th_exists(CHROMIUM)) {
    printf("skipping: %s is not installed (apt-get install -y chromium)\n", CHROMIUM);
    skip();
  }
  if (!th_exists(TRAINER)) {
    printf("skipping: the example trainer is not built\n");
    skip();
  }
  const char *dir = th_tmp_path("browser", "");
  char cmd[2048], html[1024];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && MLPROF_OUTPUT='%s' MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 '%s' --steps 40", dir, dir, TRAINER);
  assert_int_equal(th_run(cmd, th_tmp_path("browser-train", ".log")), 0);
  snprintf(cmd, sizeof cmd, "ls '%s'/*.report.html > '%s/name.txt'", dir, dir);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(html, sizeof html, "%s/name.txt", dir);
  char *name = th_read_file(html, NULL);
  assert_non_null(name);
  name[strcspn(name, "\n")] = 0;
  const char *log = th_tmp_path("browser-check", ".log");
  snprintf(cmd, sizeof cmd, "'%s/scripts/browser-check' '%s' '%s/check'", MLPROF_SRC_DIR, name, dir);
  int rc = th_run(cmd, log);
  char *out = th_read_file(log, NULL);
  if (rc != 0) fail_msg("browser-check exited %d:\n%s", rc, out ? out : "");
  assert_non_null(strstr(out, "browser-check: ok"));
  snprintf(html, sizeof html, "%s/check/report.png", dir);
  assert_true(th_exists(html));
  printf("screenshot: %s\n", html);
  free(out);
  free(name);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(demo_report_renders_in_chromium),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
