/* fork.h — the session across fork() (fork.c). */
#ifndef PROF_FORK_H
#define PROF_FORK_H

/* Install the fork handlers (pthread_atfork); once per process, at the
 * first prof_init that starts recording. */
void prof__fork_install(void);

#endif /* PROF_FORK_H */
