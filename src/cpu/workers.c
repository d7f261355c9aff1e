/* workers.c — forked Python workers (PyTorch DataLoader workers) sampled
 * from the parent. A child made by fork() that does not exec records
 * nothing itself (the session turns off there, src/core/session.c), yet a
 * DataLoader's workers are where an input-bound job spends its time. So
 * the parent samples them from outside, on a thread of its own
 * ("mlprof-workers", started with the CPU module in a Python process):
 *
 *  - every WORKER_SCAN_NS it lists the children of every thread of the
 *    process (/proc/self/task/<tid>/children) and keeps those that run the
 *    same executable with the same command line (a fork, not an exec);
 *  - every sampling period it reads each worker's CPU time
 *    (/proc/<pid>/schedstat, the worker's main thread); once the worker ran
 *    for at least half a period since its last sample, it reads the Python
 *    frames of the worker's main thread (cpu/pyframes.c: process_vm_readv
 *    on the child, whose interpreter lies at the same addresses) and queues
 *    a sample weighted by the CPU periods it ran;
 *  - the writer thread (its hook) resolves the queued frames from the
 *    worker's memory, interns the stack and writes a CPU-mode SAMPLE event
 *    with the worker's pid as its thread ("forked worker") and the
 *    innermost range "[forked worker]".
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
#include "core/session.h"
#include "cpu/pyframes.h"
#include "cpu/workers.h"
#include "stack/stack.h"
#include "trace/ev_sample.h"

#define WORKERS_MAX 64
#define WORKER_SCAN_NS 250000000ull /* how often children are looked for */
#define CMDLINE_MAX 4096
#define QUEUE 512                   /* samples between two writer cycles (power of two) */

typedef struct worker {
  pid_t pid;
  uint64_t cpu_ns;   /* CPU time at the last reading */
  uint64_t carry_ns; /* CPU time not yet sampled */
} worker;

typedef struct wsample {
  uint64_t ts, periods; /* periods 0: the worker ended */
  pid_t pid;
  int depth;
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
  uint64_t seen, dropped, unreadable;
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
  W.w[W.n++] = (worker){.pid = pid};
  __atomic_add_fetch(&W.seen, 1, __ATOMIC_RELAXED);
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
static int64_t cpu_of(pid_t pid) {
  char path[64], buf[128];
  snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
  size_t n = read_file(path, buf, sizeof buf - 1);
  if (!n) return -1;
  buf[n] = 0;
  return (int64_t)strtoull(buf, NULL, 10);
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
  uint64_t periods = (uint64_t)((double)w->carry_ns / W.period_ns + 0.5);
  if (!periods) return;
  double left = (double)w->carry_ns - (double)periods * W.period_ns;
  w->carry_ns = left > 0 ? (uint64_t)left : 0;
  wsample *s = slot();
  if (!s) return;
  s->depth = prof__pyframes_remote(w->pid, s->tags, PROF_STACK_MAX_DEPTH);
  if (!s->depth) {
    __atomic_add_fetch(&W.unreadable, 1, __ATOMIC_RELAXED);
    return;
  }
  s->ts = now;
  s->pid = w->pid;
  s->periods = periods;
  publish();
}

static void visit(uint64_t now) {
  if (now - W.last_scan >= WORKER_SCAN_NS) {
    W.last_scan = now;
    scan_children();
  }
  for (int i = 0; i < W.n;) {
    worker *w = &W.w[i];
    int64_t cpu = cpu_of(w->pid);
    if (cpu < 0) { /* gone: the writer closes its thread */
      wsample *s = slot();
      if (s) {
        s->ts = now, s->pid = w->pid, s->periods = 0, s->depth = 0;
        publish();
      }
      W.w[i] = W.w[--W.n];
      continue;
    }
    if ((uint64_t)cpu > w->cpu_ns) w->carry_ns += (uint64_t)cpu - w->cpu_ns; /* the first reading: since the fork */
    w->cpu_ns = (uint64_t)cpu;
    if (w->carry_ns * 2 >= (uint64_t)W.period_ns) sample(w, now);
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
    pthread_cond_timedwait(&W.cv, &W.mu, &ts);
    if (W.stop) break;
    pthread_mutex_unlock(&W.mu);
    visit(prof__ticks_to_ns(prof__ticks()));
    pthread_mutex_lock(&W.mu);
  }
  pthread_mutex_unlock(&W.mu);
  return NULL;
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
  prof__pyframes_remote_resolve(s->pid, s->tags, s->depth, tw); /* before the stack table's scan sees them */
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
  for (; t != h; t++)
    if (tw) emit(tw, &W.q[t % QUEUE]);
  __atomic_store_n(&W.tail, t, __ATOMIC_RELEASE);
  if (!final) return;
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.seen, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKERS, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)W.samples);
  prof__meta_add(PROF_META_WORKER_SAMPLES, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.dropped, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKER_DROPPED, v);
  snprintf(v, sizeof v, "%llu", (unsigned long long)__atomic_load_n(&W.unreadable, __ATOMIC_RELAXED));
  prof__meta_add(PROF_META_WORKER_REFUSED, v);
  W.on = 0;
  free(W.q);
  W.q = NULL;
}
