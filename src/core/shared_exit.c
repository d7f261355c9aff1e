/* shared_exit.c — _exit() and _Exit() of a profiled program, in the shared
 * library only (linked statically they would replace the C library's in the
 * host's own executable).
 *
 * A program that ends with _exit runs no exit handler, so the profiler's
 * own end (prof_shutdown at exit) never comes and the trace would stop at
 * its last flush with no footer: dash ends every script that way, and
 * training scripts often end with Python's os._exit(). Here the trace is
 * closed first (crash.h: prof__crash_end_now, bounded, async-signal-safe,
 * only in the session's own process), then the process ends exactly as the
 * C library's _exit ends it: exit_group, and exit should that return. The C
 * library's own calls (exit() after the handlers, posix_spawn's child) do
 * not come here.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "mlprof.h"
#include "crash.h"

PROF_API void _exit(int status) {
  (void)prof__crash_end_now(PROF_END_EXIT, status);
  for (;;) {
    syscall(SYS_exit_group, status);
    syscall(SYS_exit, status);
  }
}

PROF_API void _Exit(int status) { _exit(status); }
