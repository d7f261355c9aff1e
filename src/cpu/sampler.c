/* sampler.c — statistical CPU sampling with call stacks.
 *
 * Every thread of the process gets a POSIX timer that sends the sampling
 * signal to that thread alone (SIGEV_THREAD_ID): on its own CPU-time clock by default, or on
 * CLOCK_MONOTONIC in wall-clock mode (MLPROF_SAMPLE_MODE=wall), which also
 * samples threads that sleep or wait. The writer thread arms timers for new
 * threads by scanning /proc/self/task every cycle, so threads that never call
 * mlprof are covered too, and retires the timers of threads that ended.
 *
 * The handler only does async-signal-safe work: it unwinds the interrupted
 * stack, interns it in the lock-free stack table, reads the thread's
 * innermost open range, and appends {ticks, stack id, range id} to the
 * thread's own preallocated single-producer buffer (never the core ring,
 * which is not reentrant). The writer hook drains those buffers into SAMPLE
 * events. docs/cpu-sampling.md has the details.
 *
 * The sampling signal is never one the program may use: at start the
 * sampler takes the first realtime signal from SIGRTMIN+SIG_FIRST up that
 * has the default disposition and is neither blocked nor pending (SIGPROF
 * and ITIMER_PROF stay the program's). Its handler is installed before any
 * timer exists. Every writer cycle checks that the handler is still ours;
 * when the program has taken the signal over, the sampler deletes all its
 * timers and steps aside with one message. Timers are always deleted
 * before the handler is given back (SIG_IGN first, which discards any
 * signal still pending, then the old action): a realtime signal's default
 * action ends the process. A library destructor does the same when
 * libmlprof is unloaded (dlclose), so no handler points into unmapped code.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mlprof.h"
#include "core/config.h"
#include "core/producer.h"
#include "cpu.h"
#include "cpu/pyframes.h"
#include "cpu/workers.h"
#include "stack/stack.h"

#define SAMPLE_BUF 2048 /* samples per thread between two writer cycles */
#define MAX_THREADS 4096
#define SAMPLE_MAGIC 0x5350u
#define SIG_FIRST 4 /* SIGRTMIN..+3 are the ones programs pick first */

typedef struct sample {
  uint64_t ticks;
  uint32_t stack;
  uint32_t range;
  uint32_t weight; /* periods this sample stands for: 1 + timer overruns */
} sample;

typedef struct cpu_thr {
  int tid;
  int in_use;
  int armed;
  timer_t timer;
  uint32_t head, tail;   /* head: handler (producer), tail: writer */
  uint64_t dropped;
  uint64_t seen_gen;     /* scan generation that last saw the tid */
  sample buf[SAMPLE_BUF];
} cpu_thr;

static struct {
  int mode;              /* PROF_SAMPLE_CPU / PROF_SAMPLE_WALL */
  unsigned hz;
  int on;                /* handler records */
  int installed;         /* our handler is on `sig` (atomic: read by any thread) */
  int aside;             /* the program took `sig`: sampling stopped */
  int sig;               /* the sampling signal (0: none yet) */
  pid_t pid;             /* process that owns the timers */
  struct sigaction old;  /* disposition of `sig` before us */
  int hook_added;
  pid_t writer_tid;
  uint64_t gen;
  prof__procfile task_dir; /* /proc/self/task, kept open */
  unsigned long task_nlink; /* its link count at the last scan: 2 + threads */
  uint64_t last_scan_ns;
  uint64_t samples, dropped, no_stack, timer_fail;
  cpu_thr *thr[MAX_THREADS]; /* slot index travels in the signal's value */
  char hz_text[16];
} S;
/* Orders changes of S.thr: the writer's scans and retirements, and the
 * arming of the starting thread by cpu_start (once, at prof_init). The
 * signal handler only loads slots and takes no lock. */
static pthread_mutex_t thr_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- signal side ----------------------------------------------------------- */

static uint32_t current_range(void) {
  prof__thread *t = prof__self;
  if (!t) return 0;
  uint32_t d = t->depth;
  if (d == 0) return 0;
  if (d > PROF_MAX_DEPTH) d = PROF_MAX_DEPTH;
  return t->stack[d - 1] & ~PROF_DROPPED_BIT;
}

static void on_sample(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  if (!si || si->si_code != SI_TIMER || !__atomic_load_n(&S.on, __ATOMIC_ACQUIRE)) return;
  unsigned v = (unsigned)si->si_value.sival_int;
  if ((v >> 16) != SAMPLE_MAGIC || (v & 0xffffu) >= MAX_THREADS) return;
  cpu_thr *t = __atomic_load_n(&S.thr[v & 0xffffu], __ATOMIC_ACQUIRE);
  if (!t) return;
  int saved = errno;
  uint32_t h = t->head, tail = __atomic_load_n(&t->tail, __ATOMIC_ACQUIRE);
  if (h - tail >= SAMPLE_BUF) {
    t->dropped++;
  } else {
    uintptr_t pcs[PROF_STACK_MAX_DEPTH];
    int d = prof__stack_capture_uc(uc, pcs, PROF_STACK_MAX_DEPTH);
    d = prof__pyframes_merge(pcs, d, PROF_STACK_MAX_DEPTH); /* Python frames, when running Python */
    sample *s = &t->buf[h % SAMPLE_BUF];
    s->ticks = prof__ticks();
    s->stack = d > 0 ? prof__stack_intern(pcs, d) : 0;
    s->range = current_range();
    s->weight = 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    __atomic_store_n(&t->head, h + 1, __ATOMIC_RELEASE);
  }
  errno = saved;
}

/* ---- timers ------------------------------------------------------------------ */

static int arm(cpu_thr *t, int slot) {
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = S.sig;
  sev.sigev_value.sival_int = (int)((SAMPLE_MAGIC << 16) | (unsigned)slot);
  sev._sigev_un._tid = t->tid;
  clockid_t clk = S.mode == PROF_SAMPLE_WALL ? CLOCK_MONOTONIC : (clockid_t)prof__thread_cpu_clock(t->tid);
  if (timer_create(clk, &sev, &t->timer) != 0) return -1;
  long period = 1000000000L / (long)S.hz;
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  its.it_interval.tv_nsec = period % 1000000000L;
  its.it_interval.tv_sec = period / 1000000000L;
  /* a spread first expiry keeps threads from ticking in lockstep */
  long first = 1 + (long)(((unsigned)t->tid * 2654435761u) % (unsigned long)period);
  its.it_value.tv_nsec = first;
  if (timer_settime(t->timer, 0, &its, NULL) != 0) {
    timer_delete(t->timer);
    return -1;
  }
  t->armed = 1;
  return 0;
}

static void disarm(cpu_thr *t) {
  if (t->armed) timer_delete(t->timer);
  t->armed = 0;
}

/* ---- writer side ------------------------------------------------------------- */

static int find_tid(int tid) {
  for (int i = 0; i < MAX_THREADS; i++)
    if (S.thr[i] && S.thr[i]->tid == tid) return i;
  return -1;
}

static void add_thread(int tid) {
  int slot = -1;
  for (int i = 0; i < MAX_THREADS && slot < 0; i++)
    if (!S.thr[i]) slot = i;
  if (slot < 0) return;
  cpu_thr *t = calloc(1, sizeof *t);
  if (!t) return;
  t->tid = tid;
  t->seen_gen = S.gen;
  __atomic_store_n(&S.thr[slot], t, __ATOMIC_RELEASE);
  if (arm(t, slot) != 0) S.timer_fail++; /* e.g. the thread ended meanwhile */
}

/* Whether a scan is due: the thread count changed (the link count of
 * /proc/self/task is 2 + threads: one fstat on a kept descriptor) or a
 * second passed (a thread that ended while another started). */
#define FULL_SCAN_NS 1000000000ull

static int scan_due(void) {
  uint64_t now = prof__mono_ns();
  int due = now - S.last_scan_ns >= FULL_SCAN_NS;
  struct stat st;
  unsigned long links = prof__procfile_stat(&S.task_dir, "/proc/self/task", &st) == 0 ? (unsigned long)st.st_nlink : 0;
  if (!links || links != S.task_nlink) due = 1;
  if (due) {
    S.last_scan_ns = now;
    S.task_nlink = links;
  }
  return due;
}

static void close_task_dir(void) {
  prof__procfile_close(&S.task_dir);
  S.task_nlink = 0;
  S.last_scan_ns = 0;
}

/* Thread tid is alive: mark it seen in this generation; a new one gets a
 * slot and a timer, a known one that a stop left disarmed is armed again. */
static void see_thread(int tid) {
  int i = find_tid(tid);
  if (i < 0) {
    add_thread(tid);
    return;
  }
  S.thr[i]->seen_gen = S.gen;
  if (!S.thr[i]->armed && arm(S.thr[i], i) != 0) S.timer_fail++;
}

/* Look at /proc/self/task: arm new threads, mark the ones still there. */
static void scan_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  S.gen++;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int tid = atoi(e->d_name);
    if (tid <= 0 || tid == S.writer_tid) continue;
    see_thread(tid);
  }
  closedir(d);
}

static void drain(prof__tw *tw, cpu_thr *t) {
  prof__event ev[256];
  for (;;) {
    uint32_t tail = t->tail, head = __atomic_load_n(&t->head, __ATOMIC_ACQUIRE);
    size_t n = 0;
    while (tail != head && n < 256) {
      const sample *s = &t->buf[tail % SAMPLE_BUF];
      memset(&ev[n], 0, sizeof ev[n]);
      ev[n].ts = prof__ticks_to_ns(s->ticks);
      ev[n].type = PROF_EV_SAMPLE;
      ev[n].aux = (uint16_t)S.mode;
      ev[n].name = s->stack;
      ev[n].a = s->range;
      ev[n].b = s->weight;
      if (!s->stack) S.no_stack++;
      n++;
      tail++;
    }
    __atomic_store_n(&t->tail, tail, __ATOMIC_RELEASE);
    if (!n) break;
    S.samples += n;
    if (tw) prof__tw_events(tw, (uint32_t)t->tid, ev, n);
  }
}

/* Retire threads the last scan did not see (their pending signals died with them). */
static void retire(prof__tw *tw, int all) {
  for (int i = 0; i < MAX_THREADS; i++) {
    cpu_thr *t = S.thr[i];
    if (!t) continue;
    drain(tw, t);
    if (!all && t->seen_gen == S.gen) continue;
    disarm(t);
    if (all) continue; /* at stop: keep the state, a signal may still be pending */
    S.dropped += t->dropped;
    __atomic_store_n(&S.thr[i], NULL, __ATOMIC_RELEASE);
    free(t);
  }
}

static void final_meta(void) {
  uint64_t dropped = S.dropped;
  for (int i = 0; i < MAX_THREADS; i++)
    if (S.thr[i]) dropped += S.thr[i]->dropped;
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)S.samples);
  prof__meta_add("cpu.samples", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)dropped);
  prof__meta_add("cpu.samples_dropped", v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)S.no_stack);
  prof__meta_add("cpu.samples_without_stack", v);
  if (S.sig) {
    snprintf(v, sizeof v, "%d", S.sig);
    prof__meta_add("cpu.signal", v);
  }
  if (S.aside) prof__meta_add("cpu.stopped", "the program took over the sampling signal");
}

/* 1 while our handler is the one installed on the sampling signal. */
static int handler_is_ours(void) {
  struct sigaction cur;
  if (!S.sig || sigaction(S.sig, NULL, &cur) != 0) return 0;
  return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sample;
}

static void signal_name(int sig, char *out, size_t n) {
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) snprintf(out, n, "SIGRTMIN+%d (%d)", sig - SIGRTMIN, sig);
  else snprintf(out, n, "%d", sig);
}

/* Give the signal back. Only once no timer of ours exists: SIG_IGN
 * discards a signal still pending in any thread, then the old action
 * returns. A handler the program installed since is left alone. */
static void release_signal(void) {
  if (!__atomic_exchange_n(&S.installed, 0, __ATOMIC_ACQ_REL)) return;
  if (!handler_is_ours()) return;
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(S.sig, &ign, NULL);
  sigaction(S.sig, &S.old, NULL);
}

/* The program installed its own handler on our signal: delete every timer
 * (nothing more is sent to it) and stop sampling. */
static void step_aside(prof__tw *tw) {
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&S.aside, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&S.installed, 0, __ATOMIC_RELEASE); /* the handler is the program's now */
  retire(tw, 1);
  char name[32];
  signal_name(S.sig, name, sizeof name);
  fprintf(stderr, "mlprof: the program installed its own handler for signal %s, which CPU sampling used; "
          "CPU sampling stops\n", name);
}

static void sampler_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  if (!S.writer_tid) S.writer_tid = (pid_t)syscall(SYS_gettid);
  pthread_mutex_lock(&thr_mu);
  if (__atomic_load_n(&S.on, __ATOMIC_ACQUIRE) && !final) {
    if (!handler_is_ours()) {
      step_aside(tw);
    } else {
      if (scan_due()) scan_threads(); /* no scan: every thread keeps its generation */
      retire(tw, 0);
    }
  } else {
    retire(tw, 1);
  }
  pthread_mutex_unlock(&thr_mu);
  if (final) {
    release_signal(); /* every timer is gone now */
    close_task_dir();
  }
  prof__workers_cycle(tw, final);
  if (tw) prof__stack_emit(tw); /* stacks of the samples just queued */
  prof__pyframes_cycle(tw, final); /* and the Python code they name */
  prof__counters_cycle(tw, final);
  if (final) final_meta();
}

/* ---- module -------------------------------------------------------------------- */

static int parse_config(void) {
  S.hz = (unsigned)prof__env_long_capped("SAMPLE_HZ", PROF_SAMPLE_HZ_DEFAULT, 0, PROF_SAMPLE_HZ_MAX,
                                         "a faster timer on every thread slows the program");
  static const char *const modes[] = {"cpu", "wall"};
  S.mode = prof__env_choice("SAMPLE_MODE", modes, 2, 0) == 1 ? PROF_SAMPLE_WALL : PROF_SAMPLE_CPU;
  return 0;
}

static size_t cpu_header(prof__kv *kv, size_t max) {
  parse_config();
  if (max < 2) return 0;
  snprintf(S.hz_text, sizeof S.hz_text, "%u", S.hz);
  kv[0].key = "cpu.sample_hz";
  kv[0].value = S.hz_text;
  kv[1].key = "cpu.sample_mode";
  kv[1].value = S.mode == PROF_SAMPLE_WALL ? "wall" : "cpu";
  return 2;
}

/* The first realtime signal from SIGRTMIN+SIG_FIRST up that the program
 * does not use: default disposition, not blocked on this thread (a hint
 * of sigwait or signalfd use), not pending. 0 when none is free. */
static int free_signal(void) {
  sigset_t blocked, pending;
  if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0 || sigpending(&pending) != 0) return 0;
  for (int sig = SIGRTMIN + SIG_FIRST; sig <= SIGRTMAX; sig++) {
    struct sigaction cur;
    if (sigaction(sig, NULL, &cur) != 0) continue;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL && !sigismember(&blocked, sig) &&
        !sigismember(&pending, sig))
      return sig;
  }
  return 0;
}

static int install_handler(void) {
  int sig = free_signal();
  if (!sig) {
    fprintf(stderr, "mlprof: no free realtime signal for CPU sampling; CPU sampling is off\n");
    return -1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, &S.old) != 0) return -1;
  S.sig = sig;
  S.pid = getpid();
  __atomic_store_n(&S.installed, 1, __ATOMIC_RELEASE);
  return 0;
}

static int cpu_start(void) {
  if (!S.hook_added && prof__writer_hook_add(sampler_hook, NULL) == 0) S.hook_added = 1;
  prof__counters_start();
  if (S.hz == 0) return 0;
  if (!prof__stack_capture_available()) {
    fprintf(stderr, "mlprof: this build has no stack unwinder; CPU sampling is off\n");
    return PROF_EUNSUPPORTED;
  }
  if (!__atomic_load_n(&S.installed, __ATOMIC_ACQUIRE) && install_handler() != 0) return PROF_EUNSUPPORTED;
  prof__stack_thread_init();
  prof__pyframes_init();
  if (prof__pyframes_active()) prof__stack_set_rewrite(prof__pyframes_merge); /* allocation stacks too */
  if (S.mode == PROF_SAMPLE_CPU) prof__workers_start(S.hz); /* forked Python workers, from outside */
  /* The starting thread is sampled from now on, not from the writer's
   * first scan: that comes after the clock calibration and a period, later
   * still on a loaded machine, and a short program would lose its start. */
  pthread_mutex_lock(&thr_mu);
  see_thread((int)syscall(SYS_gettid));
  __atomic_store_n(&S.on, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&thr_mu);
  return 0;
}

static void cpu_stop(void) {
  /* Timers are deleted by the final writer cycle, which then gives the
   * signal back (release_signal). */
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
}

/* libmlprof is being unloaded (dlclose) or the process ends: no timer may
 * outlive the code of its handler. prof_shutdown() is idempotent; once it
 * returned, the writer thread is gone, so deleting what is left here races
 * with nothing. A forked child has the handler but none of the timers
 * (their ids may name the child's own timers): it only gives the handler
 * back. */
__attribute__((destructor)) static void sampler_unload(void) {
  prof_shutdown();
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
  if (S.pid == getpid())
    for (int i = 0; i < MAX_THREADS; i++)
      if (S.thr[i]) disarm(S.thr[i]);
  release_signal();
}

static uint64_t cpu_step(int begin, uint64_t step, uint64_t ticks) {
  (void)begin, (void)step, (void)ticks;
  prof__counters_step();
  return 0;
}

const prof__module prof__mod_cpu = {
    .name = "cpu", .header = cpu_header, .start = cpu_start, .stop = cpu_stop, .step = cpu_step};

unsigned prof__sampler_hz(void) { return S.hz; }
int prof__sampler_signal(void) { return __atomic_load_n(&S.installed, __ATOMIC_ACQUIRE) ? S.sig : 0; }
int prof__sampler_stepped_aside(void) { return __atomic_load_n(&S.aside, __ATOMIC_ACQUIRE); }
