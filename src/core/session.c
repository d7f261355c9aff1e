/* session.c — the profiler's life cycle: prof_init's work
 * (prof__session_init, called by the assembly's prof_init), prof_start and
 * prof_stop, prof_shutdown (also at exit), and self statistics.
 *
 * States: IDLE (never started) → RUNNING → DOWN (shut down, final), or
 * OFF (disabled by configuration, output failure, or inside a forked
 * child). Only RUNNING records events; every other state turns calls into
 * counted no-ops. One mutex serialises state changes; the annotation hot
 * path never takes it.
 *
 * The rest of the session's work lives beside it, one job per file:
 * modules.c (the producer modules), fork.c (fork handling), header.c (the
 * trace header), capture.c (capture scheduling); session_core.h is what
 * they share with this file. Reports (reports.h): the host only records;
 * the launcher (`mlprof run`) or the detached mlprof command writes them,
 * in-process only as fallback.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assembly.h"
#include "bgwriter.h"
#include "capture.h"
#include "config.h"
#include "crash.h"
#include "fork.h"
#include "header.h"
#include "modules.h"
#include "reports.h"
#include "session.h"
#include "session_core.h"
#include "trace/ev_cpuctr.h"
#include "trace/ev_mem.h"
#include "trace/outfile.h"
#include "trace/tracename.h"

enum { ST_IDLE, ST_RUNNING, ST_DOWN, ST_OFF };

int prof__enabled;
uint64_t prof__misuse[PROF_MU_COUNT];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state = ST_IDLE;
static int off_error;           /* what prof_init returns in ST_OFF */
static prof__cfg cfg;
static int step_open;
static uint64_t step_next, step_cur;
static int hooks_installed;
static int by_launcher; /* `mlprof run` writes this process's reports (atomic) */

uint64_t prof__misuse_total(void) {
  uint64_t n = 0;
  for (int i = 0; i < PROF_MU_COUNT; i++) n += __atomic_load_n(&prof__misuse[i], __ATOMIC_RELAXED);
  return n;
}

void prof__session_lock(void) { pthread_mutex_lock(&lock); }
void prof__session_unlock(void) { pthread_mutex_unlock(&lock); }
const prof__cfg *prof__session_cfg(void) { return &cfg; }
int prof__session_by_launcher(void) { return __atomic_load_n(&by_launcher, __ATOMIC_ACQUIRE); }

const char *prof__session_path(void) { return state == ST_RUNNING || state == ST_DOWN ? cfg.path : NULL; }
int prof__session_running(void) { return __atomic_load_n(&prof__enabled, __ATOMIC_ACQUIRE); }

void prof__session_fork_child(void) {
  /* The child has no writer thread: it records nothing (documented). */
  pthread_mutex_init(&lock, NULL);
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  if (state == ST_RUNNING) {
    __atomic_store_n(&state, ST_OFF, __ATOMIC_RELEASE);
    off_error = PROF_ESTATE;
    prof__writer_forget();
  }
}

static int shutdown_session(int at_exit);
static int pinned; /* the image is never unloaded (shared_pinned.c) */

void prof__session_pin(void) { pinned = 1; }

int prof__session_exit(void) { return shutdown_session(pinned); }

/* Registered by prof_init, so it runs at the exit before the library's
 * destructors when prof_init came after the program started (a linked
 * program, a library opened later); a closed library runs it after them,
 * when they have ended the session already. Either way it is the exit. */
static void at_exit(void) { (void)shutdown_session(1); }

static int go_off(int err) {
  __atomic_store_n(&state, ST_OFF, __ATOMIC_RELEASE);
  off_error = err;
  return err;
}

/* A trace another live process is writing (a parent that exec'd this
 * program with the same MLPROF_OUTPUT) is never touched: this process
 * writes `<name>.<pid>.mlpt` beside it. */
static void own_trace_path(void) {
  if (!prof__out_busy(cfg.path)) return;
  char mine[sizeof cfg.path], pid[24];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  if (prof__trace_sibling(mine, sizeof mine, cfg.path, pid) != 0) return;
  if (prof__env_flag("VERBOSE", 0))
    fprintf(stderr, "mlprof: trace %s is being written by another process; this one writes %s\n", cfg.path, mine);
  memcpy(cfg.path, mine, sizeof mine);
}

/* MLPROF_MAX_MB: keep the trace within that many MiB (docs/long-runs.md). */
static void bound_trace(prof__tw *tw) {
  long mb = prof__env_long("MAX_MB", 0, 0, 1L << 20);
  if (mb <= 0) return;
  if (prof__tw_bound(tw, cfg.path, (uint64_t)mb << 20) != 0) {
    fprintf(stderr, "mlprof: MLPROF_MAX_MB=%ld cannot be applied to '%s'; the trace is not bounded\n", mb, cfg.path);
    return;
  }
  /* The step summaries' counters: names are interned by content, so these
   * are the ids the CPU and memory modules' events will carry, known before
   * their strings reach the trace (after the first events that use them). */
  static const char *const names[] = {PROF_CPUCTR_CPU_NS, PROF_MEM_COUNTER_RSS, PROF_MEM_COUNTER_LIVE};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    prof__tw_bound_name(tw, prof__intern(names[i]), names[i]);
}

static int init_locked(const prof_config *c, const prof__assembly *a) {
  if (state == ST_RUNNING) return 0;
  if (state == ST_DOWN) return PROF_ESHUTDOWN;
  if (state == ST_OFF) return off_error;
  int rc = prof__config_resolve(c, &cfg);
  if (rc) return rc; /* a bad config may be retried with a good one */
  if (cfg.disable) return go_off(PROF_EDISABLED);
  prof__modules_builtin(a ? a->producers : NULL);
  prof__reports_setup(a ? a->report_in_process : NULL);
  prof__clock_init(cfg.force_monotonic);
  rc = prof__threads_setup(cfg.ring_kb * 1024u);
  if (rc) return go_off(rc);
  own_trace_path();
  prof__modules_prepare();
  char err[PROF_ERR_MAX];
  prof__tw *tw = prof__header_open(cfg.path, sizeof cfg.path, 1, err);
  if (!tw) {
    fprintf(stderr, "mlprof: %s; profiling is off, the program continues\n", err);
    return go_off(PROF_EIO);
  }
  bound_trace(tw);
  __atomic_store_n(&prof__enabled, 1, __ATOMIC_RELEASE);
  rc = prof__writer_start(tw, cfg.flush_ms, cfg.path);
  if (rc) {
    __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
    prof__tw_abort(tw);
    fprintf(stderr, "mlprof: cannot start the writer thread; profiling is off\n");
    return go_off(rc);
  }
  __atomic_store_n(&state, ST_RUNNING, __ATOMIC_RELEASE);
  if (!hooks_installed) {
    hooks_installed = 1;
    atexit(at_exit);
    prof__fork_install();
  }
  prof__crash_install();
  prof__modules_start();
  prof__capture_init(step_next);
  return 0;
}

int prof__session_init(const prof_config *c, const prof__assembly *a) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_RUNNING) return 0;
  prof__guard_begin();
  pthread_mutex_lock(&lock);
  int rc = init_locked(c, a);
  static int announced; /* under `mlprof run` the launcher learns the trace's path */
  if (rc == 0 && !announced) {
    announced = 1;
    __atomic_store_n(&by_launcher, prof__reports_announce(cfg.path, "trace"), __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
  prof__guard_end();
  return rc;
}

/* "; report ..." as far as it is true now: written, being written by the
 * detached command, or why not. */
static void report_words(const prof__report_run *r, char *out, size_t n) {
  if (__atomic_load_n(&by_launcher, __ATOMIC_ACQUIRE)) snprintf(out, n, "; reports by mlprof run after the exit");
  else if (r->by == PROF_REP_CLI && !r->done)
    snprintf(out, n, "; report %s.report.{txt,json,html} being written by the mlprof command", cfg.path);
  else if (r->ok && r->by == PROF_REP_INPROC)
    snprintf(out, n, "; report %s.report.{txt,json,html} (written in-process: %s)", cfg.path, r->note);
  else if (r->ok) snprintf(out, n, "; report %s.report.{txt,json,html}", cfg.path);
  else if (r->err[0]) snprintf(out, n, "; no report: %s", r->err);
  else out[0] = 0;
}

static void print_summary(const prof__report_run *r) {
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  char words[PATH_MAX + 512], caps[96] = "";
  report_words(r, words, sizeof words);
  uint64_t captured, skipped;
  prof__capture_counts(&captured, &skipped);
  if (captured || skipped)
    snprintf(caps, sizeof caps, "; %llu cycles captured, %llu skipped", (unsigned long long)captured,
             (unsigned long long)skipped);
  fprintf(stderr, "mlprof: trace %s (%llu events, %llu lost)%s%s\n", cfg.path, (unsigned long long)st.events_written,
          (unsigned long long)st.events_lost, words, caps);
}

/* Writer thread, after a crash closed the trace (crash.c): the reports the
 * session would have written at exit (the command is started, not waited
 * for, unless MLPROF_REPORT_WAIT: the crash handler waits at most 20 s).
 * The message goes out with write(2): the crashing thread may hold the
 * stdio lock. */
void prof__session_crashed(void) {
  const char *sig = prof__crash_name(prof__crash_signal());
  char words[PATH_MAX + 512], msg[PATH_MAX + 1024];
  prof__report_run r;
  memset(&r, 0, sizeof r);
  r.job.fd = -1;
  if (cfg.report && !__atomic_load_n(&by_launcher, __ATOMIC_ACQUIRE))
    prof__reports_start(cfg.path, prof__reports_wait_ms() ? 15000 : 0, &r);
  prof__report_job_forget(&r.job);
  if (!cfg.report && !prof__env_flag("VERBOSE", 0)) return;
  report_words(&r, words, sizeof words);
  char why[40];
  int status;
  int end = prof__crash_signal() ? 0 : prof__crash_ended(&status);
  if (end == PROF_END_EXIT) snprintf(why, sizeof why, "_exit(%d)", status);
  else if (end == PROF_END_EXEC) snprintf(why, sizeof why, "exec");
  else snprintf(why, sizeof why, "%s", sig ? sig : "crash");
  int n = snprintf(msg, sizeof msg, "mlprof: %s: trace %s (%llu steps started)%s\n", why, cfg.path,
                   (unsigned long long)prof_step_count(), words);
  if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

PROF_API int prof_shutdown(void) { return shutdown_session(0); }

static int shutdown_session(int at_exit) {
  pthread_mutex_lock(&lock);
  if (state != ST_RUNNING) {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  prof__modules_stop();
  prof__capture_shutdown();
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  prof__xfsz_guard xg; /* a file size limit must not kill the host at exit */
  prof__xfsz_block(&xg);
  int rc = at_exit ? prof__writer_stop_here() : prof__writer_stop();
  __atomic_store_n(&state, ST_DOWN, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  int status;
  if (prof__crash_ended(&status) == PROF_END_EXEC) /* the exec failed, and the program went on */
    fprintf(stderr, "mlprof: recording stopped at an exec that failed; the trace %s ends there\n", cfg.path);
  prof__capture_wait_reports();
  prof__report_run r;
  memset(&r, 0, sizeof r);
  r.job.fd = -1;
  if (rc == 0 && cfg.report && !__atomic_load_n(&by_launcher, __ATOMIC_ACQUIRE))
    prof__reports_start(cfg.path, prof__reports_wait_ms(), &r);
  prof__report_job_forget(&r.job); /* the command goes on alone */
  prof__xfsz_restore(&xg);
  if (rc == 0 && (cfg.report || prof__env_flag("VERBOSE", 0))) print_summary(&r);
  return rc;
}

int prof__session_started(void) { return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_RUNNING; }
int prof__session_step_open(void) { return __atomic_load_n(&step_open, __ATOMIC_ACQUIRE); }

PROF_API int prof_start(void) {
  int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (PROF_UNLIKELY(st != ST_RUNNING)) {
    if (st == ST_OFF) return off_error;
    int rc = prof_init(NULL);
    if (rc) return rc;
  }
  int expected = 0;
  if (!__atomic_compare_exchange_n(&step_open, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    prof__misuse_count(PROF_MU_START_TWICE);
    return PROF_ESTATE;
  }
  uint64_t n = __atomic_fetch_add(&step_next, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&step_cur, n, __ATOMIC_RELAXED);
  uint64_t ticks = prof__ticks();
  uint64_t od = prof__modules_step(1, n, ticks);
  prof__capture_step_begin(n, od, ticks);
  prof__emit(PROF_EV_STEP_BEGIN, 0, 0, n, 0);
  return 0;
}

PROF_API int prof_stop(void) {
  int expected = 1;
  if (!__atomic_compare_exchange_n(&step_open, &expected, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    prof__misuse_count(PROF_MU_STOP_IDLE);
    return PROF_ESTATE;
  }
  uint64_t n = __atomic_load_n(&step_cur, __ATOMIC_RELAXED);
  uint64_t ticks = prof__ticks(); /* before STEP_END: what the modules take at the step end lies inside it */
  prof__emit(PROF_EV_STEP_END, 0, 0, n, 0);
  prof__modules_step(0, n, ticks);
  prof__capture_step_end(n);
  return 0;
}

PROF_API uint64_t prof_step_count(void) { return __atomic_load_n(&step_next, __ATOMIC_RELAXED); }

PROF_API int prof_stats_get(prof_stats *st) {
  if (!st || st->size < sizeof(size_t)) return PROF_EINVAL;
  prof_stats s;
  memset(&s, 0, sizeof s);
  s.size = st->size < sizeof s ? st->size : sizeof s;
  s.events_written = prof__writer_events();
  s.events_lost = prof__writer_lost();
  s.misuse = prof__misuse_total();
  s.threads = prof__threads_count();
  s.bytes_written = prof__writer_bytes();
  memcpy(st, &s, s.size);
  return 0;
}

PROF_API const char *prof_trace_path(void) {
  int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  return st == ST_RUNNING ? cfg.path : NULL;
}
