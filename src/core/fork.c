/* fork.c — the session across fork(): the handlers that keep a fork safe
 * while the profiler runs, and turn the session off in the child (which has
 * no writer thread, so it records nothing; documented).
 *
 * fork() holds the allocator's and the loader's locks while it runs: a
 * profiler signal (the CPU sampler unwinds, which takes the loader's lock)
 * handled on the forking thread then would deadlock with the writer. The
 * forking thread takes no signal but a crash from prepare to parent/child;
 * a signal sent meanwhile stays pending and arrives right after. The
 * session's lock is held across the fork, so the child never inherits a
 * state change half done.
 */
#include <pthread.h>
#include <signal.h>

#include "fork.h"
#include "session_core.h"

static __thread sigset_t saved_mask;

static void block_signals(void) {
  sigset_t s;
  sigfillset(&s);
  sigdelset(&s, SIGSEGV);
  sigdelset(&s, SIGBUS);
  sigdelset(&s, SIGFPE);
  sigdelset(&s, SIGILL);
  sigdelset(&s, SIGABRT);
  pthread_sigmask(SIG_BLOCK, &s, &saved_mask);
}

static void prepare(void) {
  block_signals();
  prof__session_lock();
}

static void parent(void) {
  prof__session_unlock();
  pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

static void child(void) {
  prof__session_fork_child();
  pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

void prof__fork_install(void) { pthread_atfork(prepare, parent, child); }
