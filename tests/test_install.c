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

/* The trace's step begins, and begins of the range `name`. */
static void count_trace(const char *path, const char *name, int *steps, int *ranges) {
  prof__reader *r = NULL;
  char err[256] = "";
  int rc = prof__reader_open(&r, path, err);
  if (rc != 0) print_message("%s: %s\n", path, err);
  assert_int_equal(rc, 0);
  prof__rec rec;
  uint32_t id = 0;
  int n;
  *steps = *ranges = 0;
  while ((n = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_STRING && rec.len == strlen(name) && !memcmp(rec.str, name, rec.len)) id = rec.id;
    if (rec.kind != PROF_REC_EVENT) continue;
    if (rec.ev.type == PROF_EV_STEP_BEGIN) (*steps)++;
    if (rec.ev.type == PROF_EV_RANGE_BEGIN && id && rec.ev.name == id) (*ranges)++;
  }
  assert_int_equal(n, 0); /* clean end: footer seen */
  assert_true(prof__reader_has_footer(r));
  prof__reader_close(r);
}

/* Three steps with one range "consumer_work" each. */
static void check_trace(const char *path) {
  int steps, ranges;
  count_trace(path, "consumer_work", &steps, &ranges);
  assert_int_equal(steps, 3);
  assert_int_equal(ranges, 3);
}

/* consumer_mpi's trace: three steps, three MPI_Allreduce ranges recorded by
 * the wrappers. */
static void check_mpi_trace(const char *path) {
  int steps, ranges;
  check_trace(path);
  count_trace(path, "MPI_Allreduce", &steps, &ranges);
  assert_int_equal(ranges, 3);
}

/* Why an MPI consumer cannot run here, or NULL. */
static const char *mpi_run_skip(void) {
#ifdef MLPROF_SANITIZED
  return "Open MPI's own leaks trip the sanitizers";
#endif
  if (th_run("command -v mpirun >/dev/null 2>&1", NULL) != 0) return "mpirun is not installed";
  return NULL;
}

/* Run `exe TRACE` as one rank under mpirun and check its trace. */
static void run_mpi_consumer(const char *exe, const char *trace) {
  const char *why = mpi_run_skip();
  if (why) {
    print_message("built %s; not run: %s\n", exe, why);
    return;
  }
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "LD_LIBRARY_PATH='%s' OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
           "MLPROF_MPI_CLOCK_SYNC=0 timeout 120 mpirun -np 1 '%s' '%s'",
           inst.libdir, exe, trace);
  assert_int_equal(run_logged(cmd), 0);
  check_mpi_trace(trace);
}

static void install_puts_files_in_place(void **state) {
  (void)state;
  const char *rel[] = {"include/mlprof.h", "include/mlprof.hpp", "%L/libmlprof.so", "%L/libmlprof.a",
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
  if (th_exists(MLPROF_BIN_DIR "/mlprof")) { /* the command, its man page and completion */
    const char *cli[] = {"bin/mlprof", "share/man/man1/mlprof.1", "share/bash-completion/completions/mlprof"};
    for (size_t i = 0; i < sizeof cli / sizeof cli[0]; i++) {
      char p[1200];
      snprintf(p, sizeof p, "%s/%s", inst.prefix, cli[i]);
      if (!th_exists(p)) print_message("missing: %s\n", p);
      assert_true(th_exists(p));
    }
  }
}

/* The installed `mlprof` is two programs: the start-up front in bin runs
 * `run -q --no-report` itself with the installed library, and hands every
 * other command to the full one in <libdir>/mlprof, which reads the trace. */
static void installed_command_runs_and_reads(void **state) {
  (void)state;
  char mlprof[700], cmd[4096], trace[800], out[800];
  snprintf(mlprof, sizeof mlprof, "%s/bin/mlprof", inst.prefix);
  if (!th_exists(MLPROF_BIN_DIR "/mlprof")) skip(); /* built without the command */
#ifdef MLPROF_SANITIZED
  skip(); /* a sanitized libmlprof cannot load into an uninstrumented program */
#endif
  snprintf(trace, sizeof trace, "%s/installed-run.mlpt", inst.work);
  snprintf(out, sizeof out, "%s/installed-info.txt", inst.work);
  snprintf(cmd, sizeof cmd, "cd / && env -u MLPROF_LIBRARY '%s' run -q --no-report -o '%s' -- /bin/false",
           mlprof, trace);
  assert_int_equal(th_run(cmd, NULL), 1); /* the program's own status */
  snprintf(cmd, sizeof cmd, "'%s' info '%s'", mlprof, trace);
  assert_int_equal(th_run(cmd, out), 0);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  if (!strstr(text, "state: complete")) print_message("mlprof info said:\n%s\n", text);
  assert_non_null(strstr(text, "state: complete"));
  free(text);
  snprintf(cmd, sizeof cmd, "'%s/mlprof/mlprof-cli' --version", inst.libdir);
  assert_int_equal(run_logged(cmd), 0);
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
  if (!th_exists(MLPROF_BIN_DIR "/libmlprof_mpi.so")) return; /* built without MPI */
  char exe[800], trace[800];
  snprintf(exe, sizeof exe, "%s/consumer_mpi", build);
  snprintf(trace, sizeof trace, "%s/cmake-mpi.mlpt", inst.work);
  if (!th_exists(exe)) print_message("mlprof::mlprof_mpi did not give %s\n", exe);
  assert_true(th_exists(exe));
  run_mpi_consumer(exe, trace);
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

/* `pkg-config --static --libs mlprof` is a complete static link: libmlprof.a
 * and every library it names through Requires.private (zstd, and libunwind,
 * libdw with its libelf, bz2 and lzma, zlib where built in) taken from
 * its static archive when one is installed; what mlprof.pc lists in
 * Libs.private (system libraries, a dependency whose own .pc is incomplete)
 * stays as given. -no-pie: some distributions' archives (libunwind.a) are
 * not built for a position-independent executable. zstd, always a
 * Requires.private, must then not be a shared dependency of the program. */
static void pkgconfig_static_link_takes_static_dependencies(void **state) {
  (void)state;
  if (run_logged("test -f \"$(cc -print-file-name=libzstd.a)\"") != 0) {
    print_message("no libzstd.a installed: the static-dependency link is skipped\n");
    skip();
  }
  char cmd[4096], exe[700], trace[800], out[800];
  snprintf(exe, sizeof exe, "%s/pc-static-deps", inst.work);
  snprintf(trace, sizeof trace, "%s/pc-static-deps.mlpt", inst.work);
  snprintf(out, sizeof out, "%s/pc-static-deps.txt", inst.work);
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/pkgconfig'; keep=\"$(sed -n 's/^Libs.private://p' '%s/pkgconfig/mlprof.pc')\"; "
           "libs=; for f in $(pkg-config --static --libs mlprof); do "
           "case \" $keep \" in *\" $f \"*) libs=\"$libs $f\"; continue;; esac; "
           "case $f in -lmlprof) f=-l:libmlprof.a;; -lc|-lm|-lpthread|-ldl|-lrt) ;; "
           "-l*) a=$(cc -print-file-name=lib${f#-l}.a); [ -f \"$a\" ] && f=-l:lib${f#-l}.a;; esac; "
           "libs=\"$libs $f\"; done; echo \"static link: $libs\"; "
           "cc -no-pie -Wall -Werror %s '%s/tests/consumer/consumer.c' -o '%s' $(pkg-config --cflags mlprof) $libs",
           inst.libdir, inst.libdir, SAN_FLAGS, MLPROF_SRC_DIR, exe);
  assert_int_equal(run_logged(cmd), 0);
  snprintf(cmd, sizeof cmd, "readelf -d '%s'", exe);
  assert_int_equal(th_run(cmd, out), 0);
  char *dyn = th_read_file(out, NULL);
  assert_non_null(dyn);
  if (strstr(dyn, "libzstd")) print_message("libzstd is still a shared dependency:\n%s\n", dyn);
  assert_null(strstr(dyn, "libzstd"));
  assert_null(strstr(dyn, "libmlprof"));
  free(dyn);
  snprintf(cmd, sizeof cmd, "'%s' '%s'", exe, trace);
  assert_int_equal(run_logged(cmd), 0);
  check_trace(trace);
}

/* With MPI built: libmlprof_mpi, its exported target and mlprof_mpi.pc
 * are installed, and an MPI program links the wrappers through pkg-config
 * (mpicc ... $(pkg-config --libs mlprof_mpi)) and records its calls. */
static void mpi_wrappers_install_with_target_and_pkgconfig(void **state) {
  (void)state;
  if (!th_exists(MLPROF_BIN_DIR "/libmlprof_mpi.so")) {
    print_message("libmlprof_mpi was not built (no MPI at configure time)\n");
    skip();
  }
  char p[1200];
  snprintf(p, sizeof p, "%s/libmlprof_mpi.so", inst.libdir);
  assert_true(th_exists(p));
  snprintf(p, sizeof p, "%s/pkgconfig/mlprof_mpi.pc", inst.libdir);
  assert_true(th_exists(p));
  snprintf(p, sizeof p, "%s/cmake/mlprof/mlprofTargets.cmake", inst.libdir);
  char *targets = th_read_file(p, NULL);
  assert_non_null(targets);
  assert_non_null(strstr(targets, "mlprof::mlprof_mpi"));
  free(targets);
  if (th_run("command -v mpicc >/dev/null 2>&1", NULL) != 0) {
    print_message("no mpicc: the pkg-config build is skipped\n");
    return;
  }
  char cmd[4096], exe[700], trace[800];
  snprintf(exe, sizeof exe, "%s/pc-mpi", inst.work);
  snprintf(trace, sizeof trace, "%s/pc-mpi.mlpt", inst.work);
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/pkgconfig'; mpicc -Wall -Werror %s '%s/tests/consumer/consumer_mpi.c' "
           "-o '%s' $(pkg-config --cflags --libs mlprof_mpi) && readelf -d '%s' | grep -q 'libmlprof_mpi'",
           inst.libdir, SAN_FLAGS, MLPROF_SRC_DIR, exe, exe);
  assert_int_equal(run_logged(cmd), 0);
  run_mpi_consumer(exe, trace);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(install_puts_files_in_place),
    cmocka_unit_test(installed_command_runs_and_reads),
    cmocka_unit_test(python_package_loads_the_installed_library),
    cmocka_unit_test(python_package_goes_where_python_looks),
    cmocka_unit_test(cmake_package_builds_and_runs_consumers),
    cmocka_unit_test(pkgconfig_builds_and_runs_shared_consumer),
    cmocka_unit_test(pkgconfig_static_links_without_the_shared_library),
    cmocka_unit_test(pkgconfig_static_link_takes_static_dependencies),
    cmocka_unit_test(mpi_wrappers_install_with_target_and_pkgconfig),
  };
  return cmocka_run_group_tests(tests, install_once, remove_install);
}
