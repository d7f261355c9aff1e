/* crash_steps.c — a profiled training loop that dies in the middle of a
 * step, for the host-safety test: 100 steps of about 2 ms, and step 60 ends
 * the program with the way named by argv[1] (abort, segv, fpe, bus, ill, or
 * exit: exit(3) with a line still in the stdout buffer). Prints the steps
 * it finished, so the test can compare with the trace.
 */
#include <mlprof.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int *volatile nowhere;
static volatile int zero;

static void die(const char *how) {
  if (strcmp(how, "abort") == 0) abort();
  if (strcmp(how, "segv") == 0) *nowhere = 1;
  if (strcmp(how, "fpe") == 0) printf("%d\n", 7 / zero);
  if (strcmp(how, "bus") == 0) raise(SIGBUS);
  if (strcmp(how, "ill") == 0) __builtin_trap();
  printf("exit 3, this line still buffered\n"); /* "exit": a normal exit with a code of its own */
  exit(3);
}

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "abort";
  struct timespec ms2 = {0, 2000000L};
  for (int step = 0; step < 100; step++) {
    prof_start();
    prof_range_push("work");
    nanosleep(&ms2, NULL);
    prof_range_pop();
    if (step == 60) {
      printf("finished %d steps\n", step);
      if (strcmp(how, "exit") != 0) fflush(stdout);
      die(how);
    }
    prof_stop();
  }
  return 0;
}
