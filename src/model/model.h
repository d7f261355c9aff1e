/* model.h — the model-health and interactive-profiling module, seen from the
 * rest of the library: the step observer the session calls at every step
 * boundary, the live shared-memory page read by `mlprof top`, and the
 * capture requests behind `mlprof trigger`, SIGUSR2 and MLPROF_BREAK_AT.
 */
#ifndef PROF_MODEL_H
#define PROF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trace/live_page.h"

/* ---- Called by the session (src/core/session.c) ------------------------ */

/* Step boundary: begin = 1 inside prof_start() before STEP_BEGIN of `step`,
 * begin = 0 inside prof_stop() after STEP_END; `ticks` is the clock then.
 * Returns, at a begin, how many steps an on-demand capture asks to record
 * from this one (0: none). Never allocates; may block only when
 * MLPROF_BREAK_AT pauses the job (after writing a snapshot). */
uint64_t prof__model_step(int begin, uint64_t step, uint64_t ticks);

/* ---- Provided by the session for the module ----------------------------- */

/* Is a capture segment (schedule cycle or on-demand) open or requested? */
int prof__session_capturing(void);
/* Copy the path of the last finished segment trace ("" if none). */
void prof__session_last_segment(char *out, size_t n);

/* ---- Control: signal, triggers, break (ctl.c) ------------------------------ */

void prof__ctl_start(void);
void prof__ctl_stop(void);

/* ---- The live page (live.c) --------------------------------------------- */

/* Layout, path and reader side: trace/live_page.h. */

/* Library side. */
int prof__live_create(void);
void prof__live_destroy(void);
prof__live_page *prof__live_self(void);
void prof__live_step(int begin, uint64_t step, uint64_t now_ns);
/* Writer thread: refresh the bg part (memory, totals, top ranges). */
void prof__live_bg(uint64_t now_ns);


/* Writer-side observation of drained events (for the top ranges). */
void prof__live_observe(uint32_t tid, const void *events, size_t n);

#endif
