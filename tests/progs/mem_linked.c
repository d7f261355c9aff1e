/* mem_linked.c — a program linked against libmlprof.so (not preloaded)
 * that uses the API: 10 steps, each keeping 1 MiB (steady growth), a named
 * custom pool whose blocks are reported by hand, temporaries, and planted
 * leaks:
 *   linked_leak   1 block of 77777 bytes (heap)
 *   pool_user     1 block of 4096 bytes in pool "arena" (the last one)
 * `burst N` adds N malloc/free pairs to every step, as fast as it can:
 * more events than a small ring holds, for the lossy-trace tests.
 * Exit status 0 when every API call behaved.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"

#define NOINLINE __attribute__((noinline))

void *volatile sink;
static char arena[64 * 4096];

NOINLINE void linked_leak(void) { sink = malloc(77777); }

/* Hands out block i of the arena and gives back block i - 1. */
NOINLINE void pool_user(int pool, int i) {
  prof_mem_alloc(pool, arena + (size_t)i * 4096, 4096);
  if (i > 0) prof_mem_free(pool, arena + (size_t)(i - 1) * 4096);
}

NOINLINE void keep_growing(void) {
  char *p = malloc(1 << 20);
  memset(p, 3, 1 << 20);
  sink = p;
}

NOINLINE void churn(void) {
  for (int i = 0; i < 100; i++) {
    void *t = malloc(48);
    sink = t;
    free(t);
  }
}

NOINLINE void burst(int n) {
  for (int i = 0; i < n; i++) {
    void *t = malloc(32 + (size_t)(i & 63));
    sink = t;
    free(t);
  }
}

int main(int argc, char **argv) {
  int extra = argc > 2 && strcmp(argv[1], "burst") == 0 ? atoi(argv[2]) : 0;
  if (prof_mem_pool("arena") >= 0) return 10; /* not running yet: an error */
  if (prof_init(NULL) != 0) return 11;
  int pool = prof_mem_pool("arena");
  if (pool < 1 || prof_mem_pool("arena") != pool) return 12;
  prof_mem_alloc(pool + 7, arena, 1); /* bad pool: ignored and counted */
  prof_mem_alloc(pool, NULL, 1);      /* NULL: ignored and counted */
  for (int i = 0; i < 10; i++) {
    prof_start();
    prof_range_push("work");
    keep_growing();
    churn();
    burst(extra);
    pool_user(pool, i);
    prof_range_pop();
    prof_stop();
    usleep(25000);
  }
  linked_leak();
  return prof_shutdown() == 0 ? 0 : 13;
}
