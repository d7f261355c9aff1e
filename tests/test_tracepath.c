/* test_tracepath.c — trace names and output folders (trace/tracename.h,
 * core/tracepath.h, prof__out_dir_check): the one naming rule the library
 * and `mlprof run` share (the names after a trace, the default name, where
 * an output setting puts a trace and which folders it creates); an
 * existing trace is never replaced, the next numbered name is taken
 * instead and the names run out with a message; a symlink at a name is
 * refused; MLPROF_PREV_TRACE counts only for the process that set it;
 * another user's folder is refused (as root); a session's trace, snapshot
 * and report files are private (0600).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlprof.h"
#include "helpers.h"
#include "analyze/analyze.h"
#include "core/tracepath.h"
#include "trace/outfile.h"
#include "trace/tracename.h"

static const prof__kv hdr[] = {{"program", "test"}};

static void put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int mode_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static void numbered_names(void **state) {
  (void)state;
  char out[64];
  assert_int_equal(prof__trace_name("d/x.mlpt", 0, out, sizeof out), 0);
  assert_string_equal(out, "d/x.mlpt");
  assert_int_equal(prof__trace_name("d/x.mlpt", 12, out, sizeof out), 0);
  assert_string_equal(out, "d/x.12.mlpt");
  assert_int_equal(prof__trace_name("trace", 1, out, sizeof out), 0);
  assert_string_equal(out, "trace.1");
  assert_int_equal(prof__trace_name("d/x.mlpt", 1, out, 8), -1);
}

/* The names of the rule: a trace's stem, the traces named after it, the
 * default name, the folder a trace goes in. */
static void the_naming_rule(void **state) {
  (void)state;
  char out[128];
  assert_int_equal(prof__trace_stem_len("d/x.mlpt"), 3);
  assert_int_equal(prof__trace_stem_len("trace"), 5);
  assert_int_equal(prof__trace_sibling(out, sizeof out, "d/x.mlpt", "cycle3"), 0);
  assert_string_equal(out, "d/x.cycle3.mlpt");
  assert_int_equal(prof__trace_sibling(out, sizeof out, "trace", "4242"), 0);
  assert_string_equal(out, "trace.4242.mlpt");
  assert_int_equal(prof__trace_sibling(out, 8, "d/x.mlpt", "cycle3"), -1);
  assert_true(prof__trace_is_sibling("d/x.trigger2.mlpt", "d/x.mlpt", "trigger"));
  assert_false(prof__trace_is_sibling("d/x.cycle1.mlpt", "d/x.mlpt", "trigger"));
  assert_false(prof__trace_is_sibling("d/xtrigger2.mlpt", "d/x.mlpt", "trigger"));
  assert_false(prof__trace_is_sibling("e/x.trigger2.mlpt", "d/x.mlpt", "trigger"));
  prof__trace_default_name(out, sizeof out, "train", NULL, 0, 42);
  assert_string_equal(out, "train.42.mlpt");
  prof__trace_default_name(out, sizeof out, "train", "node1", 3, 42);
  assert_string_equal(out, "train.node1.r3.42.mlpt");
  assert_int_equal(prof__trace_folder("x.mlpt", out, sizeof out), 0);
  assert_string_equal(out, ".");
  assert_int_equal(prof__trace_folder("/x.mlpt", out, sizeof out), 0);
  assert_string_equal(out, "/");
  assert_int_equal(prof__trace_folder("a/b/x.mlpt", out, sizeof out), 0);
  assert_string_equal(out, "a/b");
}

static int is_folder(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where an output setting puts a trace: no setting, the default name here;
 * a folder (ending in '/', or an existing one), the default name in it,
 * created with the folders above it; a file, there, its folders created;
 * a folder that cannot be made refuses with a reason, the path still
 * given. */
static void output_setting_to_path(void **state) {
  (void)state;
  char base[600], output[700], want[800], out[800], err[PROF_ERR_MAX];
  snprintf(base, sizeof base, "%s", th_tmp_path("outrule", ""));
  assert_int_equal(prof__trace_output_path(out, sizeof out, NULL, "p.7.mlpt", err), 0);
  assert_string_equal(out, "p.7.mlpt");

  snprintf(output, sizeof output, "%s/a/b/", base);
  assert_int_equal(prof__trace_output_path(out, sizeof out, output, "p.7.mlpt", err), 0);
  snprintf(want, sizeof want, "%s/a/b/p.7.mlpt", base);
  assert_string_equal(out, want);
  snprintf(output, sizeof output, "%s/a/b", base);
  assert_true(is_folder(output));
  assert_int_equal(prof__trace_output_path(out, sizeof out, output, "p.7.mlpt", err), 0); /* existing folder */
  assert_string_equal(out, want);

  snprintf(output, sizeof output, "%s/c/d/t.mlpt", base);
  assert_int_equal(prof__trace_output_path(out, sizeof out, output, "p.7.mlpt", err), 0);
  assert_string_equal(out, output);
  snprintf(want, sizeof want, "%s/c/d", base);
  assert_true(is_folder(want));
  assert_false(is_folder(output)); /* the trace's name is left to the trace */

  snprintf(want, sizeof want, "%s/file", base);
  put_file(want, "x");
  snprintf(output, sizeof output, "%s/file/", base);
  err[0] = 0;
  assert_int_equal(prof__trace_output_path(out, sizeof out, output, "p.7.mlpt", err), -1);
  assert_true(err[0] != 0);
  snprintf(want, sizeof want, "%s/file/p.7.mlpt", base);
  assert_string_equal(out, want);
}

/* A new trace beside existing ones takes the first free name and leaves
 * every file there as it was; a symlink at a name is refused. */
static void existing_traces_are_never_replaced(void **state) {
  (void)state;
  char base[600], path[4096], err[256], name[700], victim[600];
  snprintf(base, sizeof base, "%s", th_tmp_path("names", ".mlpt"));
  put_file(base, "keep");
  snprintf(path, sizeof path, "%s", base);
  prof__tw *w = prof__trace_create_free(path, sizeof path, hdr, 1, err);
  assert_non_null(w);
  prof__trace_name(base, 1, name, sizeof name);
  assert_string_equal(path, name);
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
  assert_int_equal(mode_of(path), 0600);
  char *kept = th_read_file(base, NULL);
  assert_string_equal(kept, "keep");
  free(kept);

  snprintf(path, sizeof path, "%s", base); /* next: .2 */
  w = prof__trace_create_free(path, sizeof path, hdr, 1, err);
  assert_non_null(w);
  prof__trace_name(base, 2, name, sizeof name);
  assert_string_equal(path, name);
  prof__tw_abort(w);

  snprintf(victim, sizeof victim, "%s", th_tmp_path("names-victim", ".txt"));
  put_file(victim, "victim");
  prof__trace_name(base, 3, name, sizeof name);
  assert_int_equal(symlink(victim, name), 0);
  snprintf(path, sizeof path, "%s", base);
  assert_null(prof__trace_create_free(path, sizeof path, hdr, 1, err));
  assert_non_null(strstr(err, "symbolic link"));
  kept = th_read_file(victim, NULL);
  assert_string_equal(kept, "victim");
  free(kept);
}

/* When every name is taken: no trace, one clear message. */
static void names_run_out_with_a_message(void **state) {
  (void)state;
  char dir[600], base[700], name[800], path[4096], err[256];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("names-full", ""));
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(base, sizeof base, "%s/t.mlpt", dir);
  for (unsigned k = 0; k < PROF_TRACE_NAMES; k++) {
    prof__trace_name(base, k, name, sizeof name);
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
  }
  snprintf(path, sizeof path, "%s", base);
  assert_null(prof__trace_create_free(path, sizeof path, hdr, 1, err));
  assert_non_null(strstr(err, "numbered names are taken"));
}

static void previous_trace_is_the_same_process_s(void **state) {
  (void)state;
  char v[4200], out[4096], cwd[4000];
  snprintf(v, sizeof v, "%d:/a/b.mlpt", (int)getpid() + 1);
  setenv("MLPROF_PREV_TRACE", v, 1);
  prof__prev_trace(out, sizeof out);
  assert_string_equal(out, ""); /* another process's (a parent's) */
  setenv("MLPROF_PREV_TRACE", "/a/b.mlpt", 1);
  prof__prev_trace(out, sizeof out);
  assert_string_equal(out, "");
  snprintf(v, sizeof v, "%d:/a/b.mlpt", (int)getpid());
  setenv("MLPROF_PREV_TRACE", v, 1);
  prof__prev_trace(out, sizeof out);
  assert_string_equal(out, "/a/b.mlpt");

  prof__prev_trace_set("./rel/x.mlpt"); /* made absolute: an exec may chdir first */
  assert_non_null(getcwd(cwd, sizeof cwd));
  prof__prev_trace(out, sizeof out);
  snprintf(v, sizeof v, "%s/rel/x.mlpt", cwd);
  assert_string_equal(out, v);
  unsetenv("MLPROF_PREV_TRACE");
}

static void another_users_folder_is_refused(void **state) {
  (void)state;
  if (geteuid() != 0) {
    printf("not root: another user's folder cannot be made; skipped\n");
    skip();
  }
  char dir[600], link[600], path[4096], err[256];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("names-foreign", ""));
  assert_int_equal(mkdir(dir, 0777), 0);
  assert_int_equal(prof__out_dir_check(dir, err), 0); /* root's own */
  assert_int_equal(chown(dir, 65534, 65534), 0);
  assert_int_equal(prof__out_dir_check(dir, err), -1);
  assert_non_null(strstr(err, "belongs to another user"));
  char slash[620];
  snprintf(slash, sizeof slash, "%s/", dir);
  assert_int_equal(prof__mkdirs(slash, err), -1);
  snprintf(path, sizeof path, "%s/t.mlpt", dir);
  assert_null(prof__trace_create_free(path, sizeof path, hdr, 1, err));
  assert_false(th_exists(path));

  /* a symlink: counts only when the link is the user's own */
  char own[600];
  snprintf(own, sizeof own, "%s", th_tmp_path("names-own", ""));
  assert_int_equal(mkdir(own, 0700), 0);
  snprintf(link, sizeof link, "%s", th_tmp_path("names-link", ""));
  assert_int_equal(symlink(own, link), 0);
  assert_int_equal(prof__out_dir_check(link, err), 0);
  assert_int_equal(lchown(link, 65534, 65534), 0);
  assert_int_equal(prof__out_dir_check(link, err), -1);
  assert_non_null(strstr(err, "another user's symbolic link"));
}

static void a_file_is_not_a_folder(void **state) {
  (void)state;
  char file[600], err[256];
  snprintf(file, sizeof file, "%s", th_tmp_path("names-file", ""));
  put_file(file, "x");
  assert_int_equal(prof__out_dir_check(file, err), -1);
  assert_non_null(strstr(err, "a file of that name exists"));
}

/* Child: a session on `path`; its snapshot, then the predecessor handed on. */
static int scenario_session(const char *path) {
  char snap[700], want[4200];
  snprintf(snap, sizeof snap, "%s.snap.txt", path);
  unsetenv("MLPROF_PREV_TRACE");
  setenv("MLPROF_OUTPUT", path, 1);
  setenv("MLPROF_REPORT", "0", 1);
  if (prof_init(NULL) != 0) return 1;
  if (strcmp(prof_trace_path(), path) != 0) return 2;
  prof_start();
  prof_stop();
  if (prof_snapshot(snap) != 0) return 3;
  if (mode_of(snap) != 0600) return 4;
  if (prof_shutdown() != 0) return 5;
  snprintf(want, sizeof want, "%d:%s", (int)getpid(), path);
  const char *v = getenv("MLPROF_PREV_TRACE");
  return v && strcmp(v, want) == 0 ? 0 : 6;
}

static void session_files_are_private(void **state) {
  (void)state;
  const char *path = th_tmp_path("names-session", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(scenario_session(path));
  int st;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_int_equal(mode_of(path), 0600);
  char err[256], rep[700];
  assert_int_equal(prof__report_files(path, err), 0);
  static const char *const sfx[] = {".report.txt", ".report.json", ".report.html"};
  for (int i = 0; i < 3; i++) {
    snprintf(rep, sizeof rep, "%s%s", path, sfx[i]);
    assert_int_equal(mode_of(rep), 0600);
  }
}

int main(void) {
  umask(022); /* privacy comes from the creation mode, not the umask */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numbered_names),
      cmocka_unit_test(the_naming_rule),
      cmocka_unit_test(output_setting_to_path),
      cmocka_unit_test(existing_traces_are_never_replaced),
      cmocka_unit_test(names_run_out_with_a_message),
      cmocka_unit_test(previous_trace_is_the_same_process_s),
      cmocka_unit_test(another_users_folder_is_refused),
      cmocka_unit_test(a_file_is_not_a_folder),
      cmocka_unit_test(session_files_are_private),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
