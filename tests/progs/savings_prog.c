/* savings_prog.c — planted causes of slow steps, each with a switch that
 * removes it, for validating predicted savings (tests/savings.cmake,
 * bench/bench_savings.c):
 *
 *   savings_prog SCENARIO slow|fixed [STEPS]     (default 120 steps)
 *
 *   input       slow: each step loads its batch inline (data range, 8 ms)
 *               then computes (12 ms); fixed: a prefetch thread loads the
 *               next batch while the step computes.
 *   loader      slow: a prefetch thread loads each batch (16 ms) while the
 *               step computes (6 ms), so the step waits 10 ms for it;
 *               fixed: three prefetch threads keep up.
 *   checkpoint  slow: every 10th step writes a checkpoint (io range, 60 ms)
 *               on the step thread after computing 10 ms; fixed: no
 *               checkpoint.
 *   lock        slow: a writer thread flushes (16 ms) while holding the lock
 *               the step needs to publish its result after computing 6 ms;
 *               fixed: the writer takes the data under the lock and flushes
 *               outside it.
 *   copy        slow: each step ends with a blocking copy (6 ms) after
 *               computing 10 ms; fixed: no blocking copy.
 *   outlier     slow: four steps at irregular numbers stall 120 ms; fixed:
 *               no stall. Steps compute 10 ms.
 *
 * Work is simulated with sleeps (absolute deadlines, so an interrupted sleep
 * resumes), which keeps the timings steady on a busy machine. Prints the
 * trace path on success.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlprof.h"

static void sleep_ms(double ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  long long ns = (long long)t.tv_sec * 1000000000ll + t.tv_nsec + (long long)(ms * 1e6);
  t.tv_sec = (time_t)(ns / 1000000000ll);
  t.tv_nsec = (long)(ns % 1000000000ll);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
  }
}

static void compute(double ms) {
  prof_range_push_cat("train_step", PROF_CAT_COMPUTE);
  sleep_ms(ms);
  prof_range_pop();
}

/* ---- input: inline loading vs a prefetch thread ------------------------------ */

/* Every duration is a multiple of U ms, large enough that a busy machine's
 * scheduling delays (a few ms) stay small against it. */
#define U 2.0

#define LOAD_MS (4 * U)
#define INPUT_COMPUTE_MS (6 * U)

typedef struct queue {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, stop, cap;
  double load_ms;
} queue;

static queue q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 2, LOAD_MS};

static void *prefetch_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "prefetch");
  for (;;) {
    pthread_mutex_lock(&q.mu);
    while (q.ready >= q.cap && !q.stop) pthread_cond_wait(&q.cv, &q.mu);
    int stop = q.stop;
    pthread_mutex_unlock(&q.mu);
    if (stop) return NULL;
    prof_range_push_cat("load_batch", PROF_CAT_DATA);
    sleep_ms(q.load_ms);
    prof_range_pop();
    pthread_mutex_lock(&q.mu);
    q.ready++;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);
  }
}

/* Steps fed by `loaders` prefetch threads (none: inline loading). */
static void fed_run(int loaders, double load_ms, double compute_ms, int steps) {
  pthread_t th[4];
  int have = 0;
  q.load_ms = load_ms;
  while (have < loaders && have < 4 && pthread_create(&th[have], NULL, prefetch_main, NULL) == 0) have++;
  for (int i = 0; i < steps; i++) {
    prof_start();
    if (have) {
      prof_range_push_cat("next_batch", PROF_CAT_DATA);
      pthread_mutex_lock(&q.mu);
      while (!q.ready) pthread_cond_wait(&q.cv, &q.mu);
      q.ready--;
      pthread_cond_broadcast(&q.cv);
      pthread_mutex_unlock(&q.mu);
      prof_range_pop();
    } else {
      prof_range_push_cat("load_batch", PROF_CAT_DATA);
      sleep_ms(load_ms);
      prof_range_pop();
    }
    compute(compute_ms);
    prof_stop();
  }
  pthread_mutex_lock(&q.mu);
  q.stop = 1;
  pthread_cond_broadcast(&q.cv);
  pthread_mutex_unlock(&q.mu);
  for (int k = 0; k < have; k++) pthread_join(th[k], NULL);
}

/* ---- checkpoint: periodic work on the step thread ---------------------------- */

static void checkpoint_run(int fixed, int steps) {
  for (int i = 0; i < steps; i++) {
    prof_start();
    compute(5 * U);
    if (!fixed && i % 10 == 9) {
      prof_range_push_cat("checkpoint", PROF_CAT_IO);
      sleep_ms(30 * U);
      prof_range_pop();
    }
    prof_stop();
  }
}

/* ---- lock: a writer holds the step's lock across its slow flush -------------- */

#define FLUSH_MS (8 * U)
#define LOCK_COMPUTE_MS (3 * U)

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending, stop, fixed;
} w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void *writer_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "writer");
  pthread_mutex_lock(&w.mu);
  for (;;) {
    while (!w.pending && !w.stop) pthread_cond_wait(&w.cv, &w.mu);
    if (w.stop) break;
    w.pending = 0; /* take what was published */
    if (w.fixed) pthread_mutex_unlock(&w.mu); /* the fix: flush outside the lock */
    prof_range_push_cat("flush", PROF_CAT_IO);
    sleep_ms(FLUSH_MS);
    prof_range_pop();
    if (w.fixed) pthread_mutex_lock(&w.mu);
  }
  pthread_mutex_unlock(&w.mu);
  return NULL;
}

static void lock_run(int fixed, int steps) {
  pthread_t th;
  w.fixed = fixed;
  int have = pthread_create(&th, NULL, writer_main, NULL) == 0;
  for (int i = 0; i < steps; i++) {
    prof_start();
    compute(LOCK_COMPUTE_MS);
    prof_range_push_cat("publish", PROF_CAT_OTHER);
    pthread_mutex_lock(&w.mu);
    w.pending++;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    prof_range_pop();
    prof_stop();
  }
  if (have) {
    pthread_mutex_lock(&w.mu);
    w.stop = 1;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(th, NULL);
  }
}

/* ---- copy: a blocking transfer at the end of each step ----------------------- */

static void copy_run(int fixed, int steps) {
  for (int i = 0; i < steps; i++) {
    prof_start();
    compute(5 * U);
    if (!fixed) {
      prof_range_push_cat("h2d_copy", PROF_CAT_OTHER);
      sleep_ms(3 * U);
      prof_range_pop();
    }
    prof_stop();
  }
}

/* ---- outlier: rare stalls at irregular steps ---------------------------------- */

static int is_stall(int i, int steps) {
  /* at fixed fractions of the run, with unequal gaps (not periodic) */
  static const double at[] = {0.11, 0.35, 0.47, 0.81};
  for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
    if (i == (int)(at[k] * steps)) return 1;
  return 0;
}

static void outlier_run(int fixed, int steps) {
  for (int i = 0; i < steps; i++) {
    prof_start();
    compute(5 * U);
    if (!fixed && is_stall(i, steps)) {
      prof_range_push_cat("stall", PROF_CAT_OTHER);
      sleep_ms(60 * U);
      prof_range_pop();
    }
    prof_stop();
  }
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[2], "slow") && strcmp(argv[2], "fixed"))) {
    fprintf(stderr, "usage: %s input|loader|checkpoint|lock|copy|outlier slow|fixed [steps]\n", argv[0]);
    return 2;
  }
  int fixed = strcmp(argv[2], "fixed") == 0, steps = argc > 3 ? atoi(argv[3]) : 120;
  if (steps < 20 || steps > 100000) steps = 120;
  int err = prof_init(NULL);
  if (err) fprintf(stderr, "savings_prog: profiler off: %s\n", prof_strerror(err));
  const char *s = argv[1];
  if (!strcmp(s, "input")) fed_run(fixed ? 1 : 0, LOAD_MS, INPUT_COMPUTE_MS, steps);
  else if (!strcmp(s, "loader")) fed_run(fixed ? 3 : 1, 8 * U, 3 * U, steps);
  else if (!strcmp(s, "checkpoint")) checkpoint_run(fixed, steps);
  else if (!strcmp(s, "lock")) lock_run(fixed, steps);
  else if (!strcmp(s, "copy")) copy_run(fixed, steps);
  else if (!strcmp(s, "outlier")) outlier_run(fixed, steps);
  else {
    fprintf(stderr, "savings_prog: unknown scenario '%s'\n", s);
    prof_shutdown();
    return 2;
  }
  const char *path = prof_trace_path();
  if (path) printf("%s\n", path);
  prof_shutdown();
  return err ? 1 : 0;
}
