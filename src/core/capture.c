/* capture.c — capture scheduling (capture.h): model debugging and
 * interactive profiling.
 *
 * With a step schedule (MLPROF_SCHEDULE) recording is paused outside
 * active steps, and each cycle's active steps also go to a segment trace of
 * their own (`<trace>.cycle<N>.mlpt`); an on-demand capture (SIGUSR2,
 * `mlprof trigger`) does the same for the next N steps
 * (`<trace>.trigger<K>.mlpt`). Transitions happen at step boundaries under
 * a small mutex of their own (never held across disk I/O); the writer
 * thread opens and closes the files. At most PROF_CAPTURES_IN_FLIGHT
 * captures are begun and not yet finished (written and reported); a cycle
 * that finds no room is not captured (one message).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"
#include "bgwriter.h"
#include "capture.h"
#include "producer.h"
#include "reports.h"
#include "session_core.h"
#include "trace/tracename.h"

static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  int down;            /* shutdown began: never re-enable recording */
  int paused;          /* recording paused by the schedule */
  uint64_t saved_nr;   /* "call_while_not_running" count when paused */
  int slot;            /* writer segment slot of the open segment, -1: none */
  int sched_last;      /* the open scheduled segment ends with the current step */
  uint64_t seg_steps;  /* steps in the open segment */
  uint64_t od_left;    /* on-demand steps still to record */
  uint64_t ntriggers;
  int reporting;       /* in-process report threads still running */
  int inflight;        /* captures begun and not yet finished */
  uint64_t ncaptured, nskipped; /* scheduled cycles captured, and skipped for want of room */
  char last[PATH_MAX]; /* last finished segment */
  uint64_t api_steps;  /* steps prof_capture() asked for, taken at the next prof_start */
  int api_open;        /* the open segment is a prof_capture() one */
  uint64_t ncaptures;  /* prof_capture() segments begun */
  uint64_t ndone;      /* segments finished (closed, report written) */
  char done[PROF_CAPTURE_KEEP][PATH_MAX]; /* the last finished ones, by ndone % PROF_CAPTURE_KEEP */
} cap = {.slot = -1};
static int api_req; /* a prof_capture() request waits for the next prof_start */

/* Is step n an active step of the schedule? Sets the 1-based cycle and
 * whether n opens or closes the cycle's active run. */
static int sched_active(const prof__sched *s, uint64_t n, uint64_t *cycle, int *first, int *last) {
  if (!s->on || n < s->skip_first) return 0;
  uint64_t len = s->wait + s->warmup + s->active, m = n - s->skip_first, c = m / len, r = m % len;
  uint64_t a = s->wait + s->warmup;
  if ((s->repeat && c >= s->repeat) || r < a) return 0;
  *cycle = c + 1;
  *first = r == a;
  *last = r == len - 1;
  return 1;
}

static int sched_records(uint64_t n) {
  const prof__sched *s = &prof__session_cfg()->sched;
  uint64_t c;
  int f, l;
  return !s->on || sched_active(s, n, &c, &f, &l);
}

static void pause_locked(void) {
  if (cap.paused || cap.down) return;
  cap.saved_nr = __atomic_load_n(&prof__misuse[PROF_MU_NOT_RUNNING], __ATOMIC_RELAXED);
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  cap.paused = 1;
}

/* Calls made while paused were not misuse: forget what they counted. */
static void resume_locked(void) {
  if (!cap.paused || cap.down || prof__writer_failed()) return;
  __atomic_store_n(&prof__misuse[PROF_MU_NOT_RUNNING], cap.saved_nr, __ATOMIC_RELAXED);
  __atomic_store_n(&prof__enabled, 1, __ATOMIC_RELEASE);
  cap.paused = 0;
}

void prof__capture_init(uint64_t next) {
  pthread_mutex_lock(&cap_mu);
  if (!sched_records(next)) pause_locked();
  pthread_mutex_unlock(&cap_mu);
}

/* "<trace stem>.<kind><k>.mlpt" (trace/tracename.h) */
static void segment_path(char *out, size_t n, const char *kind, uint64_t k) {
  char tag[48];
  snprintf(tag, sizeof tag, "%s%llu", kind, (unsigned long long)k);
  prof__trace_sibling(out, n, prof__session_cfg()->path, tag);
}

static void segment_begin_locked(const char *kind, uint64_t k, uint64_t ticks) {
  char path[PATH_MAX + 64];
  segment_path(path, sizeof path, kind, k);
  int slot = prof__writer_segment_begin(path, ticks);
  if (slot < 0) {
    fprintf(stderr, "mlprof: capture %s not started: the previous ones are still being written\n", path);
    return;
  }
  cap.slot = slot;
  cap.seg_steps = 0;
  cap.inflight++;
}

/* A cycle of the schedule with no room for its capture: one message. */
static void skip_cycle_locked(uint64_t cycle) {
  if (cap.nskipped++ == 0)
    fprintf(stderr,
            "mlprof: MLPROF_SCHEDULE: cycle %llu not captured: %d captures are still being written or reported "
            "(the cycles are shorter than that takes); the main trace keeps every step, and later cycles "
            "without room are skipped without a message\n",
            (unsigned long long)cycle, PROF_CAPTURES_IN_FLIGHT);
}

void prof__capture_step_begin(uint64_t n, uint64_t od, uint64_t ticks) {
  const prof__sched *s = &prof__session_cfg()->sched;
  if (PROF_LIKELY(!s->on && !od && !__atomic_load_n(&cap.od_left, __ATOMIC_RELAXED) &&
                  !__atomic_load_n(&api_req, __ATOMIC_RELAXED)))
    return;
  pthread_mutex_lock(&cap_mu);
  uint64_t cycle = 0;
  int first = 0, last = 0;
  int sched = sched_active(s, n, &cycle, &first, &last);
  int room = cap.inflight < PROF_CAPTURES_IN_FLIGHT;
  if (cap.api_steps && cap.slot < 0 && room) { /* prof_capture() */
    cap.od_left = cap.api_steps;
    segment_begin_locked("capture", ++cap.ncaptures, ticks);
    cap.api_open = cap.slot >= 0;
    if (cap.slot < 0) cap.od_left = 0;
    cap.api_steps = 0;
    __atomic_store_n(&api_req, 0, __ATOMIC_RELAXED);
  } else if (od && cap.od_left == 0 && cap.slot < 0 && room) {
    cap.od_left = od;
    segment_begin_locked("trigger", ++cap.ntriggers, ticks);
    if (cap.slot < 0) cap.od_left = 0;
  } else if (od) {
    fprintf(stderr, "mlprof: on-demand capture ignored at step %llu: %s\n", (unsigned long long)n,
            room ? "a capture is running" : "earlier captures are still being written or reported");
  } else if (sched && first && cap.slot < 0) {
    if (!room) skip_cycle_locked(cycle);
    else {
      segment_begin_locked("cycle", cycle, ticks);
      cap.ncaptured += cap.slot >= 0;
    }
  }
  if (cap.od_left == 0) cap.sched_last = sched && last;
  if (!s->on || sched || cap.od_left) resume_locked();
  pthread_mutex_unlock(&cap_mu);
}

void prof__capture_step_end(uint64_t n) {
  const prof__sched *s = &prof__session_cfg()->sched;
  if (PROF_LIKELY(!s->on && __atomic_load_n(&cap.slot, __ATOMIC_RELAXED) < 0)) return;
  pthread_mutex_lock(&cap_mu);
  if (cap.slot >= 0) {
    cap.seg_steps++;
    int end = cap.od_left ? --cap.od_left == 0 : cap.sched_last;
    if (end) {
      prof__writer_segment_end(cap.slot, prof__ticks(), cap.seg_steps);
      cap.slot = -1;
      cap.sched_last = 0;
      cap.api_open = 0;
    }
  }
  if (s->on && !cap.od_left && !sched_records(n + 1)) pause_locked();
  pthread_mutex_unlock(&cap_mu);
}

/* ---- prof_capture: a capture the program asks for -------------------------- */

PROF_API int prof_capture(uint64_t steps) {
  if (!prof__session_started()) return PROF_ESTATE;
  int rc = 0;
  pthread_mutex_lock(&cap_mu);
  if (steps == 0) { /* end this program's capture at the current boundary */
    cap.api_steps = 0;
    __atomic_store_n(&api_req, 0, __ATOMIC_RELAXED);
    if (cap.slot >= 0 && cap.api_open) {
      if (prof__session_step_open()) {
        cap.od_left = 1; /* the open step is the last */
      } else {
        prof__writer_segment_end(cap.slot, prof__ticks(), cap.seg_steps);
        cap.slot = -1;
        cap.od_left = 0;
        cap.api_open = 0;
      }
    }
  } else if (cap.api_steps || (cap.slot >= 0 && cap.od_left)) {
    rc = PROF_ESTATE; /* one on-demand capture at a time */
  } else {
    cap.api_steps = steps;
    __atomic_store_n(&api_req, 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&cap_mu);
  return rc;
}

PROF_API uint64_t prof_capture_done(uint64_t index, char *path, size_t n) {
  pthread_mutex_lock(&cap_mu);
  uint64_t count = cap.ndone;
  if (path && n) {
    path[0] = 0;
    if (index >= 1 && index <= count && count - index < PROF_CAPTURE_KEEP)
      snprintf(path, n, "%s", cap.done[(index - 1) % PROF_CAPTURE_KEEP]);
  }
  pthread_mutex_unlock(&cap_mu);
  return count;
}

int prof__capture_running(void) {
  pthread_mutex_lock(&cap_mu);
  int on = cap.slot >= 0;
  pthread_mutex_unlock(&cap_mu);
  return on;
}

void prof__capture_last(char *out, size_t n) {
  pthread_mutex_lock(&cap_mu);
  snprintf(out, n, "%s", cap.last);
  pthread_mutex_unlock(&cap_mu);
}

void prof__capture_counts(uint64_t *captured, uint64_t *skipped) {
  pthread_mutex_lock(&cap_mu);
  *captured = cap.ncaptured;
  *skipped = cap.nskipped;
  pthread_mutex_unlock(&cap_mu);
}


/* On-demand captures are named on stderr (someone asked for each);
 * schedule cycles only with MLPROF_VERBOSE, or when one could not be
 * closed. */
void prof__capture_done(const char *path, int written, int by, const char *err) {
  pthread_mutex_lock(&cap_mu);
  if (written >= 0) {
    snprintf(cap.last, sizeof cap.last, "%s", path);
    snprintf(cap.done[cap.ndone % PROF_CAPTURE_KEEP], PATH_MAX, "%s", path);
    cap.ndone++;
  }
  cap.inflight--;
  pthread_mutex_unlock(&cap_mu);
  int trigger = prof__trace_is_sibling(path, prof__session_cfg()->path, "trigger"); /* on demand */
  if (written < 0 || (written && !trigger && !prof__env_flag("VERBOSE", 0))) return;
  if (!written) fprintf(stderr, "mlprof: capture %s (incomplete)\n", path);
  else if (by != PROF_REP_NONE) fprintf(stderr, "mlprof: capture %s; report %s.report.txt\n", path, path);
  else if (err && *err) fprintf(stderr, "mlprof: capture %s; no report: %s\n", path, err);
  else fprintf(stderr, "mlprof: capture %s\n", path);
}

/* The in-process fallback: a thread of its own, so the writer never waits
 * for an analysis. */
static void *segment_report(void *arg) {
  char *path = arg, err[PROF_ERR_MAX] = "";
  int ok = prof__reports_in_process(path, err) == 0;
  prof__capture_done(path, 1, ok ? PROF_REP_INPROC : PROF_REP_NONE, err);
  pthread_mutex_lock(&cap_mu);
  cap.reporting--;
  pthread_mutex_unlock(&cap_mu);
  free(path);
  return NULL;
}

/* Say once why capture reports are written in-process. */
static void note_in_process(const char *note) {
  static int said;
  if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
    fprintf(stderr, "mlprof: capture reports are written in-process: %s\n", note);
}

void prof__capture_segment_done(const char *path, int written) {
  int want = written > 0 && prof__session_cfg()->report;
  if (written > 0 && prof__session_by_launcher()) {
    prof__reports_announce(path, "capture");
    want = 0;
  }
  char note[PROF_ERR_MAX];
  if (want && prof__reports_capture_start(path, note)) return;
  if (want) note_in_process(note);
  char *copy = want ? strdup(path) : NULL;
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&cap_mu);
  int started = copy && pthread_create(&th, &at, segment_report, copy) == 0;
  if (started) cap.reporting++;
  pthread_mutex_unlock(&cap_mu);
  pthread_attr_destroy(&at);
  if (!started) {
    free(copy);
    prof__capture_done(path, written, PROF_REP_NONE, want ? "cannot start a report thread" : NULL);
  }
}

void prof__capture_shutdown(void) {
  pthread_mutex_lock(&cap_mu);
  if (cap.paused) /* calls made while paused were not misuse */
    __atomic_store_n(&prof__misuse[PROF_MU_NOT_RUNNING], cap.saved_nr, __ATOMIC_RELAXED);
  cap.down = 1;
  pthread_mutex_unlock(&cap_mu);
}

void prof__capture_wait_reports(void) {
  for (int i = 0; i < 6000; i++) {
    pthread_mutex_lock(&cap_mu);
    int busy = cap.reporting;
    pthread_mutex_unlock(&cap_mu);
    if (!busy) break;
    usleep(10000);
  }
  prof__reports_capture_end(prof__reports_wait_ms());
}
