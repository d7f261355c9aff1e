/* long_steps.c — a long training loop for the bounded-trace test
 * (tests/long_runs.sh, MLPROF_MAX_MB): argv[1] steps (default 60000), each
 * a "load" range (data) and a "forward" range (compute) of some
 * microseconds of work whose length varies from step to step, and a
 * "loss" counter. With a
 * second argument it prints "ready" after that many steps and keeps going
 * (slowly) until it is killed.
 */
#include <mlprof.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

/* About `units` short loops of work. */
static void work(unsigned units) {
  uint64_t x = sink;
  for (unsigned i = 0; i < units * 512; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  sink = x;
}

int main(int argc, char **argv) {
  long steps = argc > 1 ? atol(argv[1]) : 60000;
  long ready = argc > 2 ? atol(argv[2]) : -1;
  uint32_t rnd = 12345;
  struct timespec ms1 = {0, 1000000L};
  for (long s = 0; s < steps || ready >= 0; s++) {
    rnd = rnd * 1103515245u + 12345u;
    prof_start();
    prof_range_push_cat("load", PROF_CAT_DATA);
    work(2 + (rnd >> 28));
    prof_range_pop();
    prof_range_push_cat("forward", PROF_CAT_COMPUTE);
    work(8 + ((rnd >> 20) & 15));
    prof_range_pop();
    prof_counter("loss", 1.0 / (double)(s + 1));
    prof_stop();
    if (s == ready) {
      printf("ready\n");
      fflush(stdout);
    }
    if (ready >= 0 && s > ready) nanosleep(&ms1, NULL);
  }
  prof_shutdown();
  return 0;
}
