/* counters.c — per-thread counters read by the writer thread every cycle,
 * and the step thread's CPU time at every step boundary.
 *
 * For every thread that records events, the writer reads cumulative
 * counters and writes them as COUNTER events named "cpuctr/<counter>" on
 * that thread, so the analysis can take differences over any step or range
 * (interpolating between readings, one flush period apart). PAPI is set up
 * in prof_init() on the caller's thread (prof__counters_start). Hardware
 * counters come from PAPI (MLPROF_PAPI_EVENTS, default cycles,
 * instructions, last-level cache misses); when PAPI has no usable counters
 * the module says so once with PAPI's reason and records software counters
 * instead: thread CPU time, page faults, context switches and run-queue
 * wait (time runnable but without a core; from the thread's CPU clock and
 * /proc/self/task/<tid>). Software counters are
 * recorded in both cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/producer.h"
#include "cpu.h"

#define MAX_CTR_THREADS 512

typedef struct ctr {
  int tid;
  prof__procfile f_stat, f_status, f_schedstat; /* /proc/self/task/<tid>/..., kept open */
  int papi_n;
  uint64_t seen;
  uint64_t last_cpu;
  int64_t last_runq;
  prof__papi_set set;
} ctr;

static struct {
  int started, probed, papi_ok, off;
  const char *events;
  uint64_t cycle;
  ctr *thr[MAX_CTR_THREADS];
  uint32_t id_cpu, id_faults, id_cs, id_runq;
  uint32_t id_papi[PROF_PAPI_MAX];
} C;

static void probe(void) {
  char why[512] = "";
  C.probed = 1;
  C.papi_ok = !C.off && prof__papi_init(why, sizeof why);
  if (C.off) snprintf(why, sizeof why, "disabled by MLPROF_PAPI_EVENTS=%s", C.events);
  if (!C.papi_ok) { /* said once per run: not again by every child of `mlprof run -- bash ...`, nor by
                       * the next image of a process that execs (a shim, `env`, a script's last command) */
    if (!prof__env_run_child() && prof__first_trace())
      fprintf(stderr,
              "mlprof: no hardware counters (%s); recording software counters instead "
              "(thread CPU time, page faults, context switches)\n",
              why);
    prof__meta_add("counters.papi_reason", why);
  }
  prof__meta_add("counters.source", C.papi_ok ? "papi+software" : "software");
  C.id_cpu = prof__intern(PROF_CPUCTR_CPU_NS);
  C.id_faults = prof__intern(PROF_CPUCTR_PAGE_FAULTS);
  C.id_cs = prof__intern(PROF_CPUCTR_CTX_SWITCHES);
  C.id_runq = prof__intern(PROF_CPUCTR_RUNQ_NS);
}

/* Step hook, on the thread that runs the steps: its CPU time at the step's
 * begin and end, so per-step CPU time does not depend on when the writer
 * last read the counters (one clock read and one ring record per boundary;
 * the writer's periodic readings fill in between). */
void prof__counters_step(void) {
  if (!__atomic_load_n(&C.started, __ATOMIC_ACQUIRE) || !C.id_cpu) return;
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return;
  double cpu = (double)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
  prof__emit(PROF_EV_COUNTER, PROF_CPUCTR_CAT_BOUNDARY, C.id_cpu, prof__f64_bits(cpu), 0);
}

/* In prof_init(), on the caller's thread: PAPI's library and thread set-up
 * happen here, once, never on the writer thread (PAPI_library_init beside
 * the program's own dlopen calls corrupts the loader's state). */
void prof__counters_start(void) {
  const char *ev = prof__env("PAPI_EVENTS");
  C.events = ev;
  C.off = ev && (strcmp(ev, "none") == 0 || strcmp(ev, "off") == 0);
  if (!C.probed) probe();
  __atomic_store_n(&C.started, 1, __ATOMIC_RELEASE);
}

/* PAPI event set of a newly seen thread; the first failure turns PAPI off. */
static void open_papi(ctr *c) {
  char why[512] = "";
  c->papi_n = prof__papi_open(&c->set, c->tid, C.events, why, sizeof why);
  if (c->papi_n == 0) {
    C.papi_ok = 0;
    fprintf(stderr, "mlprof: PAPI counters unusable (%s); recording software counters only\n", why);
    prof__meta_add("counters.papi_reason", why);
    prof__meta_add("counters.source", "software");
    return;
  }
  if (why[0]) prof__meta_add("counters.papi_missing", why);
  for (int i = 0; i < c->papi_n; i++) {
    char name[64];
    snprintf(name, sizeof name, PROF_CPUCTR_PREFIX "%s", c->set.names[i]);
    C.id_papi[i] = prof__intern(name);
  }
}

/* One of the thread's /proc files, through its kept descriptor. */
static long read_task(prof__procfile *f, int tid, const char *file, char *buf, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
  return prof__procfile_read(f, path, buf, n);
}

/* The number after "key" in text, or 0. */
static uint64_t field_after(const char *text, const char *key) {
  const char *p = strstr(text, key);
  return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Minor+major faults and context switches of a thread, from /proc: two
 * reads, parsed in place (this runs for every busy thread every cycle). */
static void read_proc(ctr *c, uint64_t *faults, uint64_t *cs) {
  char buf[4096];
  *faults = *cs = 0;
  if (read_task(&c->f_stat, c->tid, "stat", buf, sizeof buf) > 0) {
    char *p = strrchr(buf, ')');
    unsigned long long minflt = 0, majflt = 0;
    if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt) == 2)
      *faults = minflt + majflt;
  }
  if (read_task(&c->f_status, c->tid, "status", buf, sizeof buf) > 0)
    *cs = field_after(buf, "\nvoluntary_ctxt_switches:") + field_after(buf, "\nnonvoluntary_ctxt_switches:");
}

/* Time the thread spent runnable but waiting for a core (the scheduler's
 * run_delay, second field of schedstat, in ns); -1 when the kernel has no
 * schedstat. */
static int64_t read_runq(ctr *c) {
  char buf[128];
  if (read_task(&c->f_schedstat, c->tid, "schedstat", buf, sizeof buf) <= 0) return -1;
  unsigned long long on_cpu, delay;
  return sscanf(buf, "%llu %llu", &on_cpu, &delay) == 2 ? (int64_t)delay : -1;
}

static void put(prof__event *ev, size_t *n, uint64_t ts, uint32_t id, double v) {
  memset(&ev[*n], 0, sizeof ev[*n]);
  ev[*n].ts = ts;
  ev[*n].type = PROF_EV_COUNTER;
  ev[*n].name = id;
  ev[*n].a = prof__f64_bits(v);
  (*n)++;
}

static void read_thread(prof__tw *tw, ctr *c, int final) {
  struct timespec ts;
  if (clock_gettime((clockid_t)prof__thread_cpu_clock(c->tid), &ts) != 0) return;
  uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  int64_t runq = read_runq(c);
  /* idle since the last reading: neither running nor waiting for a core */
  if (cpu == c->last_cpu && runq == c->last_runq && !final) return;
  c->last_cpu = cpu;
  c->last_runq = runq;
  uint64_t now = prof__mono_ns(), faults, cs;
  read_proc(c, &faults, &cs);
  prof__event ev[4 + PROF_PAPI_MAX];
  size_t n = 0;
  put(ev, &n, now, C.id_cpu, (double)cpu);
  put(ev, &n, now, C.id_faults, (double)faults);
  put(ev, &n, now, C.id_cs, (double)cs);
  if (runq >= 0) put(ev, &n, now, C.id_runq, (double)runq);
  long long vals[PROF_PAPI_MAX];
  if (c->papi_n > 0 && prof__papi_read(&c->set, vals) == 0)
    for (int i = 0; i < c->papi_n; i++) put(ev, &n, now, C.id_papi[i], (double)vals[i]);
  if (tw) prof__tw_events(tw, (uint32_t)c->tid, ev, n);
}

static ctr *find_or_add(int tid) {
  int free_slot = -1;
  for (int i = 0; i < MAX_CTR_THREADS; i++) {
    if (C.thr[i] && C.thr[i]->tid == tid) return C.thr[i];
    if (!C.thr[i] && free_slot < 0) free_slot = i;
  }
  if (free_slot < 0) return NULL;
  ctr *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->tid = tid;
  c->last_cpu = UINT64_MAX;
  if (C.papi_ok) open_papi(c);
  C.thr[free_slot] = c;
  return c;
}

void prof__counters_cycle(prof__tw *tw, int final) {
  if (!__atomic_load_n(&C.started, __ATOMIC_ACQUIRE) || !C.probed) return;
  C.cycle++;
  for (prof__thread *t = prof__threads_head(); t; t = t->next) {
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) continue;
    ctr *c = find_or_add((int)t->tid);
    if (!c) continue;
    c->seen = C.cycle;
    read_thread(tw, c, final);
  }
  for (int i = 0; i < MAX_CTR_THREADS; i++) {
    ctr *c = C.thr[i];
    if (!c || (c->seen == C.cycle && !final)) continue;
    prof__papi_close(&c->set);
    prof__procfile_close(&c->f_stat);
    prof__procfile_close(&c->f_status);
    prof__procfile_close(&c->f_schedstat);
    free(c);
    C.thr[i] = NULL;
  }
}
