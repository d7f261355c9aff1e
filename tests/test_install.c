/* test_install.c — `cmake --install` gives a usable package.
 *
 * Installs the build tree into a fresh prefix, then builds the program in
 * tests/consumer/ against it twice over (CMake find_package with the shared
 * and the static target; pkg-config with the shared and the static library),
 * runs each build and reads back the trace it wrote: three steps with one
 * named range each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "trace/trace.h"

#ifdef MLPROF_SANITIZED
#define SAN_FLAGS "-fsanitize=address,undefined"
#else
#define SAN_FLAGS ""
#endif

typedef struct installed {
  char prefix[512];
  char libdir[600];
  char work[512];
} installed;

static installed inst;

/* Run `cmd`; on failure print its output. Returns the exit status. */
static int run_logged(const char *cmd) {
  const char *log = th_tmp_path("install-log", ".txt");
  char sub[4200];
  snprintf(sub, sizeof sub, "( %s )", cmd); /* the redirection covers every command */
  int rc = th_run(sub, log);
  if (rc != 0) {
    char *out = th_read_file(log, NULL);
    print_message("command failed (%d): %s\n%s\n", rc, cmd, out ? out : "");
    free(out);
  }
  return rc;
}

static int find_libdir(const char *prefix, char *out, size_t len) {
  static const char *cands[] = {"lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"};
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
    char pc[1024];
    snprintf(pc, sizeof pc, "%s/%s/pkgconfig/mlprof.pc", prefix, cands[i]);
    if (th_exists(pc)) {
      snprintf(out, len, "%s/%s", prefix, cands[i]);
      return 0;
    }
  }
  return -1;
}

static int install_once(void **state) {
  (void)state;
  snprintf(inst.prefix, sizeof inst.prefix, "%s", th_tmp_path("prefix", ""));
  snprintf(inst.work, sizeof inst.work, "%s", th_tmp_path("consumer", ""));
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' && mkdir -p '%s' && cmake --install '%s' --prefix '%s'",
           inst.prefix, inst.work, inst.work, MLPROF_BIN_DIR, inst.prefix);
  if (run_logged(cmd) != 0) return -1;
  return find_libdir(inst.prefix, inst.libdir, sizeof inst.libdir);
}

static int remove_install(void **state) {
  (void)state;
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", inst.prefix, inst.work);
  th_run(cmd, NULL);
  return 0;
}

/* Count the trace's step begins and begins of the range "consumer_work". */
static void check_trace(const char *path) {
  prof__reader *r = NULL;
  char err[256] = "";
  int rc = prof__reader_open(&r, path, err);
  if (rc != 0) print_message("%s: %s\n", path, err);
  assert_int_equal(rc, 0);
  prof__rec rec;
  uint32_t work_id = 0;
  int steps = 0, ranges = 0, n;
  while ((n = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_STRING && rec.len == 13 && !memcmp(rec.str, "consumer_work", 13))
      work_id = rec.id;
    if (rec.kind != PROF_REC_EVENT) continue;
    if (rec.ev.type == PROF_EV_STEP_BEGIN) steps++;
    if (rec.ev.type == PROF_EV_RANGE_BEGIN && work_id && rec.ev.name == work_id) ranges++;
  }
  assert_int_equal(n, 0); /* clean end: footer seen */
  assert_true(prof__reader_has_footer(r));
  prof__reader_close(r);
  assert_int_equal(steps, 3);
  assert_int_equal(ranges, 3);
}

static void install_puts_files_in_place(void **state) {
  (void)state;
  const char *rel[] = {"include/mlprof.h", "%L/libmlprof.so", "%L/libmlprof.a",
                       "%L/cmake/mlprof/mlprofConfig.cmake",
                       "%L/cmake/mlprof/mlprofConfigVersion.cmake",
                       "%L/cmake/mlprof/mlprofTargets.cmake", "%L/pkgconfig/mlprof.pc"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[1200];
    if (rel[i][0] == '%')
      snprintf(p, sizeof p, "%s%s", inst.libdir, rel[i] + 2);
    else
      snprintf(p, sizeof p, "%s/%s", inst.prefix, rel[i]);
    if (!th_exists(p)) print_message("missing: %s\n", p);
    assert_true(th_exists(p));
  }
  if (th_exists(MLPROF_BIN_DIR "/mlprof")) { /* the command, when this build has it */
    char p[1200];
    snprintf(p, sizeof p, "%s/bin/mlprof", inst.prefix);
    assert_true(th_exists(p));
  }
}

/* The Python package's folder is one that python3 searches when the prefix
 * is /usr/local (or any prefix of its own): with the default cmake prefix,
 * `import mlprof` works without PYTHONPATH. */
static void python_package_goes_where_python_looks(void **state) {
  (void)state;
  if (!MLPROF_PYTHON3[0]) skip(); /* no python3 at configure time */
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' -c 'import sys, site; d = \"/usr/local/\" + sys.argv[1]; "
           "sys.exit(0 if d in site.getsitepackages() or d in sys.path else 1)' '%s'",
           MLPROF_PYTHON3, MLPROF_PYTHON_DIR);
  assert_int_equal(run_logged(cmd), 0);
}

/* The Python package is installed with the library and loads the
 * installed libmlprof (not the build tree's) without any path set. */
static void python_package_loads_the_installed_library(void **state) {
  (void)state;
  if (!MLPROF_PYTHON3[0]) skip();
#ifdef MLPROF_SANITIZED
  skip(); /* a sanitized libmlprof cannot load into an uninstrumented python */
#endif
  char cmd[4096], out[800];
  snprintf(out, sizeof out, "%s/python.txt", inst.work);
  snprintf(cmd, sizeof cmd,
           "cd / && env -u MLPROF_LIBRARY PYTHONPATH='%s/%s' '%s' -c "
           "'import mlprof; print(mlprof.library_path())'",
           inst.prefix, MLPROF_PYTHON_DIR, MLPROF_PYTHON3);
  assert_int_equal(th_run(cmd, out), 0);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, inst.prefix));
  free(text);
}

static void cmake_package_builds_and_runs_consumers(void **state) {
  (void)state;
  char cmd[4096], build[700];
  snprintf(build, sizeof build, "%s/cmake-build", inst.work);
  snprintf(cmd, sizeof cmd,
           "cmake -S '%s/tests/consumer' -B '%s' -DCMAKE_PREFIX_PATH='%s' "
           "-DCMAKE_C_FLAGS='-Wall -Werror %s' && cmake --build '%s'",
           MLPROF_SRC_DIR, build, inst.prefix, SAN_FLAGS, build);
  assert_int_equal(run_logged(cmd), 0);
  const char *kinds[] = {"shared", "static"};
  for (int k = 0; k < 2; k++) {
    char trace[800];
    snprintf(trace, sizeof trace, "%s/cmake-%s.mlpt", inst.work, kinds[k]);
    snprintf(cmd, sizeof cmd, "'%s/consumer_%s' '%s'", build, kinds[k], trace);
    assert_int_equal(run_logged(cmd), 0);
    check_trace(trace);
  }
}

static void pkgconfig_builds_and_runs_shared_consumer(void **state) {
  (void)state;
  char cmd[4096], exe[700], trace[800];
  snprintf(exe, sizeof exe, "%s/pc-shared", inst.work);
  snprintf(trace, sizeof trace, "%s/pc-shared.mlpt", inst.work);
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/pkgconfig'; cc -Wall -Werror %s '%s/tests/consumer/consumer.c' "
           "-o '%s' $(pkg-config --cflags --libs mlprof)",
           inst.libdir, SAN_FLAGS, MLPROF_SRC_DIR, exe);
  assert_int_equal(run_logged(cmd), 0);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s' '%s' '%s'", inst.libdir, exe, trace);
  assert_int_equal(run_logged(cmd), 0);
  check_trace(trace);
}

static void pkgconfig_static_links_without_the_shared_library(void **state) {
  (void)state;
  char cmd[4096], exe[700], trace[800];
  snprintf(exe, sizeof exe, "%s/pc-static", inst.work);
  snprintf(trace, sizeof trace, "%s/pc-static.mlpt", inst.work);
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/pkgconfig'; cc -Wall -Werror %s '%s/tests/consumer/consumer.c' "
           "-o '%s' $(pkg-config --cflags mlprof) "
           "$(pkg-config --static --libs mlprof | sed 's/-lmlprof\\b/-l:libmlprof.a/')",
           inst.libdir, SAN_FLAGS, MLPROF_SRC_DIR, exe);
  assert_int_equal(run_logged(cmd), 0);
  snprintf(cmd, sizeof cmd, "'%s' '%s'", exe, trace); /* no LD_LIBRARY_PATH: must not need it */
  assert_int_equal(run_logged(cmd), 0);
  check_trace(trace);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(install_puts_files_in_place),
    cmocka_unit_test(python_package_loads_the_installed_library),
    cmocka_unit_test(python_package_goes_where_python_looks),
    cmocka_unit_test(cmake_package_builds_and_runs_consumers),
    cmocka_unit_test(pkgconfig_builds_and_runs_shared_consumer),
    cmocka_unit_test(pkgconfig_static_links_without_the_shared_library),
  };
  return cmocka_run_group_tests(tests, install_once, remove_install);
}
