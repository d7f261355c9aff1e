/* test_live_page.c — the live page never costs the program its life. Its
 * blocks are reserved before it is mapped, so a full /dev/shm (tmpfs) means
 * no live page and one message, never SIGBUS at the first store: the
 * program runs and its trace records every step. `mlprof top` likewise
 * never maps a page it cannot back. posix_fallocate is mocked (ENOSPC,
 * EINTR, EOPNOTSUPP); where this process may mount (root, or an
 * unprivileged user namespace) a real 64 KiB tmpfs is filled to its last
 * block, else those tests are skipped with a note.
 */
// wrap: posix_fallocate
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "live/live.h"
#include "mlprof.h"
#include "trace/trace.h"

#define STEPS 5
#define SKIPPED 77 /* a child that could not mount a tmpfs */

/* ---- the mock ----------------------------------------------------------------- */

static int fa_eintr; /* EINTR returned this many times first */
static int fa_err;   /* then this error (0: the real call) */
static int fa_calls;

int __real_posix_fallocate(int fd, off_t off, off_t len);
int __wrap_posix_fallocate(int fd, off_t off, off_t len) {
  fa_calls++;
  if (fa_eintr > 0) {
    fa_eintr--;
    return EINTR;
  }
  return fa_err ? fa_err : __real_posix_fallocate(fd, off, len);
}

/* ---- a full tmpfs, in a mount namespace of the child's own ----------------------- */

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t w = write(fd, text, strlen(text));
  close(fd);
  return w == (ssize_t)strlen(text) ? 0 : -1;
}

static int own_mount_namespace(void) {
  if (unshare(CLONE_NEWNS) != 0) { /* not root: an unprivileged user namespace */
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    char map[64];
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return -1;
    write_text("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "0 %u 1", uid);
    if (write_text("/proc/self/uid_map", map) != 0) return -1;
    snprintf(map, sizeof map, "0 %u 1", gid);
    if (write_text("/proc/self/gid_map", map) != 0) return -1;
  }
  return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL); /* nothing leaks out */
}

/* Mount a 64 KiB tmpfs on dir and fill it; -1 when this process may not. */
static int full_tmpfs(const char *dir) {
  if (own_mount_namespace() != 0 || mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700") != 0) return -1;
  char fill[600];
  snprintf(fill, sizeof fill, "%s/fill", dir);
  int fd = open(fill, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  static const char block[4096];
  while (write(fd, block, sizeof block) > 0) {
  }
  int full = errno == ENOSPC;
  close(fd);
  return full ? 0 : -1;
}

/* ---- a profiled job in a child ---------------------------------------------------- */

/* A child dies of its faults: cmocka's handler would take SIGBUS and go on
 * running the other tests in the child. */
static void default_fault_signals(void) {
  signal(SIGBUS, SIG_DFL);
  signal(SIGSEGV, SIG_DFL);
}

typedef struct job {
  const char *dir;   /* MLPROF_LIVE_DIR */
  int tmpfs;         /* mount a full tmpfs on dir first */
  int eintr, err;    /* the mock */
  int status;        /* waitpid's */
  int page;          /* the job had a live page */
  char trace[512];
  char *err_text;    /* its stderr (malloc'd) */
} job;

/* The child: 0 ran without a page, 1 ran with one; 10 and up: a failure. */
static int child(job *j) {
  if (j->tmpfs && full_tmpfs(j->dir) != 0) return SKIPPED;
  fa_eintr = j->eintr;
  fa_err = j->err;
  if (prof_init(NULL) != 0) return 10;
  if (j->eintr && fa_calls != j->eintr + 1) return 14; /* retried until it answered */
  for (int i = 0; i < STEPS; i++) {
    prof_start();
    prof_range_push("work");
    prof_range_pop();
    prof_stop();
  }
  prof__live_page *p = prof__live_self();
  if (p) { /* the page is there, in full, and written */
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/mlprof.%d", j->dir, (int)getpid());
    if (stat(path, &st) != 0 || (size_t)st.st_size < sizeof *p || st.st_blocks == 0) return 11;
    if (p->step.steps != STEPS) return 12;
  }
  if (prof_shutdown() != 0) return 13;
  return p ? 1 : 0;
}

static void run_job(job *j) {
  const char *err = th_tmp_path("live-page", ".err");
  snprintf(j->trace, sizeof j->trace, "%s", th_tmp_path("live-page", ".mlpt"));
  mkdir(j->dir, 0700);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen(err, "w", stderr)) _exit(99);
    default_fault_signals();
    setenv("MLPROF_LIVE_DIR", j->dir, 1);
    setenv("MLPROF_OUTPUT", j->trace, 1);
    setenv("MLPROF_MODULES", "live", 1);
    setenv("MLPROF_REPORT", "0", 1);
    int rc = child(j);
    fflush(NULL);
    _exit(rc);
  }
  assert_int_equal(waitpid(pid, &j->status, 0), pid);
  if (WIFSIGNALED(j->status))
    fail_msg("the program was killed by signal %d (%s)", WTERMSIG(j->status), strsignal(WTERMSIG(j->status)));
  j->err_text = th_read_file(err, NULL);
  assert_non_null(j->err_text);
  int rc = WEXITSTATUS(j->status);
  if (rc == SKIPPED) {
    print_message("note: no tmpfs can be mounted here (not root, no user namespaces): test skipped\n");
    free(j->err_text);
    skip();
  }
  if (rc > 1) fail_msg("the job failed (%d): %s", rc, j->err_text);
  j->page = rc == 1;
}

/* Every step recorded, the trace closed. */
static void expect_full_trace(const char *path) {
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  int rc, steps = 0;
  while ((rc = prof__reader_next(r, &rec)) == 1)
    steps += rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_STEP_BEGIN;
  prof__reader_close(r);
  assert_int_equal(rc, 0);
  assert_int_equal(steps, STEPS);
}

/* One line, the one message, and no page file left behind. */
static void expect_no_page(const job *j, const char *cause) {
  assert_int_equal(j->page, 0);
  const char *t = j->err_text;
  if (!strstr(t, "mlprof: no live page for mlprof top: cannot create ") || !strstr(t, cause))
    fail_msg("no message naming '%s': '%s'", cause, t);
  const char *nl = strchr(t, '\n');
  if (!nl || nl[1]) fail_msg("more than one line: '%s'", t);
  DIR *d = opendir(j->dir);
  if (!d) return; /* a tmpfs gone with its namespace */
  for (struct dirent *e; (e = readdir(d));)
    if (strncmp(e->d_name, "mlprof.", 7) == 0) fail_msg("page %s left behind", e->d_name);
  closedir(d);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void no_room_for_the_page_gives_one_message(void **state) {
  (void)state;
  job j = {.dir = th_tmp_path("live-page", ".d"), .err = ENOSPC};
  run_job(&j);
  expect_no_page(&j, "(No space left on device)");
  expect_full_trace(j.trace);
  free(j.err_text);
}

/* The code returned for it is negative, and nothing is mapped. */
static void create_returns_a_negative_code(void **state) {
  (void)state;
  const char *dir = th_tmp_path("live-page", ".d");
  mkdir(dir, 0700);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(99);
    default_fault_signals();
    setenv("MLPROF_LIVE_DIR", dir, 1);
    fa_err = ENOSPC;
    int rc = prof__live_create();
    _exit(rc < 0 && !prof__live_self() ? 0 : 1);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void interrupted_reservation_is_retried(void **state) {
  (void)state;
  job j = {.dir = th_tmp_path("live-page", ".d"), .eintr = 3};
  run_job(&j);
  assert_int_equal(j.page, 1);
  assert_string_equal(j.err_text, "");
  expect_full_trace(j.trace);
  free(j.err_text);
}

/* A file system without fallocate: the page is written out in full. */
static void without_fallocate_the_page_is_written_out(void **state) {
  (void)state;
  job j = {.dir = th_tmp_path("live-page", ".d"), .err = EOPNOTSUPP};
  run_job(&j);
  assert_int_equal(j.page, 1); /* the child checked st_blocks */
  assert_string_equal(j.err_text, "");
  free(j.err_text);
}

static void full_tmpfs_does_not_kill_the_program(void **state) {
  (void)state;
  job j = {.dir = th_tmp_path("live-page", ".tmpfs"), .tmpfs = 1};
  run_job(&j);
  expect_no_page(&j, "(No space left on device)");
  expect_full_trace(j.trace);
  free(j.err_text);
}

/* Without fallocate on a full tmpfs the written-out page fails as well:
 * never a page sized by ftruncate alone. */
static void full_tmpfs_without_fallocate(void **state) {
  (void)state;
  job j = {.dir = th_tmp_path("live-page", ".tmpfs"), .tmpfs = 1, .err = EOPNOTSUPP};
  run_job(&j);
  expect_no_page(&j, "(No space left on device)");
  expect_full_trace(j.trace);
  free(j.err_text);
}

/* A sparse page (sized, no blocks) on a full tmpfs: the reader refuses it
 * with ENOSPC instead of faulting on its first load. */
static void reader_refuses_a_page_it_cannot_back(void **state) {
  (void)state;
  const char *dir = th_tmp_path("live-page", ".tmpfs");
  mkdir(dir, 0700);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    default_fault_signals();
    if (full_tmpfs(dir) != 0) _exit(SKIPPED);
    setenv("MLPROF_LIVE_DIR", dir, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/mlprof.%d", dir, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(prof__live_page)) != 0) _exit(10);
    close(fd);
    prof__live_page *p = prof__livepage_open((int)getpid(), NULL, 0);
    _exit(!p && errno == ENOSPC ? 0 : 11);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("the reader was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  if (WEXITSTATUS(st) == SKIPPED) {
    print_message("note: no tmpfs can be mounted here (not root, no user namespaces): test skipped\n");
    skip();
  }
  assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_room_for_the_page_gives_one_message),
      cmocka_unit_test(create_returns_a_negative_code),
      cmocka_unit_test(interrupted_reservation_is_retried),
      cmocka_unit_test(without_fallocate_the_page_is_written_out),
      cmocka_unit_test(full_tmpfs_does_not_kill_the_program),
      cmocka_unit_test(full_tmpfs_without_fallocate),
      cmocka_unit_test(reader_refuses_a_page_it_cannot_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
