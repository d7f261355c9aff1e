/* meta.h — the writer's side of the META queue (meta.c); producers queue
 * pairs with prof__meta_add (session.h). */
#ifndef PROF_META_H
#define PROF_META_H

#include "trace/trace.h"

/* Writer: every queued pair as one META chunk of tw, and the queue emptied.
 * Returns 0 or the writer's error code. */
int prof__meta_emit(prof__tw *tw);
/* Child side of fork(): the queue's lock is new (the writer is forgotten). */
void prof__meta_fork_child(void);

#endif
