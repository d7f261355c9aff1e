/* report_spawn.c — start the `mlprof` command, detached, to write the
 * reports of a closed trace (reports.h), and read what it says.
 *
 * The command must never be the profiled program's business: the program
 * gets no SIGCHLD for it, and neither wait(-1) nor a SIGCHLD handler of the
 * program can reap it. So this process clones a child with no exit signal
 * (a "clone child": a wait without __WALL does not see it; an exec would
 * give it SIGCHLD again, so it never execs). It starts a session of its own,
 * vforks the command, which execs, and exits; this process reaps it by pid.
 * The command, orphaned at once, is adopted by init (or the nearest
 * subreaper), never by this process.
 *
 * Both children share this process's memory until the exec, as
 * posix_spawn's does: nothing of a large program is copied, and the calling
 * thread sleeps until the exec. So they make raw system calls only, take no
 * lock (of libc, the allocator or a sanitizer: libc's own __clone and
 * __vfork, looked up by name, which sanitizers do not intercept) and run
 * uninstrumented.
 * Everything they need (argv, environment, descriptors) is prepared before.
 * Signals are blocked across the clone so that no handler of the program
 * runs in them; the command starts with every signal at its default and an
 * empty mask.
 *
 * Descriptors of the command: 0 and 1 are /dev/null; 2 is this process's
 * standard error when it is a terminal or a file, /dev/null otherwise (a
 * pipe's reader would wait for the command to finish); 3 is the status
 * pipe, closed when the command exits; nothing else is inherited.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

#define CHILD_STACK (64u << 10)

/* What the child needs, prepared before the clone (descriptors >= 10), and
 * the errno of a failed exec, which it leaves here. */
typedef pid_t (*vfork_fn)(void);
typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);

typedef struct spawn_ctx {
  const char *exe;
  char **argv, **envp;
  int null_fd, err_fd, status_w;
  vfork_fn vfork_entry; /* libc's __vfork, looked up before the clone */
  volatile int err;
} spawn_ctx;

/* ---- in the children: raw system calls, no instrumentation -------------------- */

#if defined(__clang__)
#define CHILD_CODE __attribute__((no_sanitize("address", "thread", "undefined"), noinline))
#else
#define CHILD_CODE __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined, noinline))
#endif

/* libc's own entry points, by name (sanitizers intercept clone and vfork,
 * as fork or with their own stack handling, which must not run in these
 * children); NULL where libc has none, and the public call is used. */
static void *libc_entry(const char *name) { return dlsym(RTLD_DEFAULT, name); }

CHILD_CODE static void close_from(int lo) {
  if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0u) == 0) return;
  for (int fd = lo; fd < 65536; fd++) syscall(SYS_close, fd); /* kernels before 5.9 */
}

/* The command: descriptors 0-3, default signals, empty mask, exec. Never
 * returns (it runs in a vfork child). */
CHILD_CODE static void command_child(spawn_ctx *c) {
  if (syscall(SYS_dup3, c->null_fd, 0, 0) < 0 || syscall(SYS_dup3, c->null_fd, 1, 0) < 0 ||
      syscall(SYS_dup3, c->err_fd, 2, 0) < 0 || syscall(SYS_dup3, c->status_w, 3, 0) < 0) {
    c->err = errno;
    syscall(SYS_exit, 127);
  }
  close_from(4);
  unsigned long dfl[4] = {0, 0, 0, 0}; /* the kernel's sigaction: SIG_DFL, no flags, empty mask */
  for (int s = 1; s < 65; s++)
    if (s != SIGKILL && s != SIGSTOP) syscall(SYS_rt_sigaction, s, dfl, NULL, 8);
  unsigned long none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
  syscall(SYS_execve, c->exe, c->argv, c->envp);
  c->err = errno ? errno : ENOEXEC;
  syscall(SYS_exit, 127);
}

/* The clone child (no exit signal): a session of its own, the command
 * vfork'ed from it, then gone, so the command is nobody's child here. */
CHILD_CODE static int intermediate_child(void *arg) {
  spawn_ctx *c = arg;
  syscall(SYS_setsid);
  pid_t pid = c->vfork_entry ? c->vfork_entry() : vfork();
  if (pid == 0) command_child(c);
  if (pid < 0) c->err = errno;
  syscall(SYS_exit, 0);
  return 0;
}

/* ---- in this process ------------------------------------------------------------ */

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

/* Reap the clone child by pid: it exits right after the command's exec; one
 * that hangs is killed after 10 s. */
static void reap(pid_t pid) {
  uint64_t t0 = prof__mono_ns();
  for (;;) {
    pid_t r = waitpid(pid, NULL, __WALL | WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    if (prof__mono_ns() - t0 > 10000000000ull) {
      kill(pid, SIGKILL);
      while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR) {
      }
      return;
    }
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
}

/* Clone the child with every signal blocked; this thread sleeps until the
 * command exec'd (or failed) and the child is gone. Returns the errno of a
 * failure (0: the command runs). */
static int clone_child(spawn_ctx *c) {
  char *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return errno;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  c->err = 0;
  int flags = CLONE_VM | CLONE_VFORK; /* no exit signal */
  void *vf = libc_entry("__vfork"), *cl = libc_entry("__clone");
  clone_fn clone_entry;
  memcpy(&c->vfork_entry, &vf, sizeof vf);
  memcpy(&clone_entry, &cl, sizeof cl);
  int pid = clone_entry ? clone_entry(intermediate_child, stack + CHILD_STACK, flags, c)
                        : clone(intermediate_child, stack + CHILD_STACK, flags, c);
  int err = pid < 0 ? errno : c->err;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  munmap(stack, CHILD_STACK);
  if (pid > 0) reap(pid);
  return err;
}

int prof__report_spawn(const char *exe, char **argv, char **envp, int keep_stderr, prof__report_job *job, char *err) {
  int saved_errno = errno, sp[2] = {-1, -1}, rc = PROF_EIO;
  spawn_ctx c = {.exe = exe, .argv = argv, .envp = envp, .null_fd = -1, .err_fd = -1, .status_w = -1};
  memset(job, 0, sizeof *job);
  job->fd = -1;
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0 || pipe2(sp, O_CLOEXEC) != 0) {
    snprintf(err, PROF_ERR_MAX, "cannot prepare the mlprof command: %s", strerror(errno));
    goto out;
  }
  c.null_fd = high_fd(null_fd);
  c.status_w = high_fd(sp[1]);
  c.err_fd = stderr_for_command(keep_stderr);
  if (c.err_fd < 0) c.err_fd = high_fd(null_fd);
  close(sp[1]); /* only the command holds the write end: EOF tells it ended */
  sp[1] = -1;
  if (c.null_fd < 0 || c.status_w < 0 || c.err_fd < 0) {
    snprintf(err, PROF_ERR_MAX, "cannot prepare the mlprof command: %s", strerror(errno));
    goto out;
  }
  int e = clone_child(&c);
  if (e) {
    snprintf(err, PROF_ERR_MAX, "cannot start '%s': %s", exe, strerror(e));
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
  close_if(c.null_fd);
  close_if(c.err_fd);
  close_if(c.status_w);
  errno = saved_errno;
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
  int saved_errno = errno;
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
      if (now >= deadline) break;
      struct pollfd p = {.fd = job->fd, .events = POLLIN};
      uint64_t left_ms = (deadline - now) / 1000000ull + 1;
      poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms);
      continue;
    }
    job_end(job); /* EOF: the command exited (or the pipe failed) */
    break;
  }
  errno = saved_errno;
  return job->fd < 0;
}

void prof__report_job_forget(prof__report_job *job) {
  close_if(job->fd);
  job->fd = -1;
}
