/* live.c — the live page: a small shared-memory file (<dir>/mlprof.<pid>,
 * dir = MLPROF_LIVE_DIR or /dev/shm/mlprof-<uid>) that `mlprof top`,
 * `trigger` and `resume` read and write without ptrace.
 *
 * The default folder is the user's own (mode 0700, refused when it is a
 * symlink, not a folder, or someone else's); pages are created fresh
 * (O_EXCL | O_NOFOLLOW, mode 0600), pages of dead processes found there are
 * removed at start, and a reader only maps a regular file the user owns.
 *
 * The step thread updates the `step` part at every step boundary (a few
 * stores inside a seqlock, no system call); the writer thread refreshes the
 * `bg` part (memory, totals, top ranges of the last second) from its own
 * cycle. Each part has its own sequence counter, so there is one writer per
 * counter. MLPROF_LIVE=0 turns the page off.
 *
 * The page's blocks are reserved before it is mapped (live_page.c): when
 * they cannot be (a full /dev/shm), there is no live page, one message
 * says so, and the program and its trace go on as before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bgwriter.h"
#include "core/config.h"
#include "core/producer.h"
#include "live.h"

static prof__live_page *page;
static char page_path[512];

prof__live_page *prof__live_self(void) { return __atomic_load_n(&page, __ATOMIC_ACQUIRE); }

/* Remove the pages of processes that no longer exist (killed jobs). */
static void sweep_stale(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    if (strncmp(e->d_name, "mlprof.", 7) != 0) continue;
    long pid = strtol(e->d_name + 7, &end, 10);
    if (*end || pid <= 0) continue;
    if (pid != (long)getpid() && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH)) continue; /* alive */
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == geteuid())
      unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

/* MLPROF_LIVE_DIR, when set, must name an existing folder: a page never
 * goes anywhere but where the user asked. 1 when it does (or is unset). */
static int live_dir_named_ok(void) {
  const char *d = prof__env("LIVE_DIR");
  struct stat st;
  if (!d) return 1;
  int missing = stat(d, &st) != 0;
  if (!missing && S_ISDIR(st.st_mode)) return 1;
  char expected[128];
  snprintf(expected, sizeof expected, "an existing folder: %s", missing ? strerror(errno) : "not a folder");
  prof__env_ignored("LIVE_DIR", d, expected, "no live page for mlprof top");
  return 0;
}

/* The page file created and its blocks reserved before it is mapped: on a
 * full tmpfs a page sized with ftruncate alone maps, then the first store to
 * it kills the program with SIGBUS. Returns the mapping, or MAP_FAILED with
 * the cause in *err. */
static void *map_page(int fd, int *err) {
  *err = prof__livepage_reserve(fd, sizeof(prof__live_page));
  if (*err) return MAP_FAILED;
  void *p = mmap(NULL, sizeof(prof__live_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) *err = errno;
  return p;
}

int prof__live_create(void) {
  if (prof__live_self() || !prof__env_flag("LIVE", 1)) return 0;
  if (!live_dir_named_ok()) return PROF_EINVAL;
  char dir[400];
  if (prof__livepage_dir(dir, sizeof dir, 1) != 0) {
    fprintf(stderr, "mlprof: no live page: folder %s is unsafe or cannot be created (%s); "
            "set MLPROF_LIVE_DIR\n", dir, strerror(errno));
    return PROF_EIO;
  }
  sweep_stale(dir);
  if (!prof__env("LIVE_DIR")) sweep_stale("/dev/shm"); /* pages of the former layout */
  snprintf(page_path, sizeof page_path, "%s/mlprof.%d", dir, (int)getpid());
  int err, fd = open(page_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  void *p = MAP_FAILED;
  if (fd < 0) {
    err = errno;
  } else {
    p = map_page(fd, &err);
    close(fd);
    if (p == MAP_FAILED) unlink(page_path);
  }
  if (p == MAP_FAILED) {
    fprintf(stderr, "mlprof: no live page for mlprof top: cannot create %s (%s); profiling continues\n", page_path,
            strerror(err));
    return PROF_EIO;
  }
  prof__live_page *lp = p;
  lp->version = PROF_LIVE_VERSION;
  lp->size = sizeof *lp;
  lp->pid = (uint32_t)getpid();
  lp->start_mono_ns = prof__mono_ns();
  lp->bg.gpu_util_pct = -1;
  snprintf(lp->program, sizeof lp->program, "%s", program_invocation_short_name);
  const char *tp = prof__session_path();
  snprintf(lp->trace, sizeof lp->trace, "%s", tp ? tp : "");
  __atomic_store_n(&lp->magic, PROF_LIVE_MAGIC, __ATOMIC_RELEASE);
  __atomic_store_n(&page, lp, __ATOMIC_RELEASE);
  return 0;
}

/* Also called from the crash handler: atomics, getpid and unlink only. A
 * forked child shares the parent's mapping: it never removes the page. */
void prof__live_destroy(void) {
  prof__live_page *p = __atomic_exchange_n(&page, NULL, __ATOMIC_ACQ_REL);
  if (!p || p->pid != (uint32_t)getpid()) return;
  unlink(page_path);
  /* The mapping stays: a writer-thread cycle may still be using it. */
}

static inline void seq_enter(uint64_t *seq) {
  __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}
static inline void seq_leave(uint64_t *seq) { __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE); }

/* Clock ticks of the open step's begin. A duration converts both ends with
 * the same calibration: the clock is calibrated by the writer thread after
 * the first steps may have begun, and a begin converted before it and an end
 * after it would give a duration off by the calibration (0 or 3x). */
static uint64_t open_ticks;

void prof__live_step(int begin, uint64_t step, uint64_t ticks) {
  prof__live_page *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
  if (!p) return;
  uint64_t now_ns = prof__ticks_to_ns(ticks);
  seq_enter(&p->step.seq);
  if (begin) {
    p->step.open_step = step + 1;
    p->step.open_mono_ns = now_ns;
    open_ticks = ticks;
  } else if (p->step.open_step == step + 1) {
    uint64_t b = prof__ticks_to_ns(open_ticks);
    uint64_t d = now_ns > b ? now_ns - b : 0;
    p->step.last_step = step;
    p->step.last_step_ns = d;
    p->step.ewma_step_ns = p->step.steps ? p->step.ewma_step_ns - p->step.ewma_step_ns / 8 + d / 8 : d;
    if (!p->step.steps || d < p->step.min_step_ns) p->step.min_step_ns = d;
    if (d > p->step.max_step_ns) p->step.max_step_ns = d;
    p->step.steps++;
    p->step.end_mono_ns = now_ns;
    p->step.open_step = 0;
  }
  seq_leave(&p->step.seq);
}

/* ---- top ranges, from the events the writer drains -------------------------- */

#define OBS_THREADS 16
#define OBS_DEPTH 32
#define OBS_NAMES 512

typedef struct obs_frame {
  uint32_t name;
  uint64_t begin, child;
} obs_frame;

static struct {
  uint32_t tid[OBS_THREADS];
  uint32_t depth[OBS_THREADS];
  obs_frame st[OBS_THREADS][OBS_DEPTH];
  struct {
    uint32_t id;
    uint64_t self_ns, count;
  } name[OBS_NAMES];
  uint64_t window_start;
} obs;

static int obs_thread(uint32_t tid) {
  for (int i = 0; i < OBS_THREADS; i++) {
    if (obs.tid[i] == tid) return i;
    if (obs.tid[i] == 0) {
      obs.tid[i] = tid;
      return i;
    }
  }
  return -1;
}

static void obs_add(uint32_t id, uint64_t self) {
  unsigned h = (id * 2654435761u) % OBS_NAMES;
  for (unsigned k = 0; k < OBS_NAMES; k++, h = (h + 1) % OBS_NAMES) {
    if (obs.name[h].id == id || obs.name[h].id == 0) {
      obs.name[h].id = id;
      obs.name[h].self_ns += self;
      obs.name[h].count++;
      return;
    }
  }
}

void prof__live_observe(uint32_t tid, const prof__event *events, size_t n) {
  if (!__atomic_load_n(&page, __ATOMIC_ACQUIRE)) return;
  int ti = obs_thread(tid);
  if (ti < 0) return;
  const prof__event *ev = events;
  for (size_t i = 0; i < n; i++) {
    uint32_t *d = &obs.depth[ti];
    if (ev[i].type == PROF_EV_RANGE_BEGIN) {
      if (*d < OBS_DEPTH) obs.st[ti][*d] = (obs_frame){ev[i].name, ev[i].ts, 0};
      (*d)++;
    } else if (ev[i].type == PROF_EV_RANGE_END && *d > 0) {
      (*d)--;
      if (*d >= OBS_DEPTH) continue;
      obs_frame *f = &obs.st[ti][*d];
      uint64_t dur = ev[i].ts > f->begin ? ev[i].ts - f->begin : 0;
      obs_add(f->name, dur > f->child ? dur - f->child : 0);
      if (*d > 0) obs.st[ti][*d - 1].child += dur;
    }
  }
}

/* Text of a name id, from the name table. */
static void name_of(uint32_t id, char *out, size_t n) {
  if (!prof__intern_copy(id, out, n)) snprintf(out, n, "#%u", id);
}

/* The PROF_LIVE_TOP names with the most self time in the window. */
static void publish_top(prof__live_page *p) {
  prof__live_range top[PROF_LIVE_TOP];
  memset(top, 0, sizeof top);
  uint32_t k = 0;
  for (; k < PROF_LIVE_TOP; k++) {
    int best = -1;
    for (int i = 0; i < OBS_NAMES; i++)
      if (obs.name[i].id && obs.name[i].count && (best < 0 || obs.name[i].self_ns > obs.name[best].self_ns))
        best = i;
    if (best < 0) break;
    top[k].self_ns = obs.name[best].self_ns;
    top[k].count = obs.name[best].count;
    name_of(obs.name[best].id, top[k].name, sizeof top[k].name);
    obs.name[best].count = 0; /* taken */
  }
  memcpy(p->bg.top, top, sizeof top);
  p->bg.nranges = k;
  memset(obs.name, 0, sizeof obs.name);
}

void prof__live_bg(uint64_t now_ns) {
  prof__live_page *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
  if (!p) return;
  int top_due = now_ns - obs.window_start >= 1000000000ull;
  if (!top_due && now_ns - p->bg.update_mono_ns < 200000000ull) return;
  struct rusage ru;
  uint64_t peak = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
  uint64_t rss = prof__proc_rss();
  char last[256];
  prof__capture_last(last, sizeof last);
  seq_enter(&p->bg.seq);
  p->bg.update_mono_ns = now_ns;
  p->bg.rss_bytes = rss;
  /* ru_maxrss and statm count differently (and are read apart): the peak
   * shown is never below a value shown before */
  if (peak < rss) peak = rss;
  if (peak < p->bg.peak_rss_bytes) peak = p->bg.peak_rss_bytes;
  p->bg.peak_rss_bytes = peak;
  p->bg.capturing = prof__capture_running();
  p->bg.events = prof__writer_events();
  p->bg.lost = prof__writer_lost();
  p->bg.bytes = prof__writer_bytes();
  memcpy(p->bg.last_capture, last, sizeof last);
  if (top_due) {
    publish_top(p);
    obs.window_start = now_ns;
  }
  seq_leave(&p->bg.seq);
}

/* ---- the "live" module ----------------------------------------------------------- */

static void live_hook(prof__tw *tw, int final, void *arg) {
  (void)tw;
  (void)final;
  (void)arg;
  prof__live_bg(prof__mono_ns());
}

static int live_start(void) {
  static int hook_added;
  if (!hook_added) hook_added = prof__writer_hook_add(live_hook, NULL) == 0;
  prof__live_create();
  prof__ctl_start();
  return 0;
}

static void live_stop(void) {
  prof__ctl_stop();
  prof__live_destroy();
}

const prof__module prof__mod_live = {
    .name = "live",
    .start = live_start,
    .stop = live_stop,
    .step = prof__ctl_step,
    .observe = prof__live_observe,
    .crash = prof__live_destroy,
};
