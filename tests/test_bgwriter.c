/* test_bgwriter.c — the background writer under a heavy event stream and
 * when writing fails: every EVENTS chunk stays small however many events a
 * drain finds (in the trace and in a capture segment), and a failure is
 * reported with its own cause, never with an errno left over from something
 * else. Link-time mocks: the trace writer's flush and write(2) can be made
 * to fail. Each scenario runs in a forked child (one session per process).
 */
// wrap: prof__tw_flush write
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "mlprof.h"
#include "trace/format.h"
#include "trace/trace.h"

/* ---- mocks ----------------------------------------------------------------- */

static int flush_fails_with;   /* nonzero: the writer thread's flushes return it */
static int writes_fail_with;   /* nonzero: write(2) on files fails with this errno */

int __real_prof__tw_flush(prof__tw *w);
int __wrap_prof__tw_flush(prof__tw *w) {
  int rc = __atomic_load_n(&flush_fails_with, __ATOMIC_ACQUIRE);
  if (!rc) return __real_prof__tw_flush(w);
  errno = ETIMEDOUT; /* what the writer's timed futex sleep leaves behind */
  return rc;
}

ssize_t __real_write(int fd, const void *p, size_t n);
ssize_t __wrap_write(int fd, const void *p, size_t n) {
  int e = __atomic_load_n(&writes_fail_with, __ATOMIC_ACQUIRE);
  if (e && fd > 2) {
    errno = e;
    return -1;
  }
  return __real_write(fd, p, n);
}

/* ---- helpers ---------------------------------------------------------------- */

static int in_child(int (*fn)(const char *), const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(fn(arg));
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* Largest raw payload of an EVENTS chunk in the trace at path, by walking
 * the chunk headers (docs/trace-format.md); sets *chunks to the number of
 * EVENTS chunks. Returns -1 when the file cannot be walked. */
static long max_events_chunk(const char *path, int *chunks) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char fixed[16], h[PROF_CHUNK_HDR];
  long max = -1;
  *chunks = 0;
  if (fread(fixed, 1, 16, f) == 16) {
    uint32_t hdr = (uint32_t)fixed[12] | (uint32_t)fixed[13] << 8 | (uint32_t)fixed[14] << 16 |
                   (uint32_t)fixed[15] << 24;
    if (fseek(f, (long)hdr + 4, SEEK_CUR) == 0) max = 0;
  }
  while (max >= 0 && fread(h, 1, sizeof h, f) == sizeof h) {
    uint32_t raw = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
    uint32_t stored = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
    if (h[4] == PROF_CHUNK_EVENTS) {
      (*chunks)++;
      if ((long)raw > max) max = (long)raw;
    }
    if (fseek(f, (long)stored, SEEK_CUR) != 0) max = -1;
  }
  fclose(f);
  return max;
}

/* Events in a trace, read back with the reader. */
static uint64_t count_events(const char *path) {
  prof__reader *r;
  char err[256];
  if (prof__reader_open(&r, path, err) != 0) return 0;
  prof__rec rec;
  uint64_t n = 0;
  while (prof__reader_next(r, &rec) == 1) n += rec.kind == PROF_REC_EVENT;
  prof__reader_close(r);
  return n;
}

/* Run fn in a child with its stderr in a file; the file's text goes to out. */
static int child_stderr(int (*fn)(const char *), const char *arg, char *out, size_t n) {
  const char *log = th_tmp_path("bgwriter-stderr", ".txt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(90);
    _exit(fn(arg));
  }
  int st;
  waitpid(pid, &st, 0);
  FILE *f = fopen(log, "r");
  size_t len = f ? fread(out, 1, n - 1, f) : 0;
  if (f) fclose(f);
  out[len] = 0;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* ---- a heavy stream: bounded chunks ---------------------------------------- */

/* Events one drain finds: fewer than the ring's high-water mark, so the
 * writer (asleep for 10 s) drains them all at once at shutdown. */
#define HEAVY_PAIRS 400000
/* What docs/trace-format.md promises: 64 KiB plus one batch of events. */
#define EVENTS_CHUNK_MAX (256u << 10)

static int scenario_heavy(const char *path) {
  setenv("MLPROF_MODULES", "none", 1);
  setenv("MLPROF_SCHEDULE", "active=1,repeat=1", 1); /* step 0 also goes to a segment */
  prof_config c = prof_config_default();
  c.output = path;
  c.ring_kb = 16 << 10; /* 2 Mi slots: the mark is far above the burst */
  c.flush_ms = 10000;
  if (prof_init(&c) != 0) return 1;
  if (prof_start() != 0) return 2;
  for (int i = 0; i < HEAVY_PAIRS; i++) {
    prof_range_push("heavy");
    prof_range_pop();
  }
  if (prof_stop() != 0) return 3;
  if (prof_shutdown() != 0) return 4;
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  return st.events_lost == 0 ? 0 : 5;
}

static void heavy_stream_keeps_every_chunk_small(void **state) {
  (void)state;
  const char *path = th_tmp_path("heavy", ".mlpt");
  assert_int_equal(in_child(scenario_heavy, path), 0);
  int chunks = 0;
  long max = max_events_chunk(path, &chunks);
  assert_true(max > 0);
  assert_true(max <= (long)EVENTS_CHUNK_MAX);
  assert_true(chunks > 4); /* the burst really was split */
  assert_int_equal(count_events(path), 2ull * HEAVY_PAIRS + 2); /* + step begin and end */
  /* The schedule's segment got a copy of the step: bounded as well. */
  char seg[4200];
  snprintf(seg, sizeof seg, "%.*s.cycle1.mlpt", (int)(strlen(path) - 5), path);
  max = max_events_chunk(seg, &chunks);
  assert_true(max > 0);
  assert_true(max <= (long)EVENTS_CHUNK_MAX);
  assert_int_equal(count_events(seg), 2ull * HEAVY_PAIRS + 2);
}

/* ---- failures carry their own cause ----------------------------------------- */

static int scenario_flush_fails(const char *path) {
  setenv("MLPROF_MODULES", "none", 1);
  prof_config c = prof_config_default();
  c.output = path;
  if (prof_init(&c) != 0) return 1;
  __atomic_store_n(&flush_fails_with, PROF_EINVAL, __ATOMIC_RELEASE);
  prof_mark("x");
  return prof_shutdown() == PROF_EIO ? 0 : 2;
}

static void non_io_failure_never_prints_a_stale_errno(void **state) {
  (void)state;
  char msg[4096];
  assert_int_equal(child_stderr(scenario_flush_fails, th_tmp_path("flushfail", ".mlpt"), msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "mlprof: writing trace"));
  assert_non_null(strstr(msg, prof_strerror(PROF_EINVAL)));
  assert_null(strstr(msg, strerror(ETIMEDOUT)));
}

static int scenario_write_fails(const char *path) {
  setenv("MLPROF_MODULES", "none", 1);
  prof_config c = prof_config_default();
  c.output = path;
  if (prof_init(&c) != 0) return 1;
  __atomic_store_n(&writes_fail_with, ENOSPC, __ATOMIC_RELEASE); /* the header is written: the disk fills */
  prof_mark("x");
  int rc = prof_shutdown();
  __atomic_store_n(&writes_fail_with, 0, __ATOMIC_RELEASE);
  return rc == PROF_EIO ? 0 : 2;
}

static void write_failure_reports_the_errno_of_the_write(void **state) {
  (void)state;
  char msg[4096];
  assert_int_equal(child_stderr(scenario_write_fails, th_tmp_path("writefail", ".mlpt"), msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "mlprof: writing trace"));
  assert_non_null(strstr(msg, strerror(ENOSPC)));
  assert_null(strstr(msg, strerror(ETIMEDOUT)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(heavy_stream_keeps_every_chunk_small),
      cmocka_unit_test(non_io_failure_never_prints_a_stale_errno),
      cmocka_unit_test(write_failure_reports_the_errno_of_the_write),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
