/* report_spawn.c — start the `mlprof` command, detached, to write the
 * reports of a closed trace (reports.h), and read what it says.
 *
 * The command must never be the profiled program's business: the program
 * gets no SIGCHLD for it, and neither wait(-1) nor a SIGCHLD handler of the
 * program can reap it. So this process clones a short-lived intermediate
 * with no exit signal at all (a "clone child": wait(-1) without __WALL
 * does not see it; it is reaped here, by pid, at once), which starts a
 * session of its own and forks the command, then exits: the command is
 * adopted by init (or the nearest subreaper), never by this process.
 *
 * Between clone and exec the children only make raw system calls: the
 * clones run no fork handlers, so no lock of libc, the allocator or a
 * sanitizer may be taken there. Everything they need (argv, environment,
 * descriptors) is prepared before. Signals are blocked across the clone
 * so that no handler of the program runs in a child; the command starts
 * with every signal at its default and an empty mask.
 *
 * Descriptors of the command: 0 and 1 are /dev/null; 2 is this process's
 * standard error when it is a terminal or a file, /dev/null otherwise (a
 * pipe's reader would wait for the command to finish); 3 is the status
 * pipe, closed when the command exits; nothing else is inherited.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "mlprof.h"
#include "reports.h"

#ifndef __WALL
#define __WALL 0x40000000
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* What the children need, prepared before the clone. Descriptors >= 10. */
typedef struct spawn_ctx {
  const char *exe;
  char **argv, **envp;
  int null_fd, err_fd, status_w, exec_w;
} spawn_ctx;

/* ---- in the children: raw system calls only ------------------------------- */

#if defined(__SANITIZE_THREAD__)
#define NO_TSAN __attribute__((no_sanitize_thread))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef NO_TSAN
#define NO_TSAN
#endif

NO_TSAN static void child_fail(const spawn_ctx *c, int err) {
  (void)!syscall(SYS_write, c->exec_w, &err, sizeof err);
  syscall(SYS_exit_group, 127);
  for (;;) {
  }
}

NO_TSAN static void close_from(int lo, int hi) {
  if (lo > hi) return;
  if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0u) == 0) return;
  int top = hi < 65535 ? hi : 65535; /* kernels before 5.9 */
  for (int fd = lo; fd <= top; fd++) syscall(SYS_close, fd);
}

/* The command: descriptors 0-3, default signals, then exec. */
NO_TSAN static void command_child(const spawn_ctx *c) {
  if (syscall(SYS_dup2, c->null_fd, 0) < 0 || syscall(SYS_dup2, c->null_fd, 1) < 0 ||
      syscall(SYS_dup2, c->err_fd, 2) < 0 || syscall(SYS_dup2, c->status_w, 3) < 0)
    child_fail(c, errno);
  close_from(4, c->exec_w - 1); /* exec_w stays (close-on-exec) to report a failed exec */
  close_from(c->exec_w + 1, 1 << 30);
  unsigned long dfl[4] = {0, 0, 0, 0}; /* the kernel's sigaction: SIG_DFL, no flags, empty mask */
  for (int s = 1; s < 65; s++)
    if (s != SIGKILL && s != SIGSTOP) syscall(SYS_rt_sigaction, s, dfl, NULL, 8);
  unsigned long none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
  syscall(SYS_execve, c->exe, c->argv, c->envp);
  child_fail(c, errno);
}

/* The intermediate: a session of its own, the command forked from it. */
NO_TSAN static void intermediate_child(const spawn_ctx *c) {
  syscall(SYS_setsid);
  long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0ul, 0ul, 0ul, 0ul);
  if (pid == 0) command_child(c);
  if (pid < 0) child_fail(c, errno);
  syscall(SYS_exit_group, 0);
  for (;;) {
  }
}

/* ---- in this process ---------------------------------------------------------- */

/* A copy of fd at 10 or above, close-on-exec; -1 on failure. */
static int high_fd(int fd) { return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10); }

static void close_if(int fd) {
  if (fd >= 0) close(fd);
}

/* Standard error when the command may keep it: a terminal or a file. */
static int stderr_for_command(int keep) {
  struct stat st;
  if (!keep || fstat(2, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return -1;
  return high_fd(2);
}

/* Clone the intermediate with every signal blocked; reap it by pid. Returns
 * the errno a child reported (0: the command runs). */
static int clone_and_reap(spawn_ctx *c, int exec_r) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  long pid = syscall(SYS_clone, 0ul /* no exit signal */, 0ul, 0ul, 0ul, 0ul);
  if (pid == 0) intermediate_child(c);
  int err = pid < 0 ? errno : 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(c->exec_w);
  c->exec_w = -1;
  if (pid < 0) return err;
  /* EOF on the exec pipe: the command was exec'd and the intermediate
   * exited; an errno: one of them failed. Bounded: a child that hangs is
   * killed (only a sanitizer's lock could hold it). */
  int got = 0, r;
  struct pollfd p = {.fd = exec_r, .events = POLLIN};
  while ((r = poll(&p, 1, 10000)) < 0 && errno == EINTR) {
  }
  if (r > 0 && read(exec_r, &got, sizeof got) != (ssize_t)sizeof got) got = 0;
  if (r <= 0) {
    kill((pid_t)pid, SIGKILL);
    got = ETIMEDOUT;
  }
  while (waitpid((pid_t)pid, NULL, __WALL) < 0 && errno == EINTR) {
  }
  return got;
}

int prof__report_spawn(const char *exe, char **argv, char **envp, int keep_stderr, prof__report_job *job, char *err) {
  int sp[2] = {-1, -1}, ep[2] = {-1, -1}, rc = PROF_EIO;
  spawn_ctx c = {.exe = exe, .argv = argv, .envp = envp, .null_fd = -1, .err_fd = -1, .status_w = -1, .exec_w = -1};
  memset(job, 0, sizeof *job);
  job->fd = -1;
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0 || pipe2(sp, O_CLOEXEC) != 0 || pipe2(ep, O_CLOEXEC) != 0) {
    snprintf(err, 256, "cannot prepare the mlprof command: %s", strerror(errno));
    goto out;
  }
  c.null_fd = high_fd(null_fd);
  c.status_w = high_fd(sp[1]);
  c.exec_w = high_fd(ep[1]);
  c.err_fd = stderr_for_command(keep_stderr);
  if (c.err_fd < 0) c.err_fd = high_fd(null_fd);
  close(sp[1]); /* only the children hold the write ends: EOF tells when they are gone */
  close(ep[1]);
  sp[1] = ep[1] = -1;
  if (c.null_fd < 0 || c.status_w < 0 || c.exec_w < 0 || c.err_fd < 0) {
    snprintf(err, 256, "cannot prepare the mlprof command: %s", strerror(errno));
    goto out;
  }
  int e = clone_and_reap(&c, ep[0]);
  if (e) {
    snprintf(err, 256, "cannot start '%s': %s", exe, strerror(e));
    goto out;
  }
  job->fd = sp[0];
  sp[0] = -1;
  fcntl(job->fd, F_SETFL, O_NONBLOCK);
  rc = 0;
out:
  close_if(null_fd);
  close_if(sp[0]);
  close_if(sp[1]);
  close_if(ep[0]);
  close_if(ep[1]);
  close_if(c.null_fd);
  close_if(c.err_fd);
  close_if(c.status_w);
  close_if(c.exec_w);
  return rc;
}

/* One status line of the command: "ok TRACE" or "error MESSAGE". */
static void job_line(prof__report_job *job) {
  if (strncmp(job->line, "ok ", 3) == 0) job->oks++;
  else if (strncmp(job->line, "error ", 6) == 0 && job->errors++ == 0)
    snprintf(job->msg, sizeof job->msg, "%s", job->line + 6);
}

static void job_take(prof__report_job *job, const char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (buf[i] != '\n') {
      if (job->len + 1 < sizeof job->line) job->line[job->len++] = buf[i];
      continue;
    }
    job->line[job->len] = 0;
    job_line(job);
    job->len = 0;
  }
}

static void job_end(prof__report_job *job) {
  close(job->fd);
  job->fd = -1;
  if (!job->oks && !job->errors) snprintf(job->msg, sizeof job->msg, "the mlprof command ended without writing them");
}

int prof__report_job_check(prof__report_job *job, int ms) {
  if (job->fd < 0) return 1;
  uint64_t deadline = prof__mono_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000ull;
  for (;;) {
    char buf[512];
    ssize_t n = read(job->fd, buf, sizeof buf);
    if (n > 0) {
      job_take(job, buf, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      uint64_t now = prof__mono_ns();
      if (now >= deadline) return 0;
      struct pollfd p = {.fd = job->fd, .events = POLLIN};
      uint64_t left_ms = (deadline - now) / 1000000ull + 1;
      poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms);
      continue;
    }
    job_end(job); /* EOF: the command exited (or the pipe failed) */
    return 1;
  }
}

void prof__report_job_forget(prof__report_job *job) {
  close_if(job->fd);
  job->fd = -1;
}
