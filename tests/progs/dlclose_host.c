/* dlclose_host.c — loads libmlprof.so with dlopen, profiles a few steps of
 * CPU work with sampling and a trigger signal on, unloads it with dlclose,
 * then checks that no signal handler of the library outlived it: every
 * signal's disposition is what it was before dlopen, more CPU work runs
 * (a timer left behind would fire into unmapped code or kill), and each
 * signal the library had taken, raised in a child, acts by its default
 * action instead of jumping into unmapped code (SIGSEGV).
 *
 * usage: dlclose_host LIBMLPROF_SO TRACE_PATH
 * Prints one line per problem and exits 1, or prints "ok" and exits 0.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static void burn(double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  double x = 1.0;
  do {
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
  sink = x;
}

static void *handler_of(int sig) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) return NULL;
  return (cur.sa_flags & SA_SIGINFO) ? (void *)cur.sa_sigaction : (void *)cur.sa_handler;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: dlclose_host LIBMLPROF_SO TRACE_PATH\n");
    return 2;
  }
  setenv("MLPROF_OUTPUT", argv[2], 1);
  setenv("MLPROF_REPORT", "0", 1);
  setenv("MLPROF_SAMPLE_HZ", "1000", 1);
  setenv("MLPROF_TRIGGER_SIGNAL", "USR1", 1);
  void *before[NSIG];
  for (int s = 1; s < NSIG; s++) before[s] = handler_of(s);

  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlclose_host: %s\n", dlerror());
    return 2;
  }
  int (*init)(const void *) = (int (*)(const void *))dlsym(lib, "prof_init");
  int (*start)(void) = (int (*)(void))dlsym(lib, "prof_start");
  int (*stop)(void) = (int (*)(void))dlsym(lib, "prof_stop");
  if (!init || !start || !stop || init(NULL) != 0) {
    fprintf(stderr, "dlclose_host: cannot start the profiler\n");
    return 2;
  }
  int taken[NSIG], ntaken = 0;
  for (int s = 1; s < NSIG; s++)
    if (handler_of(s) != before[s]) taken[ntaken++] = s;
  for (int k = 0; k < 5; k++) {
    start();
    burn(0.04);
    stop();
  }
  if (dlclose(lib) != 0) {
    fprintf(stderr, "dlclose_host: dlclose: %s\n", dlerror());
    return 2;
  }

  int bad = 0;
  if (ntaken < 2) {
    printf("the library took %d signals; expected the sampling and the trigger signal\n", ntaken);
    bad = 1;
  }
  for (int s = 1; s < NSIG; s++)
    if (handler_of(s) != before[s]) {
      printf("signal %d still has the library's handler after dlclose\n", s);
      bad = 1;
    }
  burn(0.2); /* a timer left running would end this process here */
  for (int i = 0; i < ntaken; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      raise(taken[i]);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st) && WTERMSIG(st) != taken[i]) {
      printf("raising signal %d after dlclose ended the process by signal %d\n", taken[i], WTERMSIG(st));
      bad = 1;
    }
  }
  if (!bad) printf("ok (%d signals given back)\n", ntaken);
  return bad;
}
