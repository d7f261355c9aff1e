/* session.c — the profiler's life cycle: prof_init, prof_start/prof_stop,
 * prof_shutdown (also at exit), fork handling, and self statistics.
 *
 * States: IDLE (never started) → RUNNING → DOWN (shut down, final), or
 * OFF (disabled by configuration, output failure, or inside a forked
 * child). Only RUNNING records events; every other state turns calls into
 * counted no-ops. One mutex serialises state changes; the annotation hot
 * path never takes it.
 *
 * Capture (model debugging and interactive profiling): with a step schedule
 * (MLPROF_SCHEDULE) recording is paused outside active steps, and each
 * cycle's active steps also go to a segment trace of their own
 * (`<trace>.cycle<N>.mlpt`); an on-demand capture (SIGUSR2, `mlprof
 * trigger`) does the same for the next N steps (`<trace>.trigger<K>.mlpt`),
 * and so does prof_capture() from the program (`<trace>.capture<K>.mlpt`).
 * Transitions happen at step boundaries under a small mutex of their own;
 * the writer thread opens and closes the files.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bgwriter.h"
#include "config.h"
#include "crash.h"
#include "producer.h"
#include "rank.h"
#include "session.h"
#include "trace/outfile.h"
#include "trace/tracename.h"
#include "tracepath.h"

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
static prof__module modules[32];
static int nmodules, started_modules, builtin_added;

/* Capture state; cap_mu is never held across disk I/O. */
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
  int reporting;       /* report threads still running */
  char last[PATH_MAX]; /* last finished segment */
  uint64_t api_steps;  /* steps prof_capture() asked for, taken at the next prof_start */
  int api_open;        /* the open segment is a prof_capture() one */
  uint64_t ncaptures;  /* prof_capture() segments begun */
  uint64_t ndone;      /* segments finished (closed, report written) */
  char done[PROF_CAPTURE_KEEP][PATH_MAX]; /* the last finished ones, by ndone % PROF_CAPTURE_KEEP */
} cap = {.slot = -1};
static int api_req; /* a prof_capture() request waits for the next prof_start */

uint64_t prof__misuse_total(void) {
  uint64_t n = 0;
  for (int i = 0; i < PROF_MU_COUNT; i++) n += __atomic_load_n(&prof__misuse[i], __ATOMIC_RELAXED);
  return n;
}

static int module_add_locked(const prof__module *m) {
  if (nmodules >= 32 || !m) return PROF_EINVAL;
  modules[nmodules++] = *m;
  return 0;
}

/* Step hooks of the started modules; the largest capture request wins. */
static uint64_t modules_step(int begin, uint64_t step, uint64_t ticks) {
  uint64_t od = 0;
  int n = __atomic_load_n(&started_modules, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (modules[i].step) {
      uint64_t r = modules[i].step(begin, step, ticks);
      if (r > od) od = r;
    }
  return od;
}

void prof__modules_observe(uint32_t tid, const prof__event *ev, size_t n) {
  int k = __atomic_load_n(&started_modules, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++)
    if (modules[i].observe) modules[i].observe(tid, ev, n);
}

void prof__modules_crash(void) {
  int k = __atomic_load_n(&started_modules, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++)
    if (modules[i].crash) modules[i].crash();
}

/* MLPROF_MODULES: a comma-separated list of the producer modules to start
 * ("stack,mem,cpu,gpu,res,model,live"), "none", or "all" (the default). The
 * modules of this build are prof__producers (src/lib/producers.def). */
static int module_wanted(const char *name) {
  const char *list = prof__env("MODULES");
  if (!list || strcmp(list, "all") == 0) return 1;
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* Say once which MLPROF_MODULES entries name no module of this build. */
static void modules_check(void) {
  const char *list = prof__env("MODULES");
  if (!list || strcmp(list, "all") == 0 || strcmp(list, "none") == 0) return;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int known = 0;
    for (int i = 0; prof__producers[i] && !known; i++)
      known = strlen(prof__producers[i]->name) == len && strncmp(prof__producers[i]->name, p, len) == 0;
    if (!known) {
      char names[160] = "";
      for (int i = 0; prof__producers[i]; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? "," : "", prof__producers[i]->name);
      }
      fprintf(stderr, "mlprof: MLPROF_MODULES='%s': '%.*s' is not a module of this build (expected all, none "
              "or a list of %s); it is ignored\n", list, (int)len, p, names);
    }
    if (!e) break;
    p = e + 1;
  }
}

int prof__module_add(const prof__module *m) {
  pthread_mutex_lock(&lock);
  int rc = module_add_locked(m);
  pthread_mutex_unlock(&lock);
  return rc;
}

const char *prof__session_path(void) { return state == ST_RUNNING || state == ST_DOWN ? cfg.path : NULL; }
int prof__session_running(void) { return __atomic_load_n(&prof__enabled, __ATOMIC_ACQUIRE); }

static void at_exit(void) { prof_shutdown(); }

/* fork() holds the allocator's and the loader's locks while it runs: a
 * profiler signal (the CPU sampler unwinds, which takes the loader's lock)
 * handled on the forking thread then would deadlock with the writer. The
 * forking thread takes no signal but a crash from prepare to parent/child;
 * a signal sent meanwhile stays pending and arrives right after. */
static __thread sigset_t fork_saved_mask;

static void fork_block_signals(void) {
  sigset_t s;
  sigfillset(&s);
  sigdelset(&s, SIGSEGV);
  sigdelset(&s, SIGBUS);
  sigdelset(&s, SIGFPE);
  sigdelset(&s, SIGILL);
  sigdelset(&s, SIGABRT);
  pthread_sigmask(SIG_BLOCK, &s, &fork_saved_mask);
}

static void fork_prepare(void) {
  fork_block_signals();
  pthread_mutex_lock(&lock);
}
static void fork_parent(void) {
  pthread_mutex_unlock(&lock);
  pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}
static void fork_child(void) {
  /* The child has no writer thread: it records nothing (documented). */
  pthread_mutex_init(&lock, NULL);
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  if (state == ST_RUNNING) {
    __atomic_store_n(&state, ST_OFF, __ATOMIC_RELEASE);
    off_error = PROF_ESTATE;
    prof__writer_forget();
  }
  pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}

static void append_cmdline(char *out, size_t n) {
  FILE *f = fopen("/proc/self/cmdline", "rb");
  size_t len = 0;
  if (f) {
    len = fread(out, 1, n - 1, f);
    fclose(f);
  }
  for (size_t i = 0; i + 1 < len; i++)
    if (out[i] == 0) out[i] = ' ';
  out[len] = 0;
}

/* Create the trace at `path` (path_n bytes) or the first free name after it
 * (trace/tracename.h); `path` becomes the name taken. The session's own
 * trace (`own`) names the trace this process wrote before it and is named
 * for the ones after it (tracepath.h); capture segments do neither. */
static prof__tw *open_trace(char *path, size_t path_n, int own, char *err) {
  if (own && cfg.out_err[0]) { /* the output folder was refused */
    snprintf(err, 256, "%s", cfg.out_err);
    return NULL;
  }
  char prev[PATH_MAX] = "";
  if (own) prof__prev_trace(prev, sizeof prev);
  char pid[24], rt[32], mono[32], tsc0[32], ring[24], host[256] = "", cmd[2048];
  struct utsname u;
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  snprintf(rt, sizeof rt, "%llu", (unsigned long long)prof__clk.realtime0);
  snprintf(mono, sizeof mono, "%llu", (unsigned long long)prof__clk.mono0);
  snprintf(tsc0, sizeof tsc0, "%llu", (unsigned long long)prof__clk.tsc0);
  snprintf(ring, sizeof ring, "%u", cfg.ring_kb);
  if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  append_cmdline(cmd, sizeof cmd);
  if (uname(&u) != 0) memset(&u, 0, sizeof u);
  char os[200];
  snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
  prof__rank rk;
  char rank[24], lrank[24], wsize[24];
  prof__rank_detect(&rk);
  snprintf(rank, sizeof rank, "%ld", rk.rank);
  snprintf(lrank, sizeof lrank, "%ld", rk.local_rank);
  snprintf(wsize, sizeof wsize, "%ld", rk.world_size);
  prof__kv kv[] = {
      {"rank", rank},
      {"local_rank", lrank},
      {"world_size", wsize},
      {"rank_source", rk.source},
      {"program", prof__program_name()},
      {"pid", pid},
      {"cmdline", cmd},
      {"hostname", host},
      {"os", os},
      {"version", MLPROF_VERSION_STRING},
      {"clock", __atomic_load_n(&prof__clk.use_tsc, __ATOMIC_RELAXED) ? "tsc" : "monotonic"},
      {"clock.tsc0", tsc0},
      {"start_mono_ns", mono},
      {"start_realtime_ns", rt},
      {"ring_kb", ring},
      {"previous_trace", prev},
  };
  enum { BASE = sizeof kv / sizeof kv[0], MAX = BASE + 64 };
  prof__kv all[MAX];
  memcpy(all, kv, sizeof kv);
  size_t n = BASE - !prev[0]; /* previous_trace only when there is one */
  for (int i = 0; i < nmodules; i++)
    if (modules[i].header) n += modules[i].header(all + n, MAX - n);
  prof__tw *tw = prof__trace_create_free(path, path_n, all, n, err);
  if (tw && own) prof__prev_trace_set(path);
  return tw;
}

prof__tw *prof__session_open_trace(char *path, size_t n, char *err) { return open_trace(path, n, 0, err); }

/* ---- capture ----------------------------------------------------------------- */

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
  uint64_t c;
  int f, l;
  return !cfg.sched.on || sched_active(&cfg.sched, n, &c, &f, &l);
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

static void capture_init(void) {
  pthread_mutex_lock(&cap_mu);
  if (!sched_records(step_next)) pause_locked();
  pthread_mutex_unlock(&cap_mu);
}

/* "<trace without .mlpt>.<kind><n>.mlpt" */
static void segment_path(char *out, size_t n, const char *kind, uint64_t k) {
  size_t len = strlen(cfg.path);
  if (len >= 5 && strcmp(cfg.path + len - 5, ".mlpt") == 0) len -= 5;
  snprintf(out, n, "%.*s.%s%llu.mlpt", (int)len, cfg.path, kind, (unsigned long long)k);
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
}

/* At prof_start, before STEP_BEGIN: decide whether step n is recorded and
 * whether it opens a segment. `od`: on-demand steps asked for now. */
static void capture_step_begin(uint64_t n, uint64_t od, uint64_t ticks) {
  pthread_mutex_lock(&cap_mu);
  uint64_t cycle = 0;
  int first = 0, last = 0;
  int sched = sched_active(&cfg.sched, n, &cycle, &first, &last);
  if (cap.api_steps && cap.slot < 0) {
    cap.od_left = cap.api_steps;
    segment_begin_locked("capture", ++cap.ncaptures, ticks);
    cap.api_open = cap.slot >= 0;
    if (cap.slot < 0) cap.od_left = 0;
    cap.api_steps = 0;
    __atomic_store_n(&api_req, 0, __ATOMIC_RELAXED);
  } else if (od && cap.od_left == 0 && cap.slot < 0) {
    cap.od_left = od;
    segment_begin_locked("trigger", ++cap.ntriggers, ticks);
    if (cap.slot < 0) cap.od_left = 0;
  } else if (od) {
    fprintf(stderr, "mlprof: on-demand capture ignored at step %llu: a capture is running\n",
            (unsigned long long)n);
  } else if (sched && first && cap.slot < 0) {
    segment_begin_locked("cycle", cycle, ticks);
  }
  if (cap.od_left == 0) cap.sched_last = sched && last;
  if (!cfg.sched.on || sched || cap.od_left) resume_locked();
  pthread_mutex_unlock(&cap_mu);
}

/* At prof_stop, after STEP_END: close a segment that ends here; pause when
 * the schedule does not record the next step. */
static void capture_step_end(uint64_t n) {
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
  if (cfg.sched.on && !cap.od_left && !sched_records(n + 1)) pause_locked();
  pthread_mutex_unlock(&cap_mu);
}

int prof__session_capturing(void) {
  pthread_mutex_lock(&cap_mu);
  int on = cap.slot >= 0;
  pthread_mutex_unlock(&cap_mu);
  return on;
}

void prof__session_last_segment(char *out, size_t n) {
  pthread_mutex_lock(&cap_mu);
  snprintf(out, n, "%s", cap.last);
  pthread_mutex_unlock(&cap_mu);
}

static void segment_finished_locked(const char *path) {
  snprintf(cap.last, sizeof cap.last, "%s", path);
  snprintf(cap.done[cap.ndone % PROF_CAPTURE_KEEP], PATH_MAX, "%s", path);
  cap.ndone++;
}

static void *segment_report(void *arg) {
  char *path = arg, err[256] = "";
  int ok = prof__report_hook(path, err) == 0;
  if (ok) fprintf(stderr, "mlprof: capture %s; report %s.report.txt\n", path, path);
  else fprintf(stderr, "mlprof: capture %s; no report: %s\n", path, err);
  pthread_mutex_lock(&cap_mu);
  segment_finished_locked(path);
  cap.reporting--;
  pthread_mutex_unlock(&cap_mu);
  free(path);
  return NULL;
}

/* Writer thread: a segment file was closed. Its report is written on a
 * thread of its own, so the writer never waits for an analysis. */
void prof__session_segment_done(const char *path, int ok) {
  char *copy = ok && cfg.report && prof__report_hook ? strdup(path) : NULL;
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&cap_mu);
  if (copy && pthread_create(&th, &at, segment_report, copy) == 0) {
    cap.reporting++;
    copy = NULL;
  } else {
    segment_finished_locked(path);
    if (!copy) fprintf(stderr, "mlprof: capture %s%s\n", path, ok ? "" : " (incomplete)");
  }
  pthread_mutex_unlock(&cap_mu);
  pthread_attr_destroy(&at);
  free(copy);
}

/* Shutdown: let the segment reports finish (at most ~60 s). */
static void capture_wait_reports(void) {
  for (int i = 0; i < 6000; i++) {
    pthread_mutex_lock(&cap_mu);
    int busy = cap.reporting;
    pthread_mutex_unlock(&cap_mu);
    if (!busy) return;
    usleep(10000);
  }
}

/* ---- prof_capture ------------------------------------------------------------ */

PROF_API int prof_capture(uint64_t steps) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != ST_RUNNING) return PROF_ESTATE;
  int rc = 0;
  pthread_mutex_lock(&cap_mu);
  if (steps == 0) { /* end this program's capture at the current boundary */
    cap.api_steps = 0;
    __atomic_store_n(&api_req, 0, __ATOMIC_RELAXED);
    if (cap.slot >= 0 && cap.api_open) {
      if (__atomic_load_n(&step_open, __ATOMIC_ACQUIRE)) {
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
  char mine[sizeof cfg.path];
  size_t len = strlen(cfg.path);
  if (len >= 5 && strcmp(cfg.path + len - 5, ".mlpt") == 0) len -= 5;
  if (snprintf(mine, sizeof mine, "%.*s.%d.mlpt", (int)len, cfg.path, (int)getpid()) >= (int)sizeof mine) return;
  if (getenv("MLPROF_VERBOSE"))
    fprintf(stderr, "mlprof: trace %s is being written by another process; this one writes %s\n", cfg.path, mine);
  memcpy(cfg.path, mine, sizeof mine);
}

static int init_locked(const prof_config *c) {
  if (state == ST_RUNNING) return 0;
  if (state == ST_DOWN) return PROF_ESHUTDOWN;
  if (state == ST_OFF) return off_error;
  int rc = prof__config_resolve(c, &cfg);
  if (rc) return rc; /* a bad config may be retried with a good one */
  if (cfg.disable) return go_off(PROF_EDISABLED);
  if (!builtin_added) {
    builtin_added = 1;
    modules_check();
    for (int i = 0; prof__producers[i]; i++)
      if (module_wanted(prof__producers[i]->name)) module_add_locked(prof__producers[i]);
  }
  prof__clock_init(cfg.force_monotonic);
  rc = prof__threads_setup(cfg.ring_kb * 1024u);
  if (rc) return go_off(rc);
  own_trace_path();
  char err[256];
  prof__tw *tw = open_trace(cfg.path, sizeof cfg.path, 1, err);
  if (!tw) {
    fprintf(stderr, "mlprof: %s; profiling is off, the program continues\n", err);
    return go_off(PROF_EIO);
  }
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
    pthread_atfork(fork_prepare, fork_parent, fork_child);
  }
  prof__crash_install();
  for (int i = 0; i < nmodules; i++) {
    if (modules[i].start) modules[i].start();
    __atomic_store_n(&started_modules, i + 1, __ATOMIC_RELEASE);
  }
  capture_init();
  return 0;
}

PROF_API int prof_init(const prof_config *c) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_RUNNING) return 0;
  prof__guard_begin();
  pthread_mutex_lock(&lock);
  int rc = init_locked(c);
  pthread_mutex_unlock(&lock);
  prof__guard_end();
  return rc;
}

static void print_summary(int rc, int reports, const char *err) {
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  if (reports)
    fprintf(stderr, "mlprof: trace %s (%llu events, %llu lost); report %s.report.{txt,json,html}\n",
            cfg.path, (unsigned long long)st.events_written, (unsigned long long)st.events_lost,
            cfg.path);
  else
    fprintf(stderr, "mlprof: trace %s (%llu events, %llu lost)%s%s\n", cfg.path,
            (unsigned long long)st.events_written, (unsigned long long)st.events_lost,
            err && *err ? "; no report: " : "", err && *err ? err : "");
  (void)rc;
}

/* Writer thread, after a crash closed the trace (crash.c): the reports the
 * session would have written at exit. The message goes out with write(2):
 * the crashing thread may hold the stdio lock. */
void prof__session_crashed(void) {
  const char *sig = prof__crash_name(prof__crash_signal());
  char err[256] = "", msg[PATH_MAX + 512];
  int reports = cfg.report && prof__report_hook && prof__report_hook(cfg.path, err) == 0;
  if (!cfg.report && !getenv("MLPROF_VERBOSE")) return;
  int n = snprintf(msg, sizeof msg, "mlprof: %s: trace %s (%llu steps started)%s%s%s\n", sig ? sig : "crash",
                   cfg.path, (unsigned long long)prof_step_count(), reports ? "; report " : "",
                   reports ? cfg.path : (err[0] ? "; no report: " : ""), reports ? ".report.{txt,json,html}" : err);
  if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

PROF_API int prof_shutdown(void) {
  pthread_mutex_lock(&lock);
  if (state != ST_RUNNING) {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  while (started_modules > 0) {
    int i = started_modules - 1;
    __atomic_store_n(&started_modules, i, __ATOMIC_RELEASE);
    if (modules[i].stop) modules[i].stop();
  }
  pthread_mutex_lock(&cap_mu);
  if (cap.paused) /* calls made while paused were not misuse */
    __atomic_store_n(&prof__misuse[PROF_MU_NOT_RUNNING], cap.saved_nr, __ATOMIC_RELAXED);
  cap.down = 1;
  pthread_mutex_unlock(&cap_mu);
  __atomic_store_n(&prof__enabled, 0, __ATOMIC_RELEASE);
  prof__xfsz_guard xg; /* a file size limit must not kill the host at exit */
  prof__xfsz_block(&xg);
  int rc = prof__writer_stop();
  __atomic_store_n(&state, ST_DOWN, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  capture_wait_reports();
  char err[256] = "";
  int reports = 0;
  if (rc == 0 && cfg.report && prof__report_hook) {
    reports = prof__report_hook(cfg.path, err) == 0;
  } else if (rc == 0 && cfg.report) {
    snprintf(err, sizeof err, "this build has no analyzer");
  }
  prof__xfsz_restore(&xg);
  if (rc == 0 && (cfg.report || prof__env_flag("VERBOSE", 0))) print_summary(rc, reports, err);
  return rc;
}

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
  uint64_t od = modules_step(1, n, ticks);
  if (PROF_UNLIKELY(cfg.sched.on || od || __atomic_load_n(&cap.od_left, __ATOMIC_RELAXED) ||
                    __atomic_load_n(&api_req, __ATOMIC_RELAXED)))
    capture_step_begin(n, od, ticks);
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
  prof__emit(PROF_EV_STEP_END, 0, 0, n, 0);
  modules_step(0, n, prof__ticks());
  if (PROF_UNLIKELY(cfg.sched.on || __atomic_load_n(&cap.slot, __ATOMIC_RELAXED) >= 0)) capture_step_end(n);
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
