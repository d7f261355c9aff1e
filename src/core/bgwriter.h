/* bgwriter.h — the background thread that drains every thread's ring into
 * the trace file. */
#ifndef PROF_BGWRITER_H
#define PROF_BGWRITER_H
#include <stdint.h>

#include "trace/trace.h"

/* Start draining into `tw` (which the writer now owns) every `flush_ms`. */
int prof__writer_start(prof__tw *tw, uint32_t flush_ms, const char *path);
/* Final drain, footer, close; joins the thread. Returns 0 or PROF_EIO. */
int prof__writer_stop(void);
/* The same at the process's exit, on the calling thread: the writer thread
 * is not woken nor joined (it ends alone). Returns 0 or PROF_EIO. */
int prof__writer_stop_here(void);
/* Child side of fork(): forget the writer without touching it. */
void prof__writer_forget(void);
uint64_t prof__writer_events(void);
/* A producer that needs a wake-up at least every `ms` when the trace is
 * quiet (its sampling period) says so; the smallest request wins. The
 * writer still never sleeps less than MLPROF_FLUSH_MS. */
void prof__writer_period_cap(uint32_t ms);
/* The writer thread's id (0 before it first ran). Hooks that give their
 * records the writer's own track use it: at the process's exit the final
 * cycle runs on the exiting thread (prof__writer_stop_here). */
uint32_t prof__writer_tid(void);
/* Writer cycles run so far (wake-ups that drained the rings). */
uint64_t prof__writer_cycles(void);
uint64_t prof__writer_lost(void);
uint64_t prof__writer_bytes(void);
int prof__writer_failed(void);

/* ---- capture segments and sync (model debugging, interactive profiling) ---- */

#define PROF_SEG_SLOTS 8 /* capture segments open or closing at once */

/* Ask the writer to open a segment trace at `path` that receives a copy of
 * every event with ticks >= begin_ticks, until prof__writer_segment_end().
 * Never waits on disk. Returns the slot (0..PROF_SEG_SLOTS-1) or PROF_ESTATE
 * when every slot is busy or the writer is not running. */
int prof__writer_segment_begin(const char *path, uint64_t begin_ticks);
/* Close the window of `slot` at end_ticks; the writer closes the file (with
 * `steps` in its footer) after its next drain. */
void prof__writer_segment_end(int slot, uint64_t end_ticks, uint64_t steps);
/* Writer thread (hooks) only: the open segment of `slot` and its tick
 * window, or NULL. */
prof__tw *prof__writer_segment(int slot, uint64_t *lo_ticks, uint64_t *hi_ticks);
/* Wake the writer, wait until it drained and flushed (at most timeout_ms).
 * Returns 0, PROF_ESTATE (not running) or PROF_EIO (timeout, write error). */
int prof__writer_sync(unsigned timeout_ms);

#endif
