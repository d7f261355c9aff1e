/* workers.c — forked Python workers (PyTorch DataLoader workers) sampled
 * from the parent. A child made by fork() that does not exec records
 * nothing itself (the session turns off there, src/core/session.c), yet a
 * DataLoader's workers are where an input-bound job spends its time. So
 * the parent samples them from outside, on a thread of its own
 * ("mlprof-workers", started with the CPU module in a Python process):
 *
 *  - every WORKER_SCAN_NS, and at once after this process forks (its
 *    pthread_atfork parent handler), it lists the children of every thread
 *    of the process (/proc/self/task/<tid>/children) and keeps those that
 *    run the same executable with the same command line (a fork, not an
 *    exec);
 *  - every sampling period it reads each worker's CPU time
 *    (/proc/<pid>/task/<pid>/schedstat, its main thread, kept open through
 *    core/procfile.h, which never reads or closes a descriptor the program
 *    reused). Once the worker ran for at least half a period since its
 *    last sample, if its main thread ran since the last reading and is
 *    running or runnable now (state R in .../stat), it reads the Python
 *    frames of that thread (cpu/pyframes.c: process_vm_readv on the child,
 *    whose interpreter lies at the same addresses) and queues a sample
 *    weighted by the CPU periods it ran, at most PERIODS_MAX (the rest
 *    goes with the next samples). A worker found asleep (waiting for its next index, or for
 *    the GIL its queue's feeder thread holds), or woken but not yet run,
 *    keeps its CPU for its next running sample: the stack where it sleeps
 *    is not where that CPU went, and on a busy machine such reads took a
 *    third of the samples;
 *  - a frame first seen is described (file, function, line) from the
 *    worker's memory at once: a short-lived worker (a Pool's) is gone when
 *    the writer comes;
 *  - the writer thread (its hook) writes those descriptions, interns the
 *    stack and writes a CPU-mode SAMPLE event with the worker's pid as its
 *    thread ("forked worker") and the innermost range "[forked worker]".
 *
 * The report then shows the workers' hot Python lines (their __getitem__)
 * and their CPU beside the step thread's wait for data
 * (docs/cpu-sampling.md). Stacks hold Python frames only (no native frames
 * of the child). A worker that runs no Python, or that this process may not
 * read (ptrace rules), gives no samples. MLPROF_WORKERS=0 turns it off. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/procfile.h"
#include "core/session.h"
#include "cpu/pyframes.h"
#include "cpu/workers.h"
#include "stack/stack.h"
#include "trace/ev_sample.h"

#define WORKERS_MAX 64
#define WORKER_SCAN_NS 250000000ull /* how often children are looked for */
#define CMDLINE_MAX 4096
#define QUEUE 512                   /* samples between two writer cycles (power of two) */
/* The most periods one sample carries. A worker the fork handler missed
 * (a child made without fork()) is found up to WORKER_SCAN_NS late, and a
 * sampling thread kept off the CPU falls behind: all that CPU given to one
 * stack was a fifth of a short run's samples on one line taken at random;
 * spread over the next samples, it follows where the worker runs. */
#define PERIODS_MAX 4

typedef struct worker {
  pid_t pid;
  prof__procfile cpu, stat;     /* its main thread's schedstat and stat, kept open */
  char cpu_path[64], stat_path[64];
  uint64_t cpu_ns;   /* CPU time at the last reading */
  double carry_ns;   /* CPU time not yet sampled; below 0 when a sample rounded up */
} worker;

typedef struct wsample {
  uint64_t ts, periods; /* periods 0: the worker ended */
  pid_t pid;
  int depth;
  int ndesc;
  prof__pyframe_desc *desc; /* frames first seen in this sample, described at once */
  uintptr_t tags[PROF_STACK_MAX_DEPTH];
} wsample;

static struct {
  int on;
  double period_ns;
  uint32_t range; /* name id of "[forked worker]" */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  int scan_now;     /* this process forked: look for the child at once */
  pid_t owner;      /* the process whose thread samples */
  int atfork_added;
  /* the sampling thread's */
  worker w[WORKERS_MAX];
  int n;
  uint64_t last_scan;
  char exe[PATH_MAX];
  char cmd[CMDLINE_MAX];
  size_t cmd_len;
  /* sampling thread -> writer */
  wsample *q;
  uint32_t head, tail;
  uint64_t seen, dropped, refused; /* refused: reads the kernel forbade */
  /* the writer's */
  pid_t announced[WORKERS_MAX];
  int nannounced;
  uint64_t samples;
} W = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static size_t read_file(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t k = read(fd, buf, n);
  close(fd);
  return k > 0 ? (size_t)k : 0;
}

/* ---- the sampling thread ------------------------------------------------------- */

static int same_program(pid_t pid) {
  char path[64], exe[PATH_MAX], cmd[CMDLINE_MAX];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  ssize_t k = readlink(path, exe, sizeof exe - 1);
  if (k <= 0) return 0;
  exe[k] = 0;
  if (strcmp(exe, W.exe) != 0) return 0;
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
  size_t n = read_file(path, cmd, sizeof cmd);
  return n == W.cmd_len && memcmp(cmd, W.cmd, n) == 0;
}

static void add_child(pid_t pid) {
  for (int i = 0; i < W.n; i++)
    if (W.w[i].pid == pid) return;
  if (W.n >= WORKERS_MAX || !same_program(pid)) return;
  worker *w = &W.w[W.n];
  *w = (worker){.pid = pid};
  snprintf(w->cpu_path, sizeof w->cpu_path, "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
  snprintf(w->stat_path, sizeof w->stat_path, "/proc/%d/task/%d/stat", (int)pid, (int)pid);
  char buf[16];
  if (prof__procfile_read(&w->cpu, w->cpu_path, buf, sizeof buf) < 0 ||
      prof__procfile_read(&w->stat, w->stat_path, buf, sizeof buf) < 0) { /* gone already */
    prof__procfile_close(&w->cpu);
    prof__procfile_close(&w->stat);
    return;
  }
  W.n++;
  __atomic_add_fetch(&W.seen, 1, __ATOMIC_RELAXED);
}

static void drop_worker(int i) {
  prof__procfile_close(&W.w[i].cpu);
  prof__procfile_close(&W.w[i].stat);
  W.w[i] = W.w[--W.n];
}

static void scan_children(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent *e;
  char path[300], buf[4096];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
    size_t n = read_file(path, buf, sizeof buf - 1);
    buf[n] = 0;
    for (char *p = buf, *end; *p; p = end) {
      long pid = strtol(p, &end, 10);
      if (end == p) break;
      if (pid > 0) add_child((pid_t)pid);
    }
  }
  closedir(d);
}

/* CPU ns the worker's main thread ran so far, or -1 when it is gone. */
static int64_t cpu_of(worker *w) {
  char buf[128];
  if (prof__procfile_read(&w->cpu, w->cpu_path, buf, sizeof buf) <= 0) return -1;
  return (int64_t)strtoull(buf, NULL, 10);
}

/* Whether the worker's main thread is running or runnable now: the state
 * field of its stat, after the command name's closing parenthesis. */
static int running(worker *w) {
  char buf[512];
  if (prof__procfile_read(&w->stat, w->stat_path, buf, sizeof buf) <= 0) return 0;
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' && p[2] == 'R';
}

/* A slot of the queue to fill, or NULL (full: the sample is dropped). */
static wsample *slot(void) {
  uint32_t h = W.head, t = __atomic_load_n(&W.tail, __ATOMIC_ACQUIRE);
  if (h - t >= QUEUE) {
    __atomic_add_fetch(&W.dropped, 1, __ATOMIC_RELAXED);
    return NULL;
  }
  return &W.q[h % QUEUE];
}

static void publish(void) { __atomic_store_n(&W.head, W.head + 1, __ATOMIC_RELEASE); }

static void sample(worker *w, uint64_t now) {
  uint64_t periods = (uint64_t)(w->carry_ns / W.period_ns + 0.5);
  if (!periods) return;
  if (periods > PERIODS_MAX) periods = PERIODS_MAX; /* the rest goes with the next samples */
  w->carry_ns -= (double)periods * W.period_ns; /* a round-up is paid back: the sum stays the CPU time */
  wsample *s = slot();
  if (!s) return;
  s->depth = prof__pyframes_remote(w->pid, s->tags, PROF_STACK_MAX_DEPTH);
  if (s->depth <= 0) { /* counted only when refused: the report blames the ptrace rules */
    if (s->depth < 0) __atomic_add_fetch(&W.refused, 1, __ATOMIC_RELAXED);
    return;
  }
  s->ndesc = prof__pyframes_remote_describe(w->pid, s->tags, s->depth, &s->desc);
  s->ts = now;
  s->pid = w->pid;
  s->periods = periods;
  publish();
}

static void visit(uint64_t now) {
  if (now - W.last_scan >= WORKER_SCAN_NS || __atomic_exchange_n(&W.scan_now, 0, __ATOMIC_ACQ_REL)) {
    W.last_scan = now;
    scan_children();
  }
  for (int i = 0; i < W.n;) {
    worker *w = &W.w[i];
    int64_t cpu = cpu_of(w);
    if (cpu < 0) { /* gone: the writer closes its thread */
      wsample *s = slot();
      if (s) {
        s->ts = now, s->pid = w->pid, s->periods = 0, s->depth = 0, s->ndesc = 0, s->desc = NULL;
        publish();
      }
      drop_worker(i);
      continue;
    }
    int ran = (uint64_t)cpu > w->cpu_ns;
    if (ran) w->carry_ns += (double)((uint64_t)cpu - w->cpu_ns); /* the first reading: since the fork */
    w->cpu_ns = (uint64_t)cpu;
    if (ran && w->carry_ns * 2 >= W.period_ns && running(w)) sample(w, now);
    i++;
  }
}

static void *sampler_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "mlprof-workers");
  pthread_mutex_lock(&W.mu);
  while (!W.stop) {
    /* a period while there are workers, else the scan's pace */
    uint64_t wait = W.n ? (uint64_t)W.period_ns : WORKER_SCAN_NS;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_nsec + wait;
    ts.tv_sec += (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    if (!__atomic_load_n(&W.scan_now, __ATOMIC_ACQUIRE)) pthread_cond_timedwait(&W.cv, &W.mu, &ts);
    if (W.stop) break;
    pthread_mutex_unlock(&W.mu);
    visit(prof__ticks_to_ns(prof__ticks()));
    pthread_mutex_lock(&W.mu);
  }
  pthread_mutex_unlock(&W.mu);
  while (W.n) drop_worker(W.n - 1);
  prof__pyframes_remote_describe_end();
  return NULL;
}

/* In the parent after any fork(): a DataLoader worker is found now, not up
 * to WORKER_SCAN_NS later with all its start-up CPU on one stack. */
static void forked_parent(void) {
  /* a worker that forks in turn has W.on set (copied), no sampling thread,
   * and perhaps W.mu copied locked */
  if (!__atomic_load_n(&W.on, __ATOMIC_ACQUIRE) || getpid() != W.owner) return;
  pthread_mutex_lock(&W.mu);
  W.scan_now = 1;
  pthread_cond_signal(&W.cv);
  pthread_mutex_unlock(&W.mu);
}

void prof__workers_start(unsigned hz) {
  const char *env = prof__env("WORKERS");
  if (W.on || (env && strcmp(env, "0") == 0) || !hz || !prof__pyframes_active()) return;
  ssize_t k = readlink("/proc/self/exe", W.exe, sizeof W.exe - 1);
  if (k <= 0) return;
  W.exe[k] = 0;
  W.cmd_len = read_file("/proc/self/cmdline", W.cmd, sizeof W.cmd);
  if (!W.cmd_len || W.cmd_len == sizeof W.cmd) return; /* a command line too long to compare */
  W.period_ns = 1e9 / hz;
  W.range = prof__intern(PROF_WORKER_RANGE);
  W.q = malloc(QUEUE * sizeof *W.q);
  if (!W.range || !W.q) {
    free(W.q);
    W.q = NULL;
    return;
  }
  W.stop = 0;
  W.owner = getpid();
  if (!W.atfork_added && pthread_atfork(NULL, forked_parent, NULL) == 0) W.atfork_added = 1;
  if (pthread_create(&W.th, NULL, sampler_main, NULL) != 0) {
    free(W.q);
    W.q = NULL;
    return;
  }
  __atomic_store_n(&W.on, 1, __ATOMIC_RELEASE);
}

/* ---- the writer's side ---------------------------------------------------------- */

static int announced(pid_t pid, int add) {
  for (int i = 0; i < W.nannounced; i++)
    if (W.announced[i] == pid) {
      if (add < 0) W.announced[i] = W.announced[--W.nannounced];
      return 1;
    }
  if (add > 0 && W.nannounced < WORKERS_MAX) W.announced[W.nannounced++] = pid;
  return 0;
}

static void emit(prof__tw *tw, const wsample *s) {
  if (!s->periods) { /* the worker ended */
    if (announced(s->pid, -1)) prof__tw_thread(tw, (uint32_t)s->pid, PROF_WORKER_THREAD, 0, 1);
    return;
  }
  /* before the stack table's scan sees them */
  prof__pyframes_remote_resolve(s->pid, s->tags, s->depth, s->desc, s->ndesc, tw);
  if (!announced(s->pid, 0) && prof__tw_thread(tw, (uint32_t)s->pid, PROF_WORKER_THREAD, 0, 0) == 0)
    announced(s->pid, 1);
  prof__event ev;
  memset(&ev, 0, sizeof ev);
  ev.ts = s->ts;
  ev.type = PROF_EV_SAMPLE;
  ev.aux = PROF_SAMPLE_CPU;
  ev.name = prof__stack_intern(s->tags, s->depth);
  ev.a = W.range;
  ev.b = s->periods;
  prof__tw_events(tw, (uint32_t)s->pid, &ev, 1);
  W.samples++;
}

static void stop_thread(void) {
  pthread_mutex_lock(&W.mu);
  W.stop = 1;
  pthread_cond_signal(&W.cv);
  pthread_mutex_unlock(&W.mu);
  pthread_join(W.th, NULL);
}

void prof__workers_cycle(prof__tw *tw, int final) {
  if (!__atomic_load_n(&W.on, __ATOMIC_ACQUIRE)) return;
  if (final) stop_thread(); /* then the queue holds all there is */
  uint32_t t = W.tail, h = __atomic_load_n(&W.head, __ATOMIC_ACQUIRE);
  for (; t != h; t++) {
    wsample *s = &W.q[t % QUEUE];
    if (tw) emit(tw, s);
    else prof__pyframes_desc_free(s->desc, s->ndesc);
    s->desc = NULL, s->ndesc = 0;
  }
  __atomic_store_n(&W.tail, t, __ATOMIC_RELEASE);
  if (!final) return;
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.seen, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKERS, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)W.samples);
  prof__meta_add(PROF_META_WORKER_SAMPLES, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.dropped, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKER_DROPPED, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.refused, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKER_REFUSED, v);
  W.on = 0;
  free(W.q);
  W.q = NULL;
}
