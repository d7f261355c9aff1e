/* test_gzfile.c — gzip output (analyze/export/gzfile.h): what it writes is
 * gzip that gzip reads back, zlib is opened only when gzip is written (the
 * library and the command do not link it), and a zlib that cannot be
 * loaded is one clear error, with no file left behind. dlopen is mocked. */
// wrap: dlopen
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "analyze/export/gzfile.h"
#include "trace/errbuf.h"

static int refuse_zlib; /* dlopen of zlib fails */

void *__real_dlopen(const char *file, int flags);
void *__wrap_dlopen(const char *file, int flags) {
  if (refuse_zlib && file && strstr(file, "libz")) return NULL;
  return __real_dlopen(file, flags);
}

static char dir[512];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "%s/gzfile.%d", MLPROF_TEST_TMP, (int)getpid());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* First (before this process opens zlib for real): in a child, a zlib that
 * cannot be loaded gives NULL, an error naming zlib, and no file. */
static void unloadable_zlib_is_a_clear_error(void **state) {
  (void)state;
  char path[700];
  snprintf(path, sizeof path, "%s/refused.json.gz", dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    refuse_zlib = 1;
    char err[PROF_ERR_MAX] = "";
    FILE *f = prof__gz_open(path, err);
    int ok = f == NULL && strstr(err, "zlib") && strstr(err, "cannot be loaded") && access(path, F_OK) != 0;
    if (!ok) fprintf(stderr, "gz_open with no zlib: %p, '%s'\n", (void *)f, err);
    _exit(ok ? 0 : 1);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

/* 200 000 lines through the stream come back from `gzip -dc` unchanged. */
static void output_is_gzip_that_reads_back(void **state) {
  (void)state;
  char path[700], plain[700], cmd[2000];
  snprintf(path, sizeof path, "%s/lines.txt.gz", dir);
  snprintf(plain, sizeof plain, "%s/lines.txt", dir);
  char err[PROF_ERR_MAX] = "";
  FILE *f = prof__gz_open(path, err);
  if (!f) fail_msg("gz_open: %s", err);
  FILE *p = fopen(plain, "w");
  assert_non_null(p);
  for (int i = 0; i < 200000; i++) {
    fprintf(f, "line %d of the test %x\n", i, (unsigned)i * 2654435761u);
    fprintf(p, "line %d of the test %x\n", i, (unsigned)i * 2654435761u);
  }
  assert_int_equal(fclose(f), 0);
  assert_int_equal(fclose(p), 0);
  FILE *g = fopen(path, "rb");
  assert_non_null(g);
  unsigned char magic[2] = {0};
  assert_int_equal(fread(magic, 1, 2, g), 2);
  fclose(g);
  assert_int_equal(magic[0], 0x1f);
  assert_int_equal(magic[1], 0x8b);
  snprintf(cmd, sizeof cmd, "gzip -dc '%s' | cmp -s - '%s'", path, plain);
  assert_int_equal(system(cmd), 0);
}

/* Neither the recorder's library nor the command names zlib as a shared
 * dependency: it costs their start-up only when gzip is written. */
static void zlib_is_not_linked(void **state) {
  (void)state;
  const char *bins[] = {MLPROF_BIN_DIR "/libmlprof.so", MLPROF_BIN_DIR "/mlprof"};
  for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
    if (access(bins[i], F_OK) != 0) continue;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "readelf -d '%s' | grep -q 'NEEDED.*libz\\.so'", bins[i]);
    if (system(cmd) == 0) fail_msg("%s links zlib", bins[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unloadable_zlib_is_a_clear_error), /* first: before zlib is opened here */
      cmocka_unit_test(output_is_gzip_that_reads_back),
      cmocka_unit_test(zlib_is_not_linked),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
