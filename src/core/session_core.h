/* session_core.h — the life cycle (session.c) as the core files that share
 * the session's work see it: modules.c (the module registry), fork.c,
 * header.c (the trace header) and capture.c (capture scheduling). Not for
 * producers: they use producer.h.
 */
#ifndef PROF_SESSION_CORE_H
#define PROF_SESSION_CORE_H

#include "config.h"

/* The session's lock: it serialises state changes (prof_init,
 * prof_shutdown, fork, module registration). The annotation hot path never
 * takes it. */
void prof__session_lock(void);
void prof__session_unlock(void);

/* The session's configuration: resolved by prof_init, fixed while the
 * session runs (zeroed before the first prof_init). */
const prof__cfg *prof__session_cfg(void);

/* 1 when `mlprof run` writes this process's reports (it was told the
 * trace's path at prof_init). */
int prof__session_by_launcher(void);

/* Child side of fork(), with the session's lock taken before the fork (and
 * so held in the child, single-threaded): the child records nothing; its
 * session turns off and its lock is new. */
void prof__session_fork_child(void);

/* The session is started (prof_init done, not shut down; recording may be
 * paused by a schedule), and a step is open now: read by prof_capture
 * (capture.c). */
int prof__session_started(void);
int prof__session_step_open(void);

/* This library's image is never unloaded (shared_pinned.c: preloaded): the
 * shutdown its destructors make is the process's exit (prof__session_exit). */
void prof__session_pin(void);

#endif /* PROF_SESSION_CORE_H */
