/* exec_self.c — a program that execs itself, for the trace-names test: each
 * image keeps the pid (and so the default trace name). `exec_self N` burns
 * a little CPU, prints one line, then execs /proc/self/exe with N-1 until N
 * is 0, which exits with status 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static void burn(double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  double x = 1.0;
  do {
    for (int i = 0; i < 10000; i++) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
  sink = x;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  burn(0.05);
  printf("image %d\n", n);
  fflush(stdout);
  if (n <= 0) return 3;
  char next[16];
  snprintf(next, sizeof next, "%d", n - 1);
  execl("/proc/self/exe", argv[0], next, (char *)NULL);
  perror("exec_self: exec");
  return 127;
}
