/* crash_steps.c — a profiled training loop that dies in the middle of a
 * step, for the host-safety test: 100 steps of about 2 ms, and step 60 ends
 * the program with the way named by argv[1] (abort, segv, fpe, bus, ill;
 * exit: exit(3) with a line still in the stdout buffer; _exit: _exit(5),
 * which runs no exit handler; sigexit: a SIGTERM handler that calls
 * _exit(6); exec: the image becomes /bin/true). vfork: step 30 starts a
 * child with vfork that fails to exec and calls _exit(7); execfail: step 30
 * fails to exec a missing program itself; both then run all 100 steps.
 * Prints the steps it finished, so the test can compare with the trace.
 */
#include <mlprof.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int *volatile nowhere;
static volatile int zero;

static void on_term(int sig) {
  (void)sig;
  _exit(6);
}

/* A vforked child that cannot exec ends with _exit in the parent's memory. */
static void vfork_child(void) {
  pid_t pid = vfork();
  if (pid == 0) {
    execl("/nonexistent/program", "program", (char *)NULL);
    _exit(7);
  }
  int st = 0;
  if (pid > 0) waitpid(pid, &st, 0);
  printf("vfork child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void die(const char *how) {
  if (strcmp(how, "_exit") == 0) _exit(5);
  if (strcmp(how, "exec") == 0) execl("/bin/true", "true", (char *)NULL);
  if (strcmp(how, "sigexit") == 0) {
    signal(SIGTERM, on_term);
    raise(SIGTERM);
  }
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
    int goes_on = strcmp(how, "vfork") == 0 || strcmp(how, "execfail") == 0;
    if (step == 30 && strcmp(how, "vfork") == 0) vfork_child();
    if (step == 30 && strcmp(how, "execfail") == 0 && execl("/nonexistent/program", "program", (char *)NULL) != 0)
      printf("exec failed\n");
    if (step == 60 && !goes_on) {
      printf("finished %d steps\n", step);
      if (strcmp(how, "exit") != 0) fflush(stdout);
      die(how);
    }
    prof_stop();
  }
  return 0;
}
