/* model.h — the model-health and interactive-profiling module, seen from the
 * rest of the library: the step observer the session calls at every step
 * boundary, the live shared-memory page read by `mlprof top`, and the
 * capture requests behind `mlprof trigger`, SIGUSR2 and MLPROF_BREAK_AT.
 */
#ifndef PROF_MODEL_H
#define PROF_MODEL_H

#include <stddef.h>
#include <stdint.h>

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

#define PROF_LIVE_MAGIC 0x4c504c4du /* "MLPL" */
#define PROF_LIVE_VERSION 1
#define PROF_LIVE_TOP 5

typedef struct prof__live_range {
  char name[48];
  uint64_t self_ns;   /* self time in the last window (about 1 s) */
  uint64_t count;
} prof__live_range;

/* The page at <dir>/mlprof.<pid> (dir: MLPROF_LIVE_DIR, else /dev/shm/mlprof-<uid>, 0700).
 * Two writers, each with its own sequence counter (seqlock: odd while the
 * writer is inside): the step thread for `step`, the writer thread for
 * `bg`. Readers retry until a counter is even and unchanged. `ctl` is
 * written by the command-line tools. */
typedef struct prof__live_page {
  uint32_t magic, version, size, pid;
  uint64_t start_mono_ns;
  char program[64];
  char trace[256];
  struct {
    uint64_t seq;
    uint64_t steps;          /* steps finished */
    uint64_t last_step;      /* number of the last finished step */
    uint64_t last_step_ns;   /* its duration */
    uint64_t ewma_step_ns;   /* exponential average, weight 1/8 */
    uint64_t min_step_ns, max_step_ns;
    uint64_t end_mono_ns;    /* when it finished */
    uint64_t open_step;      /* number of the step open now + 1 (0: none) */
    uint64_t open_mono_ns;
  } step;
  struct {
    uint64_t seq;
    uint64_t update_mono_ns;
    uint64_t rss_bytes, peak_rss_bytes;
    int32_t gpu_util_pct;    /* -1: unknown in this build */
    int32_t capturing;       /* a capture segment is being written */
    uint64_t events, lost, bytes;
    uint32_t nranges;
    prof__live_range top[PROF_LIVE_TOP];
    char last_capture[256];  /* trace of the last finished capture */
  } bg;
  struct {
    uint32_t trigger_steps;  /* tool: capture the next N steps (library zeroes it) */
    uint32_t resume_seq;     /* tool: incremented by `mlprof resume` */
    uint64_t paused_step;    /* library: step number + 1 while paused at a break */
    char last_snapshot[256]; /* library: written before paused_step is set */
  } ctl;
} prof__live_page;

/* Library side. */
int prof__live_create(void);
void prof__live_destroy(void);
prof__live_page *prof__live_self(void);
void prof__live_step(int begin, uint64_t step, uint64_t ticks);
/* Writer thread: refresh the bg part (memory, totals, top ranges). */
void prof__live_bg(uint64_t now_ns);

/* Reader side (tools, tests): map the page of `pid` read-write. Returns the
 * page or NULL (errno set); unmap with prof__live_close. */
prof__live_page *prof__live_open(int pid, char *path_out, size_t n);
void prof__live_close(prof__live_page *p);
/* Copy a consistent view of the page into `out`; returns 0 or -1 after
 * many torn reads. */
int prof__live_read(const prof__live_page *p, prof__live_page *out);
/* Path of the page of `pid`. */
void prof__live_path(int pid, char *out, size_t n);

/* Writer-side observation of drained events (for the top ranges). */
void prof__live_observe(uint32_t tid, const void *events, size_t n);

#endif
