/* live_page.h — the live page: the contract between a running job (the
 * recorder writes it, src/live/live.c) and `mlprof top`, `trigger` and
 * `resume`, which map it by pid without ptrace. Layout, where it lives, and
 * the reader side.
 */
#ifndef PROF_LIVE_PAGE_H
#define PROF_LIVE_PAGE_H

#include <stddef.h>
#include <stdint.h>

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

/* The folder of the pages (MLPROF_LIVE_DIR, else /dev/shm/mlprof-<uid>,
 * made 0700 when `create`) into out; 0, or -1 when the default folder is
 * unsafe (a symlink, not a folder, someone else's). */
int prof__livepage_dir(char *out, size_t n, int create);

/* Reserve the blocks of the first `len` bytes of the page file fd, so that
 * its mapping never faults for want of space (a full tmpfs): posix_fallocate
 * (retried on EINTR), or, where the file system has none, zeros written over
 * a fresh, empty file. Returns 0 or an error number (ENOSPC: no room; the
 * page must then not be mapped). Also extends the file to `len`. */
int prof__livepage_reserve(int fd, size_t len);

/* Reader side (tools, tests): map the page of `pid` read-write. Returns the
 * page or NULL (errno set); unmap with prof__livepage_close. */
prof__live_page *prof__livepage_open(int pid, char *path_out, size_t n);
void prof__livepage_close(prof__live_page *p);
/* Copy a consistent view of the page into `out` (its strings NUL-ended);
 * returns 0 or -1 after many torn reads. */
int prof__livepage_read(const prof__live_page *p, prof__live_page *out);
/* Path of the page of `pid`. */
void prof__livepage_path(int pid, char *out, size_t n);

#endif /* PROF_LIVE_PAGE_H */
