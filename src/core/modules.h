/* modules.h — the producer modules of the session (modules.c): which are
 * started (the build's producers as MLPROF_MODULES selects them, and those
 * added at run time), and running their hooks for the core. Producers see
 * only prof__module and prof__module_add (producer.h).
 */
#ifndef PROF_MODULES_H
#define PROF_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "producer.h"

/* At the first prof_init, under the session's lock: say once which
 * MLPROF_MODULES entries name no module of `builtin` (the build's
 * producers, NULL-terminated, in start order: src/lib) and add those it
 * selects. */
void prof__modules_builtin(const prof__module *const *builtin);

/* The prepare hooks of every module, in order (prof_init, under the
 * session's lock, before the trace and the writer). */
void prof__modules_prepare(void);

/* The modules' trace header pairs, appended at kv[0..max); returns how
 * many were added. */
size_t prof__modules_header(prof__kv *kv, size_t max);

/* Start every module in order (prof_init), stop the started ones in the
 * reverse order (prof_shutdown); both under the session's lock. */
void prof__modules_start(void);
void prof__modules_stop(void);

/* Step hooks of the started modules (producer.h); returns the largest
 * on-demand capture asked for (0: none). */
uint64_t prof__modules_step(int begin, uint64_t step, uint64_t ticks);
/* Writer thread: a drained batch of thread `tid`'s events. */
void prof__modules_observe(uint32_t tid, const prof__event *ev, size_t n);
/* Fatal-signal handler: the started modules' crash hooks. */
void prof__modules_crash(void);
/* Is a module of this name (its current name, not an alias) started? */
int prof__modules_running(const char *name);

#endif /* PROF_MODULES_H */
