/* sampler.c — statistical CPU sampling with call stacks.
 *
 * Every thread of the process gets a POSIX timer that sends SIGPROF to that
 * thread alone (SIGEV_THREAD_ID): on its own CPU-time clock by default, or on
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
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/session.h"
#include "cpu.h"
#include "stack/stack.h"

#define SAMPLE_BUF 2048 /* samples per thread between two writer cycles */
#define MAX_THREADS 4096
#define SAMPLE_MAGIC 0x5350u

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
  int installed;
  int hook_added;
  pid_t writer_tid;
  uint64_t gen;
  uint64_t samples, dropped, no_stack, timer_fail;
  cpu_thr *thr[MAX_THREADS]; /* slot index travels in the signal's value */
  char hz_text[16];
} S;

/* ---- signal side ----------------------------------------------------------- */

static uint32_t current_range(void) {
  prof__thread *t = prof__self;
  if (!t) return 0;
  uint32_t d = t->depth;
  if (d == 0) return 0;
  if (d > PROF_MAX_DEPTH) d = PROF_MAX_DEPTH;
  return t->stack[d - 1] & ~PROF_DROPPED_BIT;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc) {
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
  sev.sigev_signo = SIGPROF;
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

/* Look at /proc/self/task: arm new threads, mark the ones still there. */
static void scan_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  S.gen++;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int tid = atoi(e->d_name);
    if (tid <= 0 || tid == S.writer_tid) continue;
    int i = find_tid(tid);
    if (i >= 0) S.thr[i]->seen_gen = S.gen;
    else add_thread(tid);
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
}

static void sampler_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  if (!S.writer_tid) S.writer_tid = (pid_t)syscall(SYS_gettid);
  if (__atomic_load_n(&S.on, __ATOMIC_ACQUIRE) && !final) {
    scan_threads();
    retire(tw, 0);
  } else {
    retire(tw, 1);
  }
  if (tw) prof__stack_emit(tw); /* stacks of the samples just queued */
  prof__counters_cycle(tw, final);
  if (final) final_meta();
}

/* ---- module -------------------------------------------------------------------- */

static int parse_config(void) {
  const char *hz = prof__env("SAMPLE_HZ");
  long v = PROF_SAMPLE_HZ_DEFAULT;
  if (hz && *hz) {
    char *end;
    v = strtol(hz, &end, 10);
    if (*end || v < 0) {
      fprintf(stderr, "mlprof: MLPROF_SAMPLE_HZ='%s' is not a number; using %d\n", hz,
              PROF_SAMPLE_HZ_DEFAULT);
      v = PROF_SAMPLE_HZ_DEFAULT;
    }
  }
  if (v > 100000) v = 100000;
  S.hz = (unsigned)v;
  const char *mode = prof__env("SAMPLE_MODE");
  S.mode = mode && strcmp(mode, "wall") == 0 ? PROF_SAMPLE_WALL : PROF_SAMPLE_CPU;
  if (mode && *mode && strcmp(mode, "wall") != 0 && strcmp(mode, "cpu") != 0)
    fprintf(stderr, "mlprof: MLPROF_SAMPLE_MODE='%s' unknown (cpu or wall); using cpu\n", mode);
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

static int install_handler(void) {
  struct sigaction old, sa;
  if (sigaction(SIGPROF, NULL, &old) != 0) return -1;
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN &&
      !((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sigprof)) {
    fprintf(stderr, "mlprof: SIGPROF already has a handler (another profiler?); CPU sampling is off\n");
    return -1;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, NULL) != 0) return -1;
  S.installed = 1;
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
  if (!S.installed && install_handler() != 0) return PROF_EUNSUPPORTED;
  prof__stack_thread_init();
  __atomic_store_n(&S.on, 1, __ATOMIC_RELEASE);
  return 0;
}

static void cpu_stop(void) {
  /* Timers are deleted by the final writer cycle; the handler stays
   * installed (a pending SIGPROF with the default action would kill us). */
  __atomic_store_n(&S.on, 0, __ATOMIC_RELEASE);
}

const prof__module prof__mod_cpu = {"cpu", cpu_header, cpu_start, cpu_stop};

unsigned prof__sampler_hz(void) { return S.hz; }
