/* sig_host.c — a program with signal handlers of its own, for the
 * real-programs test: SIGPROF from setitimer(ITIMER_PROF) while two threads
 * burn CPU, and SIGUSR2 sent to itself. It counts what each handler got
 * and prints the counts, which must be the same with and without mlprof:
 * a profiler that shares SIGPROF or takes SIGUSR2 changes them.
 *
 * The run ends after a fixed number of ITIMER_PROF signals, so the counts
 * do not depend on timing (one more may already be on its way to the other
 * thread when the handler stops the timer: signals past the count are not
 * counted). When the profiler is preloaded, prof_init() is
 * called after the handlers exist, as a program using the API would.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define WANT_PROF 25

static volatile sig_atomic_t prof_itimer, prof_other, usr2;

static void on_prof(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  if (si && si->si_code == SI_KERNEL) { /* what setitimer sends */
    if (prof_itimer >= WANT_PROF) return; /* raced with the timer's end */
    if (++prof_itimer == WANT_PROF) {
      struct itimerval off;
      memset(&off, 0, sizeof off);
      setitimer(ITIMER_PROF, &off, NULL);
    }
  } else {
    prof_other++;
  }
}

static void on_usr2(int sig) {
  (void)sig;
  usr2++;
}

static volatile double sink;

static void *burn(void *arg) {
  (void)arg;
  double x = 1.0;
  while (prof_itimer < WANT_PROF)
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  signal(SIGUSR2, on_usr2);

  int (*init)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "prof_init");
  if (init) init(NULL);

  raise(SIGUSR2);
  kill(getpid(), SIGUSR2);

  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_interval.tv_usec = 5000;
  it.it_value.tv_usec = 5000;
  setitimer(ITIMER_PROF, &it, NULL);
  pthread_t t;
  pthread_create(&t, NULL, burn, NULL);
  burn(NULL);
  pthread_join(t, NULL);

  printf("SIGPROF from ITIMER_PROF: %d\n", (int)prof_itimer);
  printf("SIGPROF from elsewhere: %d\n", (int)prof_other);
  printf("SIGUSR2: %d\n", (int)usr2);
  return 0;
}
