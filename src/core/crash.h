/* crash.h — keeping the profile of a program that crashes.
 *
 * On SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL the handler records which
 * signal hit where, asks the writer thread to drain every ring and close the
 * trace with the crash in its footer (waiting a bounded time, never taking a
 * lock or allocating itself), then gives the signal back to the program's
 * own disposition (its handler, or the default action) and re-delivers it.
 * A program that ends with _exit() or an exec gets the same close, without
 * the crash.
 */
#ifndef PROF_CRASH_H
#define PROF_CRASH_H

#include <stddef.h>

#include "trace/trace.h"

/* Install the handlers where the program has not set the signal to be
 * ignored; remember the program's handlers to chain to. Called by
 * prof_init; a later sigaction() by the program replaces ours (it wins). */
void prof__crash_install(void);
/* Give each signal back to what it was, where our handler is still there. */
void prof__crash_uninstall(void);
/* The signal that crashed the process, 0 when none. */
int prof__crash_signal(void);
/* Footer keys describing the crash (crash.signal, crash.signo, crash.code,
 * crash.addr, crash.pc, crash.tid, crash.ns): writes up to `max` pairs
 * into kv (values in vals) and returns how many; 0 without a crash. */
size_t prof__crash_footer(prof__kv *kv, char (*vals)[32], size_t max);
/* "SIGSEGV" etc., or NULL for another number. */
const char *prof__crash_name(int sig);

/* How an image ends without its exit handlers. */
enum { PROF_END_EXIT = 1, PROF_END_EXEC = 2 };

/* The program's image ends now without running its exit handlers: with
 * _exit() or _Exit() (how = PROF_END_EXIT, shared_exit.c) or with an exec
 * (PROF_END_EXEC, shared_exec.c). In the session's own process the trace
 * is closed now, as after a crash but with no crash keys in its footer (a
 * bounded wait, then the reports); once only. Nothing in another process (a
 * forked or vforked child: the pid differs) or when no trace is being
 * written. Async-signal-safe: a signal handler may call _exit or exec. An
 * exec that fails leaves the session closed, as after a recovered crash.
 * Returns 1 when this call closed the trace, else 0. */
int prof__crash_end_now(int how, int status);
/* How the image ended (PROF_END_*) and the _exit status, or 0. */
int prof__crash_ended(int *status);

/* Writer side, async-signal-safe: ask the writer thread to drain the rings
 * and close the trace with the crash footer; wait for it at most
 * `trace_ms` (then at most `report_ms` more for the session's report
 * files). Returns 0 when the trace was closed, -1 otherwise (not running,
 * called on the writer thread itself, timeout). */
int prof__writer_crash_flush(unsigned trace_ms, unsigned report_ms);
/* Session side, on the writer thread after a crash closed the trace: write
 * the report files when the session writes them at exit. */
void prof__session_crashed(void);

#endif
