/* live.h — the interactive-profiling producer ("live" module): the live
 * shared-memory page read by `mlprof top` (writer side; the layout and the
 * reader are in trace/live_page.h), and the capture requests behind
 * `mlprof trigger`, the trigger signal and MLPROF_BREAK_AT, answered at
 * every step boundary through the module's step hook.
 */
#ifndef PROF_LIVE_H
#define PROF_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"
#include "trace/live_page.h"

/* ---- Control: the module's step hook (ctl.c) ------------------------------ */

/* Step boundary: begin = 1 inside prof_start() before STEP_BEGIN of `step`,
 * begin = 0 inside prof_stop() after STEP_END; `ticks` is the clock then.
 * Returns, at a begin, how many steps an on-demand capture asks to record
 * from this one (0: none). Never allocates; may block only when
 * MLPROF_BREAK_AT pauses the job (after writing a snapshot). */
uint64_t prof__ctl_step(int begin, uint64_t step, uint64_t ticks);

void prof__ctl_start(void);
void prof__ctl_stop(void);

/* ---- The live page (live.c) --------------------------------------------- */

/* Layout, path and reader side: trace/live_page.h. */

/* Library side. */
int prof__live_create(void);
void prof__live_destroy(void);
prof__live_page *prof__live_self(void);
void prof__live_step(int begin, uint64_t step, uint64_t ticks);
/* Writer thread: refresh the bg part (memory, totals, top ranges). */
void prof__live_bg(uint64_t now_ns);


/* Writer-side observation of drained events (for the top ranges). */
void prof__live_observe(uint32_t tid, const prof__event *events, size_t n);

#endif /* PROF_LIVE_H */
