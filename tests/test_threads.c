/* test_threads.c — per-thread state: a thread's first event commits only
 * the ring memory it writes (not the whole ring), and the state of an ended
 * thread is reused by a later one, whole and clean (empty ring, nothing
 * held back for ranges the old thread left open, its own id and name), with
 * every event of both threads in the trace. Each scenario runs in a forked
 * child (one session per process); the writer sleeps unless asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "mlprof.h"
#include "core/bgwriter.h"
#include "core/session.h"
#include "trace/trace.h"

static int in_child(int (*fn)(const char *), const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(fn(arg));
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static int start_session(const char *path) {
  setenv("MLPROF_MODULES", "none", 1);
  prof_config c = prof_config_default();
  c.output = path;
  c.flush_ms = 10000; /* the writer drains only when asked */
  return prof_init(&c);
}

/* Resident pages of the calling thread's ring. */
static long ring_resident_pages(void) {
  prof__thread *t = prof__self;
  if (!t) return -1;
  long page = sysconf(_SC_PAGESIZE);
  size_t len = prof__ring_capacity(&t->ring) * sizeof(prof__slot);
  uintptr_t lo = (uintptr_t)t->ring.slot & ~(uintptr_t)(page - 1);
  size_t n = ((uintptr_t)t->ring.slot + len - lo + (size_t)page - 1) / (size_t)page;
  unsigned char *vec = malloc(n);
  if (!vec || mincore((void *)lo, n * (size_t)page, vec) != 0) {
    free(vec);
    return -1;
  }
  long resident = 0;
  for (size_t i = 0; i < n; i++) resident += vec[i] & 1;
  free(vec);
  return resident;
}

/* ---- a first event is cheap --------------------------------------------------- */

static long first_event_pages;

static void *one_event(void *arg) {
  (void)arg;
  prof_mark("first");
  first_event_pages = ring_resident_pages();
  return NULL;
}

static int scenario_first_event(const char *path) {
  if (start_session(path) != 0) return 1;
  pthread_t th;
  if (pthread_create(&th, NULL, one_event, NULL) != 0) return 2;
  pthread_join(th, NULL);
  if (prof_shutdown() != 0) return 3;
  /* 1 MiB of ring: 256 pages, of which the event needs one (two when the
   * record straddles a page). */
  return first_event_pages >= 1 && first_event_pages <= 2 ? 0 : 10;
}

static void first_event_commits_only_what_it_writes(void **state) {
  (void)state;
  assert_int_equal(in_child(scenario_first_event, th_tmp_path("firstevent", ".mlpt")), 0);
}

/* ---- an ended thread's state is reused clean ------------------------------------ */

#define A_MARKS 100
static prof__thread *state_a, *state_b;
static int b_clean;

static void *thread_a(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker-a");
  prof_range_push("left-open"); /* ends with a range open: room held back */
  for (int i = 0; i < A_MARKS; i++) prof_mark("a");
  state_a = prof__self;
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker-b");
  prof_mark("b");
  prof__thread *t = prof__self;
  state_b = t;
  /* one event from slot 0 (the first event of a thread takes the long record) */
  b_clean = t && t->depth == 0 && t->ring.reserve == 0 && t->ring.tail == 0 && t->ring.head >= 1 &&
            t->ring.head <= PROF_SLOT_EXT_SLOTS &&
            prof__thread_lost(t) == 0 && !t->exited && !t->announced && strcmp(t->name, "worker-b") == 0;
  return NULL;
}

static int scenario_reuse(const char *path) {
  if (start_session(path) != 0) return 1;
  pthread_t th;
  if (pthread_create(&th, NULL, thread_a, NULL) != 0) return 2;
  pthread_join(th, NULL);
  if (prof__writer_sync(5000) != 0) return 3; /* drains A, sees it ended, keeps its state */
  if (pthread_create(&th, NULL, thread_b, NULL) != 0) return 4;
  pthread_join(th, NULL);
  if (state_b != state_a) return 5; /* B took A's state from the pool */
  if (!b_clean) return 6;
  if (prof_shutdown() != 0) return 7;
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  if (st.events_lost != 0 || st.events_written != 1 + A_MARKS + 1 || st.threads != 2) return 8;
  return 0;
}

static void ended_threads_state_is_reused_clean(void **state) {
  (void)state;
  const char *path = th_tmp_path("reuse", ".mlpt");
  assert_int_equal(in_child(scenario_reuse, path), 0);
  /* In the trace: each thread with its own name and events, nothing lost. */
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  uint32_t tid_a = 0, tid_b = 0;
  uint64_t ev_a = 0, ev_b = 0, other = 0;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_THREAD) {
      if (strcmp(rec.str, "worker-a") == 0) tid_a = rec.tid;
      if (strcmp(rec.str, "worker-b") == 0) tid_b = rec.tid;
      assert_int_equal(rec.lost, 0);
    } else if (rec.kind == PROF_REC_EVENT) {
      if (rec.tid == tid_a) ev_a++;
      else if (rec.tid == tid_b) ev_b++;
      else other++;
    }
  }
  assert_int_equal(rc, 0);
  prof__reader_close(r);
  assert_true(tid_a != 0 && tid_b != 0 && tid_a != tid_b);
  assert_int_equal(ev_a, 1 + A_MARKS);
  assert_int_equal(ev_b, 1);
  assert_int_equal(other, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_event_commits_only_what_it_writes),
      cmocka_unit_test(ended_threads_state_is_reused_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
