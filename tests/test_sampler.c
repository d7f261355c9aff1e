/* test_sampler.c — the CPU sampler end to end: each scenario runs in a
 * forked child (a session starts once per process), the parent reads the
 * trace it wrote. Checks samples, stacks, ranges, wall vs CPU mode, thread
 * churn, the software counters, and the fall back from the perf clocks to
 * the timers where the kernel refuses perf events (a seccomp filter, as
 * containers install) or MLPROF_SAMPLER=timer asks for them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "helpers.h"
#include "mlprof.h"
#include "stack/stack.h"
#include "trace/trace.h"

typedef struct summary {
  long weight;
  int samples, samples_cpu, samples_wall, with_stack, stacks_defined, in_hot_range;
  int samples_of[8]; /* per tid listed in tids[] */
  int tids[8], ntids;
  int cpu_ns_events;
  double last_cpu_ns;
  int cpu_ns_monotonic;
  char source[64];
  char sampler[16], why_timer[160];
  int footer;
} summary;

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static _Thread_local volatile double burn_sink; /* per thread: burn runs on many */

/* CPU work in user code (the result is kept, so the loop stays), reading
 * the thread's clock between rounds. */
__attribute__((noinline)) static void burn(double seconds) {
  double x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < seconds)
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
  burn_sink = x;
}

/* Run `fn` in a child with the given env, writing to `path`. */
static void run_child(const char *path, const char *hz, const char *mode, void (*fn)(void)) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", hz, 1);
    if (mode) setenv("MLPROF_SAMPLE_MODE", mode, 1);
    setenv("MLPROF_REPORT", "0", 1);
    prof_config c = prof_config_default();
    c.output = path;
    if (prof_init(&c) != 0) _exit(3);
    fn();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

static void read_trace(const char *path, summary *s) {
  char err[256];
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  uint32_t hot_id = 0, cpu_id = 0;
  static uint8_t defined[1 << 17];
  memset(defined, 0, sizeof defined);
  prof__rec rec;
  int rc;
  s->cpu_ns_monotonic = 1;
  const prof__kv *hdr = prof__reader_header(r);
  for (size_t i = 0; i < prof__reader_header_count(r); i++) {
    if (strcmp(hdr[i].key, "cpu.sampler") == 0) snprintf(s->sampler, sizeof s->sampler, "%s", hdr[i].value);
    if (strcmp(hdr[i].key, "cpu.sampler_why_timer") == 0) snprintf(s->why_timer, sizeof s->why_timer, "%s", hdr[i].value);
  }
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_STRING && strcmp(rec.str, "hot") == 0) hot_id = rec.id;
    if (rec.kind == PROF_REC_STRING && strcmp(rec.str, "cpuctr/cpu_ns") == 0) cpu_id = rec.id;
    if (rec.kind == PROF_REC_META && strcmp(rec.key, "counters.source") == 0)
      snprintf(s->source, sizeof s->source, "%s", rec.value);
    if (rec.kind == PROF_REC_CHUNK && rec.chunk_type == PROF_CHUNK_STACKS) {
      prof__cur c = {rec.data, rec.data + rec.len, 0};
      uint64_t n = prof__cur_varint(&c);
      for (uint64_t i = 0; i < n && !c.bad; i++) {
        uint64_t id = prof__cur_varint(&c), d = prof__cur_varint(&c);
        for (uint64_t k = 0; k < d; k++) prof__cur_svarint(&c);
        if (id < sizeof defined) defined[id] = 1;
      }
      assert_false(c.bad);
    }
    if (rec.kind != PROF_REC_EVENT) continue;
    if (rec.ev.type == PROF_EV_COUNTER && rec.ev.name == cpu_id && cpu_id && rec.tid == (uint32_t)s->tids[0]) {
      double v = prof__bits_f64(rec.ev.a);
      if (v < s->last_cpu_ns) s->cpu_ns_monotonic = 0;
      s->last_cpu_ns = v;
      s->cpu_ns_events++;
    }
    if (rec.ev.type != PROF_EV_SAMPLE) continue;
    s->samples++;
    s->weight += (long)rec.ev.b;
    if (rec.ev.aux == PROF_SAMPLE_CPU) s->samples_cpu++;
    if (rec.ev.aux == PROF_SAMPLE_WALL) s->samples_wall++;
    if (rec.ev.name) s->with_stack++;
    if (rec.ev.name && rec.ev.name < sizeof defined && defined[rec.ev.name]) s->stacks_defined++;
    if (hot_id && rec.ev.a == hot_id) s->in_hot_range++;
    for (int i = 0; i < s->ntids; i++)
      if ((uint32_t)s->tids[i] == rec.tid) s->samples_of[i]++;
  }
  assert_int_equal(rc, 0);
  s->footer = prof__reader_has_footer(r);
  prof__reader_close(r);
}

/* Shared between child and parent through a pipe-free trick: tids go into
 * the trace as thread records; here we only need the main thread's tid,
 * which is the child's pid. */

static void hot_loop(void) {
  prof_range_push("hot");
  burn(0.4);
  prof_range_pop();
}

static void cpu_mode_samples_busy_code(void **state) {
  (void)state;
  const char *path = th_tmp_path("sampler_cpu", ".mlpt");
  summary s = {0};
  pid_t before = getpid();
  (void)before;
  run_child(path, "1000", NULL, hot_loop);
  read_trace(path, &s);
  assert_true(s.footer);
  /* 0.4 s of CPU at 1 kHz is 400 periods: one sample each on the perf
   * clocks; CPU-time timers fire on scheduler ticks, so there fewer samples
   * carry the missed periods as their weight */
  assert_true(s.samples >= 40);
  assert_true(s.weight >= 250 && s.weight <= 600);
  assert_int_equal(s.samples_wall, 0);
  assert_true(s.with_stack >= s.samples * 9 / 10);
  assert_int_equal(s.stacks_defined, s.with_stack);
  assert_true(s.in_hot_range >= s.samples * 8 / 10);
}

static void short_burn(void) { burn(0.03); }

/* The thread that calls prof_init is sampled from then on: a short
 * program is not left to the writer's first scan of the threads (after
 * the clock calibration and one period). */
static void starting_thread_is_sampled_from_init(void **state) {
  (void)state;
  const char *path = th_tmp_path("sampler_start", ".mlpt");
  summary s = {0};
  run_child(path, "1000", NULL, short_burn);
  read_trace(path, &s);
  assert_true(s.footer);
  print_message("30 ms of CPU right after prof_init: %d samples, weight %ld\n", s.samples, s.weight);
  assert_true(s.weight >= 10);
}

static volatile int sleeper_tid;
static void *sleeper(void *arg) {
  (void)arg;
  sleeper_tid = (int)syscall(SYS_gettid);
  struct timespec ts = {0, 400 * 1000000L}, rem;
  while (nanosleep(&ts, &rem) != 0) ts = rem;
  return NULL;
}

/* The child writes its sleeper's tid as a mark name so the parent finds it. */
static void sleep_scenario(void) {
  pthread_t th;
  pthread_create(&th, NULL, sleeper, NULL);
  burn(0.1);
  pthread_join(th, NULL);
  char name[32];
  snprintf(name, sizeof name, "sleeper=%d", sleeper_tid);
  prof_mark(strdup(name));
}

static int sleeper_from_trace(const char *path) {
  char err[256];
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  int tid = 0;
  while (prof__reader_next(r, &rec) == 1)
    if (rec.kind == PROF_REC_STRING && strncmp(rec.str, "sleeper=", 8) == 0) tid = atoi(rec.str + 8);
  prof__reader_close(r);
  return tid;
}

static void wall_mode_sees_a_sleeping_thread(void **state) {
  (void)state;
  const char *cpu = th_tmp_path("sampler_sleep_cpu", ".mlpt");
  const char *wall = th_tmp_path("sampler_sleep_wall", ".mlpt");
  run_child(cpu, "500", "cpu", sleep_scenario);
  run_child(wall, "500", "wall", sleep_scenario);
  summary sc = {0}, sw = {0};
  sc.tids[0] = sleeper_from_trace(cpu);
  sw.tids[0] = sleeper_from_trace(wall);
  assert_true(sc.tids[0] > 0 && sw.tids[0] > 0);
  sc.ntids = sw.ntids = 1;
  read_trace(cpu, &sc);
  read_trace(wall, &sw);
  assert_true(sw.samples_of[0] >= 40); /* 0.4 s asleep at 500 Hz ~ 200 */
  assert_true(sc.samples_of[0] <= 3);  /* asleep: no CPU time, no samples */
  assert_true(sw.samples_wall > 0);
  assert_int_equal(sw.samples_cpu, 0);
}

static void *short_life(void *arg) {
  (void)arg;
  burn(0.001);
  return NULL;
}
static void *spawner(void *arg) {
  (void)arg;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pthread_t th;
    if (pthread_create(&th, NULL, short_life, NULL) == 0) pthread_join(th, NULL);
    prof_range_push("spawn");
    burn(0.002);
    prof_range_pop();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > 600) break;
  }
  return NULL;
}
static void churn(void) {
  pthread_t th[8];
  for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, spawner, NULL);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
}

/* 8 threads creating and ending threads under 10 kHz sampling: no crash, no
 * deadlock (the test's timeout), a complete trace with samples. */
static void thread_churn_under_fast_sampling(void **state) {
  (void)state;
  const char *path = th_tmp_path("sampler_churn", ".mlpt");
  run_child(path, "10000", NULL, churn);
  summary s = {0};
  read_trace(path, &s);
  assert_true(s.footer);
  /* most of the CPU goes to threads living ~1 ms, shorter than the
   * thread scan period (documented): only require that sampling went on */
  assert_true(s.samples > 0 && s.weight >= s.samples);
  assert_int_equal(s.stacks_defined, s.with_stack);
}

static int child_pid_tid;
static void counters_scenario(void) {
  prof_range_push("hot");
  burn(0.3);
  prof_range_pop();
}

/* Counter readings of the profiled thread: a source is named, and its CPU
 * time only grows, up to at least the 0.3 s it burned. */
static void counters_recorded_per_thread(void **state) {
  (void)state;
  const char *path = th_tmp_path("sampler_ctr", ".mlpt");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", "0", 1);
    prof_config c = prof_config_default();
    c.output = path;
    if (prof_init(&c) != 0) _exit(3);
    counters_scenario();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  child_pid_tid = pid;
  summary s = {0};
  s.tids[0] = child_pid_tid;
  s.ntids = 1;
  read_trace(path, &s);
  assert_int_equal(s.samples, 0); /* MLPROF_SAMPLE_HZ=0: sampling off */
  assert_true(strcmp(s.source, "software") == 0 || strcmp(s.source, "papi+software") == 0);
  assert_true(s.cpu_ns_events >= 2);
  assert_true(s.cpu_ns_monotonic);
  assert_true(s.last_cpu_ns >= 0.29e9);
}

/* perf_event_open fails with EACCES in this process from now on, as under
 * a container's seccomp profile. */
static void refuse_perf_events(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 13 /* EACCES */),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) _exit(5);
}

static void refused_then_hot_loop(void) { hot_loop(); }

/* Where perf events are refused the sampler runs on the timers, says so in
 * the header with the reason, and still samples; MLPROF_SAMPLER=timer
 * picks the timers too. Without a refusal, CPU mode runs on the perf
 * clocks when this kernel allows them. */
static void timers_where_perf_is_refused(void **state) {
  (void)state;
  const char *refused = th_tmp_path("sampler_refused", ".mlpt");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    refuse_perf_events();
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    setenv("MLPROF_REPORT", "0", 1);
    prof_config c = prof_config_default();
    c.output = refused;
    if (prof_init(&c) != 0) _exit(3);
    refused_then_hot_loop();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  summary s = {0};
  read_trace(refused, &s);
  assert_string_equal(s.sampler, "timer");
  assert_non_null(strstr(s.why_timer, "perf_event_open"));
  /* timers fire at scheduler ticks, and a sanitizer build on a loaded
   * machine runs the loop slower: enough samples to judge, most in range */
  assert_true(s.samples >= 10 && s.in_hot_range >= s.samples * 8 / 10);

  const char *asked = th_tmp_path("sampler_timer_env", ".mlpt");
  setenv("MLPROF_SAMPLER", "timer", 1);
  run_child(asked, "1000", NULL, hot_loop);
  unsetenv("MLPROF_SAMPLER");
  summary t = {0};
  read_trace(asked, &t);
  assert_string_equal(t.sampler, "timer");
  assert_string_equal(t.why_timer, "MLPROF_SAMPLER=timer");
  assert_true(t.samples > 0);

  const char *dflt = th_tmp_path("sampler_default", ".mlpt");
  run_child(dflt, "1000", NULL, hot_loop);
  summary d = {0};
  read_trace(dflt, &d);
  char why[160];
  int perf = prof__perf_clock_probe(why, sizeof why);
  print_message("default sampler: %s (%s); %d samples, weight %ld\n", d.sampler, perf ? "perf events allowed" : why,
                d.samples, d.weight);
  assert_string_equal(d.sampler, perf ? "perf" : "timer");
}

/* The program puts its own files under the numbers of mlprof's perf clock
 * descriptors (dup2, which closes them; a daemon closing what it did not
 * open and opening files would do the same): the sampler's shutdown must
 * leave those files alone. The child
 * exits 0 when every one of them is still open and reads back. */
static void fds_taken_over(void) {
  burn(0.05);
  int taken[64], n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d) _exit(6);
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 64) {
    char path[300], link[64];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0) continue;
    link[len] = 0;
    if (strcmp(link, "anon_inode:[perf_event]") == 0) taken[n++] = atoi(e->d_name);
  }
  closedir(d);
  int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  for (int i = 0; i < n; i++)
    if (zero < 0 || dup2(zero, taken[i]) != taken[i]) _exit(7); /* closes mlprof's, in one step */
  if (prof_shutdown() != 0) _exit(4);
  for (int i = 0; i < n; i++) {
    char b = 1;
    if (fcntl(taken[i], F_GETFD) < 0 || read(taken[i], &b, 1) != 1 || b != 0) _exit(8);
  }
  _exit(0);
}

/* The starting thread's trace cache (the cheap walk for its samples) is
 * never made by prof_init, linked or preloaded (`mlprof run`): making it
 * was most of a trivial program's start. It comes at the first step
 * boundary after a sample, or at an allocation-site capture (what a
 * preloaded program's sampled allocations make). Each case in a child of
 * its own, so no earlier test made the cache. */
enum { AFTER_NOTHING, AFTER_SAMPLED_STEP, AFTER_CAPTURE };

static int fast_after_init(int preload, int what) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (preload) setenv("MLPROF_PRELOAD", "1", 1);
    else unsetenv("MLPROF_PRELOAD");
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    setenv("MLPROF_REPORT", "0", 1);
    prof_config c = prof_config_default();
    c.output = th_tmp_path(preload ? "sampler_lazy_p" : "sampler_lazy", ".mlpt");
    if (prof_init(&c) != 0) _exit(3);
    int at_init = prof__stack_thread_fast();
    if (what == AFTER_SAMPLED_STEP) {
      hot_loop(); /* sampled */
      prof_start();
      prof_stop();
    } else if (what == AFTER_CAPTURE) {
      uintptr_t pcs[8];
      hot_loop();
      if (prof__stack_capture(pcs, 8, 0) <= 0) _exit(4);
    }
    int after = prof__stack_thread_fast();
    prof_shutdown();
    _exit(at_init * 2 + after);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

static void trace_cache_made_at_a_step_or_a_capture_not_at_init(void **state) {
  (void)state;
  if (!prof__stack_capture_available()) skip();
  assert_int_equal(fast_after_init(0, AFTER_NOTHING), 0);      /* linked, no sample: none */
  assert_int_equal(fast_after_init(0, AFTER_SAMPLED_STEP), 1); /* linked: after a sampled step */
  assert_int_equal(fast_after_init(1, AFTER_NOTHING), 0);      /* preloaded: not at prof_init either */
  assert_int_equal(fast_after_init(1, AFTER_SAMPLED_STEP), 1);
  assert_int_equal(fast_after_init(1, AFTER_CAPTURE), 1);      /* preloaded without steps: its allocations */
}

static void program_fds_under_old_numbers_are_left_alone(void **state) {
  (void)state;
  char why[160];
  if (!prof__perf_clock_probe(why, sizeof why)) skip(); /* no perf clocks here: nothing to take over */
  run_child(th_tmp_path("sampler_fds", ".mlpt"), "1000", NULL, fds_taken_over);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_mode_samples_busy_code),
      cmocka_unit_test(starting_thread_is_sampled_from_init),
      cmocka_unit_test(wall_mode_sees_a_sleeping_thread),
      cmocka_unit_test(thread_churn_under_fast_sampling),
      cmocka_unit_test(counters_recorded_per_thread),
      cmocka_unit_test(timers_where_perf_is_refused),
      cmocka_unit_test(program_fds_under_old_numbers_are_left_alone),
      cmocka_unit_test(trace_cache_made_at_a_step_or_a_capture_not_at_init),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
