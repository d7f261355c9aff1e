/* capture.h — capture scheduling (capture.c): when a step schedule
 * (MLPROF_SCHEDULE) or an on-demand request (SIGUSR2, `mlprof trigger`)
 * records steps into segment traces of their own, and what becomes of
 * those segments. The session calls it at its boundaries; the writer
 * thread and the report paths tell it when a segment is done with.
 * Producers see prof__capture_running and prof__capture_last (producer.h).
 */
#ifndef PROF_CAPTURE_H
#define PROF_CAPTURE_H

#include <stdint.h>

/* prof_init, once recording runs: pause now when the schedule does not
 * record step `next` (the first step to come). */
void prof__capture_init(uint64_t next);
/* prof_start, before STEP_BEGIN of step n; od: on-demand steps the modules
 * asked for now (0: none). Decides whether step n is recorded and whether
 * it opens a segment. Returns at once when nothing is scheduled. */
void prof__capture_step_begin(uint64_t n, uint64_t od, uint64_t ticks);
/* prof_stop, after STEP_END of step n: close a segment that ends here;
 * pause when the schedule does not record the next step. */
void prof__capture_step_end(uint64_t n);

/* prof_shutdown, before the writer stops: recording is never resumed
 * again, and calls made while paused are not counted as misuse. */
void prof__capture_shutdown(void);
/* prof_shutdown, after the writer stopped: let the in-process segment
 * reports finish (at most ~60 s) and the commands writing capture reports
 * (reports.h). */
void prof__capture_wait_reports(void);
/* Schedule cycles captured, and skipped for want of room. */
void prof__capture_counts(uint64_t *captured, uint64_t *skipped);

/* Writer thread: a segment file was closed (written 1), failed to close
 * (0) or was never opened (-1). Starts its reports: the launcher's under
 * `mlprof run`, else the mlprof command's, else a thread of this process. */
void prof__capture_segment_done(const char *path, int written);
/* A capture is finished. written: 1 closed, 0 close failed, -1 never
 * opened; by: who wrote its reports (PROF_REP_NONE: none, err says why
 * when reports were wanted). */
void prof__capture_done(const char *path, int written, int by, const char *err);

#endif /* PROF_CAPTURE_H */
