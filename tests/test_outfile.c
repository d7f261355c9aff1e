/* test_outfile.c — safe output files (trace/outfile.h): a planted symlink,
 * folder or FIFO at the final name is refused and left as it was; files
 * are created fresh and moved into place; a trace being written is seen as
 * busy; writing past RLIMIT_FSIZE under the guard fails with EFBIG instead
 * of killing the process with SIGXFSZ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "trace/outfile.h"

static void symlink_folder_and_fifo_are_refused(void **state) {
  (void)state;
  char err[256], victim[600], link[600];
  snprintf(victim, sizeof victim, "%s", th_tmp_path("of-victim", ".txt"));
  snprintf(link, sizeof link, "%s", th_tmp_path("of-link", ".mlpt"));
  FILE *f = fopen(victim, "w");
  fputs("victim", f);
  fclose(f);
  unlink(link);
  assert_int_equal(symlink(victim, link), 0);
  assert_int_equal(prof__out_check(link, err), -1);
  assert_non_null(strstr(err, "symbolic link"));
  const char *dir = th_tmp_path("of-dir", "");
  mkdir(dir, 0700);
  assert_int_equal(prof__out_check(dir, err), -1);
  const char *fifo = th_tmp_path("of-fifo", "");
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(prof__out_check(fifo, err), -1);
  assert_non_null(strstr(err, "not a regular file"));
  /* committing over the symlink fails and leaves it alone */
  char tmp[700];
  int fd = prof__out_create(link, tmp, sizeof tmp, 0600, err);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(prof__out_commit(tmp, link, err), -1);
  assert_false(th_exists(tmp));
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  char *text = th_read_file(victim, NULL);
  assert_string_equal(text, "victim");
  free(text);
}

/* A folder the output cannot be created in: the message names the file the
 * user asked for, not the temporary beside it. */
static void unwritable_output_is_named_by_its_own_name(void **state) {
  (void)state;
  char err[256], tmp[700], path[600];
  snprintf(path, sizeof path, "%s/no-such-folder/report.txt", th_tmp_path("outdir", ""));
  assert_int_equal(prof__out_create(path, tmp, sizeof tmp, 0600, err), -1);
  assert_non_null(strstr(err, path));
  assert_null(strstr(err, ".tmp"));
}

static void created_fresh_then_moved_into_place(void **state) {
  (void)state;
  char err[256], tmp[700];
  const char *path = th_tmp_path("of-file", ".txt");
  unlink(path);
  int fd = prof__out_create(path, tmp, sizeof tmp, 0600, err);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "new", 3), 3);
  close(fd);
  struct stat st;
  assert_int_equal(stat(tmp, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(prof__out_commit(tmp, path, err), 0);
  assert_false(th_exists(tmp));
  char *text = th_read_file(path, NULL);
  assert_string_equal(text, "new");
  free(text);
}

/* The stream form: the old file stays whole until a good close replaces it;
 * a close that is not ok leaves the old file and no temporary file. */
static void stream_replaces_the_file_only_when_closed_well(void **state) {
  (void)state;
  char err[256], tmp[700];
  const char *path = th_tmp_path("of-stream", ".txt");
  FILE *old = fopen(path, "w");
  fputs("old", old);
  fclose(old);
  prof__outf o;
  assert_int_equal(prof__out_fopen(&o, path, 0644, err), 0);
  snprintf(tmp, sizeof tmp, "%s", o.tmp);
  fputs("new", o.f);
  fflush(o.f);
  char *text = th_read_file(path, NULL);
  assert_string_equal(text, "old");
  free(text);
  assert_int_equal(prof__out_fclose(&o, 1, err), 0);
  assert_false(th_exists(tmp));
  text = th_read_file(path, NULL);
  assert_string_equal(text, "new");
  free(text);
  assert_int_equal(prof__out_fopen(&o, path, 0644, err), 0);
  snprintf(tmp, sizeof tmp, "%s", o.tmp);
  fputs("half", o.f);
  assert_int_equal(prof__out_fclose(&o, 0, err), -1);
  assert_false(th_exists(tmp));
  text = th_read_file(path, NULL);
  assert_string_equal(text, "new");
  free(text);
  /* a symlink at the path is refused before anything is created */
  char victim[600];
  snprintf(victim, sizeof victim, "%s", th_tmp_path("of-stream-victim", ".txt"));
  FILE *v = fopen(victim, "w");
  fputs("victim", v);
  fclose(v);
  const char *link = th_tmp_path("of-stream-link", ".txt");
  unlink(link);
  assert_int_equal(symlink(victim, link), 0);
  assert_int_equal(prof__out_fopen(&o, link, 0644, err), -1);
  assert_non_null(strstr(err, "symbolic link"));
  text = th_read_file(victim, NULL);
  assert_string_equal(text, "victim");
  free(text);
}

static void a_locked_trace_is_busy(void **state) {
  (void)state;
  const char *path = th_tmp_path("of-busy", ".mlpt");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(prof__out_busy(path), 0);
  assert_int_equal(flock(fd, LOCK_EX), 0);
  assert_int_equal(prof__out_busy(path), 1);
  close(fd);
  assert_int_equal(prof__out_busy(path), 0);
  assert_int_equal(prof__out_busy(th_tmp_path("of-absent", ".mlpt")), 0);
}

/* In a child: limit the file size, write past it under the guard. */
static int write_past_limit(const char *path) {
  struct rlimit rl = {4096, 4096};
  if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 10;
  prof__xfsz_guard g;
  prof__xfsz_block(&g);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char buf[8192] = {0};
  ssize_t w1 = write(fd, buf, sizeof buf);   /* short write up to the limit */
  ssize_t w2 = write(fd, buf, sizeof buf);   /* EFBIG (and SIGXFSZ, held off) */
  int e = errno;
  close(fd);
  prof__xfsz_restore(&g);
  sigset_t pend;
  sigpending(&pend);
  if (sigismember(&pend, SIGXFSZ)) return 11; /* consumed, not left pending */
  return w1 == 4096 && w2 < 0 && e == EFBIG ? 0 : 12;
}

static void file_size_limit_fails_the_write_without_a_signal(void **state) {
  (void)state;
  const char *path = th_tmp_path("of-fsize", ".bin");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(write_past_limit(path));
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st)); /* not killed by SIGXFSZ */
  assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(symlink_folder_and_fifo_are_refused),
      cmocka_unit_test(unwritable_output_is_named_by_its_own_name),
      cmocka_unit_test(created_fresh_then_moved_into_place),
      cmocka_unit_test(stream_replaces_the_file_only_when_closed_well),
      cmocka_unit_test(a_locked_trace_is_busy),
      cmocka_unit_test(file_size_limit_fails_the_write_without_a_signal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
