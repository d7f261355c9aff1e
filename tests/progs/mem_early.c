/* mem_early.c — a program linked against libmlprof.so whose heap is made
 * partly before prof_init(): 16 MiB in early_block() and 1000 small blocks
 * in early_small(), all live when recording begins. Step 0 holds 8 MiB
 * for a moment in step0_peak() and frees it before the step ends (the
 * heap peak, 24 MiB, is reached inside step 0); steps 1-5 make only small
 * temporaries. The 16 MiB block is freed after the steps. Exit status 0
 * when every API call behaved.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlprof.h"

#define NOINLINE __attribute__((noinline))
#define MIB (1024 * 1024)

void *volatile sink;
static void *small[1000];

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

NOINLINE void *early_block(void) {
  char *p = malloc(16 * MIB);
  if (p) memset(p, 1, 16 * MIB);
  return p;
}

NOINLINE void early_small(void) {
  for (int i = 0; i < 1000; i++) small[i] = malloc(64);
}

NOINLINE void step0_peak(void) {
  char *p = malloc(8 * MIB);
  if (p) memset(p, 2, 8 * MIB);
  sink = p;
  sleep_ms(2);
  free(p);
}

int main(void) {
  void *keep = early_block();
  early_small();
  if (!keep || prof_init(NULL) != 0) return 11;
  sleep_ms(30); /* the writer reads the heap with the 16 MiB */
  for (int i = 0; i < 6; i++) {
    if (prof_start() != 0) return 12;
    if (i == 0) step0_peak();
    for (int k = 0; k < 10; k++) free(sink = malloc(100));
    sleep_ms(40); /* longer than the writer period: it reads the heap after the free */
    if (prof_stop() != 0) return 13;
  }
  free(keep);
  for (int i = 0; i < 1000; i++) free(small[i]);
  return prof_shutdown() == 0 ? 0 : 14;
}
