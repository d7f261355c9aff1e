/* inline_chain.c — a program for the symbol tests (tests/inline_chain.sh):
 * its hot loop is inlined two levels deep (main -> model_forward ->
 * layer_kernel, both always_inline), so a report must show the whole chain
 * of inlined frames; a stripped copy of it must still group its addresses
 * by function. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline __attribute__((always_inline)) double layer_kernel(double x, int n) {
  for (int i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; /* HOT LINE */
  return x;
}

static inline __attribute__((always_inline)) double model_forward(double x, int layers) {
  for (int l = 0; l < layers; l++) x = layer_kernel(x, 50000) * 0.999 + 0.001;
  return x;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.6, x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < seconds) x = model_forward(x, 4);
  printf("%s\n", x > 0 ? "ok" : "odd");
  return 0;
}
