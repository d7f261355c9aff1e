/* shared_exec.c — the exec family of a profiled program, in the shared
 * library only (linked statically these would replace the C library's in
 * the host's own executable).
 *
 * An image that execs runs no exit handler: without this, its trace would
 * stop at its last flush with no footer, and its report would call the
 * program killed. That is every wrapper in front of a training program: a
 * shell script's last command, `env`, pyenv's and conda's shims. Here the
 * trace is closed first (crash.h: prof__crash_end_now, bounded,
 * async-signal-safe, only in the session's own process, once), then the C
 * library's own function runs, found at load time (RTLD_NEXT), so a signal
 * handler that execs stays async-signal-safe. The next image, when it loads
 * the library again, writes a trace of its own that names this one. An
 * exec that fails returns as the C library's does (-1, errno) and leaves
 * the session closed; a program that then goes on is told so at its exit
 * (prof_shutdown), since one that tries several paths, as Python's
 * os.execvp does, ends with the exec that succeeds. The C library's own
 * calls (posix_spawn, system, popen) do not come here; a vforked child's
 * exec is left alone (crash.h).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mlprof.h"
#include "crash.h"

extern char **environ;

typedef int (*exec_fn)(const char *, char *const[], char *const[]);
typedef int (*fexec_fn)(int, char *const[], char *const[]);

static exec_fn real_execve, real_execvpe;
static fexec_fn real_fexecve;

__attribute__((constructor)) static void exec_resolve(void) {
  real_execve = (exec_fn)dlsym(RTLD_NEXT, "execve");
  real_execvpe = (exec_fn)dlsym(RTLD_NEXT, "execvpe");
  real_fexecve = (fexec_fn)dlsym(RTLD_NEXT, "fexecve");
}

static int do_execve(const char *path, char *const argv[], char *const envp[]) {
  (void)prof__crash_end_now(PROF_END_EXEC, 0);
  if (real_execve) return real_execve(path, argv, envp);
  return (int)syscall(SYS_execve, path, argv, envp);
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[]) {
  (void)prof__crash_end_now(PROF_END_EXEC, 0);
  if (!real_execvpe) exec_resolve(); /* an exec before the constructors ran */
  return real_execvpe ? real_execvpe(file, argv, envp) : -1;
}

PROF_API int execve(const char *path, char *const argv[], char *const envp[]) { return do_execve(path, argv, envp); }

PROF_API int execv(const char *path, char *const argv[]) { return do_execve(path, argv, environ); }

PROF_API int execvpe(const char *file, char *const argv[], char *const envp[]) {
  return do_execvpe(file, argv, envp);
}

PROF_API int execvp(const char *file, char *const argv[]) { return do_execvpe(file, argv, environ); }

PROF_API int fexecve(int fd, char *const argv[], char *const envp[]) {
  (void)prof__crash_end_now(PROF_END_EXEC, 0);
  if (!real_fexecve) exec_resolve();
  return real_fexecve ? real_fexecve(fd, argv, envp) : -1;
}

/* The l variants: argv on the stack from `arg` and the arguments after it,
 * up to a NULL (as the C library does), then execle's environment; `ap`
 * stands after `arg`. */
static int exec_list(int search, const char *target, const char *arg, va_list *ap, int with_env) {
  va_list count;
  va_copy(count, *ap);
  size_t n = 1;
  while (va_arg(count, const char *)) n++;
  va_end(count);
  char *argv[n + 1];
  argv[0] = (char *)arg;
  for (size_t i = 1; i <= n; i++) argv[i] = va_arg(*ap, char *); /* argv[n]: the NULL */
  char **envp = with_env ? va_arg(*ap, char **) : environ;
  return search ? do_execvpe(target, argv, envp) : do_execve(target, argv, envp);
}

PROF_API int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(0, path, arg, &ap, 0);
  va_end(ap);
  return rc;
}

PROF_API int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(0, path, arg, &ap, 1);
  va_end(ap);
  return rc;
}

PROF_API int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(1, file, arg, &ap, 0);
  va_end(ap);
  return rc;
}
