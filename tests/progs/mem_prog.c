/* mem_prog.c — an ordinary program that knows nothing of mlprof, used by
 * the memory tests through `mlprof run` (LD_PRELOAD). It plants leaks of
 * known sizes in known functions and exercises every allocation call,
 * threads freeing each other's blocks, and fork. It checks its own
 * results (exit 0 when the allocator behaved) and prints nothing.
 *
 * Planted leaks (never freed):
 *   leak_big        2 blocks x 100000 bytes (malloc)
 *   leak_calloc     5 blocks x 4096 bytes (calloc 4096 x 1)
 *   leak_aligned    1 block 3000 bytes (posix_memalign 64) + 1 block 8192 (aligned_alloc 4096)
 *   realloc_chain   1 block 50000 bytes (malloc 10 -> realloc 100 -> 1000 -> 10000 -> 50000)
 *
 * `churn N` makes N malloc/free pairs as fast as it can (far more events
 * than a default ring holds between two writer periods) and leaks exactly
 * one block of 12345 bytes in churn_leak: the truth a lossless trace must
 * give back (N + 1 allocations, N frees, one leak).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHECK(c)                                                      \
  do {                                                                \
    if (!(c)) {                                                       \
      fprintf(stderr, "mem_prog: check failed line %d: %s\n", __LINE__, #c); \
      exit(3);                                                        \
    }                                                                 \
  } while (0)

void *volatile sink; /* keeps blocks reachable for the compiler */

static void usable_ok(void *p, size_t n) { CHECK(p && malloc_usable_size(p) >= n); }

NOINLINE void leak_big(void) {
  for (int i = 0; i < 2; i++) {
    char *p = malloc(100000);
    usable_ok(p, 100000);
    memset(p, 1, 100000);
    sink = p;
  }
}

NOINLINE void leak_calloc(void) {
  for (int i = 0; i < 5; i++) {
    unsigned char *p = calloc(4096, 1);
    usable_ok(p, 4096);
    CHECK(p[0] == 0 && p[4095] == 0);
    sink = p;
  }
}

NOINLINE void leak_aligned(void) {
  void *p = NULL;
  CHECK(posix_memalign(&p, 64, 3000) == 0);
  CHECK(((uintptr_t)p & 63) == 0);
  usable_ok(p, 3000);
  sink = p;
  void *q = aligned_alloc(4096, 8192);
  CHECK(q && ((uintptr_t)q & 4095) == 0);
  usable_ok(q, 8192);
  sink = q;
}

NOINLINE void realloc_chain(void) {
  char *p = malloc(10);
  strcpy(p, "chain");
  static const size_t sizes[] = {100, 1000, 10000, 50000};
  for (size_t i = 0; i < 4; i++) {
    p = realloc(p, sizes[i]);
    CHECK(p && strcmp(p, "chain") == 0);
    usable_ok(p, sizes[i]);
  }
  sink = p;
}

/* Freed blocks of every kind: none of them may show up as a leak. */
NOINLINE void no_leaks(void) {
  for (int i = 0; i < 1000; i++) { /* temporaries */
    void *t = malloc(64);
    sink = t;
    free(t);
  }
  void *a = memalign(256, 1000), *v = valloc(5000), *pv = pvalloc(100);
  CHECK(a && ((uintptr_t)a & 255) == 0 && v && ((uintptr_t)v & 4095) == 0 && pv);
  free(a);
  free(v);
  free(pv);
  int *r = reallocarray(NULL, 10, sizeof(int));
  CHECK(r);
  r = reallocarray(r, 1000, sizeof(int));
  CHECK(r);
  free(r);
  /* Overflowing counts, hidden from the compiler so it does not refuse them. */
  volatile size_t huge = SIZE_MAX / 2;
  errno = 0;
  CHECK(reallocarray(NULL, huge, 4) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(huge, 4) == NULL && errno == ENOMEM); /* overflow, not a huge block */
  CHECK(realloc(malloc(10), 0) == NULL); /* frees */
  free(NULL);
}

/* Threads allocate blocks that other threads free. */
#define HANDOFF 2000
static void *slots[HANDOFF];

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < HANDOFF; i++) __atomic_store_n(&slots[i], malloc(200 + (size_t)i % 50), __ATOMIC_RELEASE);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 0; i < HANDOFF; i++) {
    void *p;
    while (!(p = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE))) sched_yield();
    free(p);
  }
  return NULL;
}

NOINLINE void cross_threads(void) {
  pthread_t a, b;
  CHECK(pthread_create(&b, NULL, consumer, NULL) == 0);
  CHECK(pthread_create(&a, NULL, producer, NULL) == 0);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
}

/* The child allocates and frees too and must exit cleanly. */
NOINLINE void forked(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    for (int i = 0; i < 100; i++) free(malloc(1000));
    void *keep = malloc(123);
    sink = keep;
    _exit(0);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Grows by 1 MiB per "step" and keeps it (for the growth counters). */
NOINLINE void grow(int steps) {
  for (int i = 0; i < steps; i++) {
    char *p = malloc(1 << 20);
    memset(p, 2, 1 << 20);
    sink = p;
    usleep(30000);
  }
}

NOINLINE void churn_leak(void) { sink = malloc(12345); }

NOINLINE void churn(int n) {
  for (int i = 0; i < n; i++) {
    void *p = malloc(16 + (size_t)(i & 127));
    sink = p;
    free(p);
  }
  churn_leak();
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  if (!strcmp(what, "all") || !strcmp(what, "leaks")) {
    leak_big();
    leak_calloc();
    leak_aligned();
    realloc_chain();
  }
  if (!strcmp(what, "all")) {
    no_leaks();
    cross_threads();
    forked();
  }
  if (!strcmp(what, "grow")) grow(argc > 2 ? atoi(argv[2]) : 10);
  if (!strcmp(what, "churn")) churn(argc > 2 ? atoi(argv[2]) : 200000);
  return 0;
}
