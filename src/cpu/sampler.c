/* sampler.c — statistical CPU sampling with call stacks.
 *
 * Every thread of the process gets a clock that sends the sampling signal
 * to that thread alone. On CPU time (the default) that is the thread's
 * task-clock perf event, which fires at exact periods of the thread's CPU
 * time (perf_clock.c), where the kernel allows it; else, and in wall-clock
 * mode (MLPROF_SAMPLE_MODE=wall, which also samples threads that sleep or
 * wait), a POSIX timer (SIGEV_THREAD_ID) on the thread's CPU-time clock or
 * on CLOCK_MONOTONIC. MLPROF_SAMPLER=timer keeps the timers. The writer
 * thread arms clocks for new threads by scanning /proc/self/task every
 * cycle, so threads that never call mlprof are covered too, and retires
 * the clocks of threads that ended.
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
 * A perf event is stopped and closed only once no handler of its thread
 * uses its fd (a `busy` handshake), and a child of fork() closes its
 * copies of the fds at once, so no event outlives the sampler.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "mlprof.h"
#include "core/bgwriter.h"
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
#define FD_MAP 65536 /* perf event fds below this are found by the handler (fd_slot); a thread whose fd is higher gets a timer */
#define BUSY_WAIT 2000 /* yields waiting for a thread's handler to leave its perf fd before closing it */
#define PERF_FD_MAX 1024 /* perf clocks open at most; and at most an eighth of the fd limit (perf_fd_cap) */

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
  int fd;                /* the thread's perf clock (-1: a timer, or none) */
  int busy;              /* its handler is using fd (seq_cst handshake with disarm) */
  uint64_t last_ns;      /* perf clock: the count at the last sample (handler only) */
  int64_t carry_ns;      /* and the part of a period not yet weighed */
  uint32_t head, tail;   /* head: handler (producer), tail: writer */
  uint64_t dropped;
  uint64_t seen_gen;     /* scan generation that last saw the tid */
  sample buf[SAMPLE_BUF];
} cpu_thr;

static struct {
  int mode;              /* PROF_SAMPLE_CPU / PROF_SAMPLE_WALL */
  unsigned hz;
  int use_perf;          /* CPU mode on the threads' perf clocks (perf_clock.c) */
  char perf_why[160];    /* why not, when it was wanted */
  uint64_t perf_threads, timer_threads, weight;
  int perf_fds, perf_fd_cap; /* perf clocks open now, and how many may be */
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
  int slots; /* the slots in use lie below this (grows under thr_mu; atomic): a scan of
                all 4096 touched 8 pages and cost a first thread 8 page faults */
  char hz_text[16];
  int config_read; /* the settings were read (the first header): cpu_header */
  int atfork_added;
} S;
/* The slot + 1 of the thread whose perf clock has fd (a signal names its
 * fd, not the slot); 0: none. Written under thr_mu, read by the handler. */
static uint16_t fd_slot[FD_MAP];
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

/* The thread a timer's signal names (its slot in the signal's value). */
static cpu_thr *timer_thread(const siginfo_t *si) {
  unsigned v = (unsigned)si->si_value.sival_int;
  if ((v >> 16) != SAMPLE_MAGIC || (v & 0xffffu) >= MAX_THREADS) return NULL;
  return __atomic_load_n(&S.thr[v & 0xffffu], __ATOMIC_ACQUIRE);
}

/* The thread whose perf clock sent the signal (it names the event's fd). */
static cpu_thr *perf_thread(const siginfo_t *si) {
  if (si->si_fd < 0 || si->si_fd >= FD_MAP) return NULL;
  unsigned slot = __atomic_load_n(&fd_slot[si->si_fd], __ATOMIC_ACQUIRE);
  return slot && slot <= MAX_THREADS ? __atomic_load_n(&S.thr[slot - 1], __ATOMIC_ACQUIRE) : NULL;
}

/* Periods a perf clock sample stands for: the thread's CPU time since the
 * last one (kernel time included), whole periods, the rest carried. */
static uint32_t perf_weight(cpu_thr *t, int fd) {
  uint64_t now = prof__perf_clock_read(fd);
  if (!now) return 1;
  int64_t period = (int64_t)(1000000000u / S.hz);
  int64_t acc = (int64_t)(now - t->last_ns) + t->carry_ns;
  t->last_ns = now;
  int64_t w = acc > 0 ? (acc + period / 2) / period : 0;
  if (w < 1) w = 1;
  if (w > 1000000) w = 1000000;
  t->carry_ns = acc - w * period;
  if (t->carry_ns < -period) t->carry_ns = -period; /* a forced weight of 1 owes at most one period */
  return (uint32_t)w;
}

static void take_sample(cpu_thr *t, void *uc, uint32_t weight) {
  uint32_t h = t->head, tail = __atomic_load_n(&t->tail, __ATOMIC_ACQUIRE);
  if (h - tail >= SAMPLE_BUF) {
    t->dropped++;
    return;
  }
  uintptr_t pcs[PROF_STACK_MAX_DEPTH];
  int d = prof__stack_capture_uc(uc, pcs, PROF_STACK_MAX_DEPTH);
  d = prof__pyframes_merge(pcs, d, PROF_STACK_MAX_DEPTH); /* Python frames, when running Python */
  sample *s = &t->buf[h % SAMPLE_BUF];
  s->ticks = prof__ticks();
  s->stack = d > 0 ? prof__stack_intern(pcs, d) : 0;
  s->range = current_range();
  s->weight = weight;
  __atomic_store_n(&t->head, h + 1, __ATOMIC_RELEASE);
}

/* A perf clock fired on this thread: sample, then let it fire again. It
 * stays off when sampling stopped or the writer is closing it (t->fd no
 * longer fd: disarm waits for busy to drop before it closes the fd). */
static void on_perf(cpu_thr *t, int fd, void *uc) {
  __atomic_store_n(&t->busy, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&t->fd, __ATOMIC_SEQ_CST) == fd && __atomic_load_n(&S.on, __ATOMIC_ACQUIRE)) {
    take_sample(t, uc, perf_weight(t, fd));
    prof__perf_clock_rearm(fd);
  }
  __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

static void on_sample(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  if (!si) return;
  int saved = errno;
  if (si->si_code == SI_TIMER) {
    cpu_thr *t = timer_thread(si);
    if (t && __atomic_load_n(&S.on, __ATOMIC_ACQUIRE))
      take_sample(t, uc, 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0));
  } else if (si->si_code == POLL_IN || si->si_code == POLL_HUP) {
    cpu_thr *t = perf_thread(si);
    if (t) on_perf(t, si->si_fd, uc);
  }
  errno = saved;
}

/* ---- timers ------------------------------------------------------------------ */

/* The thread's perf clock, when CPU mode has them: 0 armed, -1 not. */
static int arm_perf(cpu_thr *t, int slot) {
  if (S.perf_fds >= S.perf_fd_cap) return -1; /* the program's descriptors come first */
  int fd = prof__perf_clock_open(t->tid, S.sig, 1000000000u / S.hz);
  if (fd < 0) return -1;
  if (fd >= FD_MAP) {
    prof__perf_clock_close(fd, S.sig);
    return -1;
  }
  t->last_ns = 0;
  t->carry_ns = 0;
  __atomic_store_n(&fd_slot[fd], (uint16_t)(slot + 1), __ATOMIC_RELEASE);
  __atomic_store_n(&t->fd, fd, __ATOMIC_SEQ_CST);
  prof__perf_clock_rearm(fd);
  t->armed = 1;
  S.perf_threads++;
  S.perf_fds++;
  return 0;
}

/* Close the thread's perf clock once no handler of it uses the fd. A
 * handler that does not leave (its thread stopped inside it) keeps the fd
 * and the thread's state: returns 0 then, and they are left alone. */
static int disarm_perf(cpu_thr *t) {
  int fd = t->fd;
  __atomic_store_n(&t->fd, -1, __ATOMIC_SEQ_CST);
  for (int i = 0; __atomic_load_n(&t->busy, __ATOMIC_SEQ_CST); i++) {
    if (i >= BUSY_WAIT) return 0;
    sched_yield();
  }
  __atomic_store_n(&fd_slot[fd], 0, __ATOMIC_RELEASE);
  prof__perf_clock_close(fd, S.sig);
  S.perf_fds--;
  return 1;
}

static int arm(cpu_thr *t, int slot) {
  if (S.use_perf && arm_perf(t, slot) == 0) return 0;
  if (S.use_perf) S.timer_threads++;
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

/* Returns 0 when the thread's state must be kept (disarm_perf). */
static int disarm(cpu_thr *t) {
  int freeable = 1;
  if (t->armed && t->fd >= 0) freeable = disarm_perf(t);
  else if (t->armed) timer_delete(t->timer);
  t->armed = 0;
  return freeable;
}

/* ---- writer side ------------------------------------------------------------- */

static int slots_used(void) { return __atomic_load_n(&S.slots, __ATOMIC_ACQUIRE); }

static int find_tid(int tid) {
  for (int i = 0, n = slots_used(); i < n; i++)
    if (S.thr[i] && S.thr[i]->tid == tid) return i;
  return -1;
}

static void add_thread(int tid) {
  int slot = -1, n = slots_used();
  for (int i = 0; i < n && slot < 0; i++)
    if (!S.thr[i]) slot = i;
  if (slot < 0 && n < MAX_THREADS) slot = n;
  if (slot < 0) return;
  /* The sample buffer (48 KiB) is written before it is read: zeroing it
   * would touch all its pages (a page fault each) for every thread. */
  cpu_thr *t = malloc(sizeof *t);
  if (!t) return;
  memset(t, 0, offsetof(cpu_thr, buf));
  t->tid = tid;
  t->fd = -1;
  t->seen_gen = S.gen;
  __atomic_store_n(&S.thr[slot], t, __ATOMIC_RELEASE);
  if (slot == n) __atomic_store_n(&S.slots, n + 1, __ATOMIC_RELEASE);
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
      S.weight += s->weight;
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
  for (int i = 0, n = slots_used(); i < n; i++) {
    cpu_thr *t = S.thr[i];
    if (!t) continue;
    drain(tw, t);
    if (!all && t->seen_gen == S.gen) continue;
    int freeable = disarm(t);
    if (all) continue; /* at stop: keep the state, a signal may still be pending */
    S.dropped += t->dropped;
    __atomic_store_n(&S.thr[i], NULL, __ATOMIC_RELEASE);
    if (freeable) free(t); /* else a handler still holds it: left to the process */
  }
}

static void final_meta(void) {
  uint64_t dropped = S.dropped;
  for (int i = 0, n = slots_used(); i < n; i++)
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
  if (S.use_perf) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)S.perf_threads);
    prof__meta_add("cpu.sampler_perf_threads", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)S.timer_threads);
    prof__meta_add("cpu.sampler_timer_threads", v); /* threads whose perf clock could not be opened */
  }
  if (S.weight && S.hz) { /* samples per second of the sampled threads' CPU (or wall) time */
    snprintf(v, sizeof v, "%.1f", (double)S.samples * S.hz / (double)S.weight);
    prof__meta_add("cpu.sample_rate_effective", v);
  }
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
  if (!S.writer_tid) S.writer_tid = (pid_t)prof__writer_tid(); /* hooks may run on the exiting thread */
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
  static const char *const samplers[] = {"auto", "timer"};
  int timer = prof__env_choice("SAMPLER", samplers, 2, 0) == 1;
  S.perf_why[0] = 0;
  /* the perf clocks count CPU time: wall mode keeps its timers */
  S.use_perf = S.hz && S.mode == PROF_SAMPLE_CPU && !timer && prof__perf_clock_probe(S.perf_why, sizeof S.perf_why);
  if (timer) snprintf(S.perf_why, sizeof S.perf_why, "MLPROF_SAMPLER=timer");
  return 0;
}

/* The settings are read once, for the session's first header (on the
 * thread that starts the session, before the writer exists); the headers
 * of capture segments, built later on the writer thread, reuse them rather
 * than write what the sampler reads meanwhile. */
static size_t cpu_header(prof__kv *kv, size_t max) {
  if (!S.config_read) {
    parse_config();
    snprintf(S.hz_text, sizeof S.hz_text, "%u", S.hz);
    S.config_read = 1;
  }
  if (max < 4) return 0;
  kv[0].key = "cpu.sample_hz";
  kv[0].value = S.hz_text;
  kv[1].key = "cpu.sample_mode";
  kv[1].value = S.mode == PROF_SAMPLE_WALL ? "wall" : "cpu";
  /* perf: per-thread task-clock events (exact periods); timer: POSIX timers (scheduler ticks) */
  kv[2].key = "cpu.sampler";
  kv[2].value = S.use_perf ? "perf" : "timer";
  if (S.use_perf || !S.perf_why[0] || S.mode == PROF_SAMPLE_WALL) return 3;
  kv[3].key = "cpu.sampler_why_timer";
  kv[3].value = S.perf_why;
  return 4;
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

/* A child of fork() holds copies of the perf clocks' fds, which would keep
 * the parent's events alive past the parent's own close: it closes them
 * (without stopping the events, which are the parent's). */
static void sampler_forked(void) {
  for (int i = 0, n = slots_used(); i < n; i++) {
    cpu_thr *t = S.thr[i];
    if (!t || t->fd < 0) continue;
    if (t->fd < FD_MAP) __atomic_store_n(&fd_slot[t->fd], 0, __ATOMIC_RELEASE);
    close(t->fd);
    t->fd = -1;
    t->armed = 0;
  }
  S.perf_fds = 0;
}

/* How many perf clocks may be open: an eighth of the descriptor limit, at
 * most PERF_FD_MAX; threads beyond get timers. */
static int perf_fd_cap(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return PERF_FD_MAX;
  return rl.rlim_cur / 8 < PERF_FD_MAX ? (int)(rl.rlim_cur / 8) : PERF_FD_MAX;
}

static int cpu_start(void) {
  if (!S.hook_added && prof__writer_hook_add(sampler_hook, NULL) == 0) S.hook_added = 1;
  if (!S.atfork_added && pthread_atfork(NULL, NULL, sampler_forked) == 0) S.atfork_added = 1;
  S.perf_fd_cap = perf_fd_cap();
  prof__counters_start();
  if (S.hz == 0) return 0;
  if (!prof__stack_capture_available()) {
    fprintf(stderr, "mlprof: this build has no stack unwinder; CPU sampling is off\n");
    return PROF_EUNSUPPORTED;
  }
  if (!__atomic_load_n(&S.installed, __ATOMIC_ACQUIRE) && install_handler() != 0) return PROF_EUNSUPPORTED;
  /* A thread's trace cache comes at its first step boundary or sampled
   * allocation after a sample (unwind.c), never here: making it is 64 page
   * faults and 50 signal-mask calls, most of a short program's start. A
   * preloaded program (`mlprof run`) may have no steps; its allocations
   * (512 KiB on average between two sampled ones) make the cache, and a
   * thread that neither steps nor allocates keeps the exact walk (47 us a
   * sample at depth 20 here: 0.5 % of a CPU at 99 Hz). */
  prof__stack_lib_init();
  prof__pyframes_init();
  if (prof__pyframes_active()) prof__stack_set_rewrite(prof__pyframes_merge); /* allocation stacks too */
  if (S.mode == PROF_SAMPLE_CPU) prof__workers_start(S.hz); /* forked Python workers, from outside */
  /* The starting thread is sampled from now on, not from the writer's
   * first scan: that comes after the clock calibration and a period, later
   * still on a loaded machine, and a short program would lose its start. */
  pthread_mutex_lock(&thr_mu);
  __atomic_store_n(&S.on, 1, __ATOMIC_RELEASE); /* first: a perf clock that fired while off would stay off */
  see_thread((int)syscall(SYS_gettid));
  pthread_mutex_unlock(&thr_mu);
  return 0;
}

static void cpu_stop(void) {
  /* Timers are deleted by the final writer cycle, which then gives the
   * signal back (release_signal). */
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
}

/* The process ends (libmlprof is never unloaded: -z nodelete): no timer
 * may outlive the code of its handler. The session's exit is idempotent;
 * once it returned, the writer thread touches nothing, so deleting what is
 * left here races with nothing. A forked child has the handler but none of the timers
 * (their ids may name the child's own timers): it only gives the handler
 * back. */
__attribute__((destructor)) static void sampler_unload(void) {
  (void)prof__session_exit();
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
  if (S.pid == getpid())
    for (int i = 0, n = slots_used(); i < n; i++)
      if (S.thr[i]) disarm(S.thr[i]);
  release_signal();
}

static uint64_t cpu_step(int begin, uint64_t step, uint64_t ticks) {
  (void)begin, (void)step, (void)ticks;
  prof__counters_step();
  prof__stack_thread_lazy(); /* the fast stack walk for a thread that is being sampled */
  return 0;
}

const prof__module prof__mod_cpu = {
    .name = "cpu", .header = cpu_header, .start = cpu_start, .stop = cpu_stop, .step = cpu_step};

unsigned prof__sampler_hz(void) { return S.hz; }
int prof__sampler_signal(void) { return __atomic_load_n(&S.installed, __ATOMIC_ACQUIRE) ? S.sig : 0; }
int prof__sampler_stepped_aside(void) { return __atomic_load_n(&S.aside, __ATOMIC_ACQUIRE); }
