/* report_host.c — a profiled program that watches what the profiler's
 * reports do to it, for tests/report_paths.sh.
 *
 * usage: report_host STEPS [exec-in DIR]
 *
 * Runs STEPS empty steps (one range each). A SIGCHLD handler counts the
 * signals; an exit handler registered before prof_init (so it runs after
 * the profiler's own) prints one line on stdout:
 *   sigchld=N wait=none|child|reaped libdw=0|1
 * wait: what waitpid(-1, WNOHANG) finds (no child at all, a running child,
 * or one it reaped); libdw: whether libdw is mapped into the process.
 * REPORT_HOST_IGNCHLD=1 sets SIGCHLD to SIG_IGN instead of the handler;
 * REPORT_HOST_SUBREAPER=1 makes the program a child subreaper.
 * With "exec-in DIR", after its steps the program makes DIR, moves there
 * and execs itself (same pid) to run STEPS more steps.
 */
#include <errno.h>
#include <mlprof.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t nchld;

static void on_chld(int sig) {
  (void)sig;
  nchld++;
}

static int libdw_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "/libdw")) found = 1;
  if (f) fclose(f);
  return found;
}

static void report(void) {
  int st;
  pid_t p = waitpid(-1, &st, WNOHANG);
  const char *w = p > 0 ? "reaped" : p == 0 ? "child" : errno == ECHILD ? "none" : "error";
  printf("sigchld=%d wait=%s libdw=%d\n", (int)nchld, w, libdw_mapped());
  fflush(stdout);
}

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 10;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = getenv("REPORT_HOST_IGNCHLD") ? SIG_IGN : on_chld;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  if (getenv("REPORT_HOST_SUBREAPER")) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  atexit(report); /* before prof_init: runs after the profiler's exit handler */
  prof_init(NULL);
  for (int i = 0; i < steps; i++) {
    prof_start();
    prof_range_push("work");
    prof_range_pop();
    prof_stop();
  }
  if (argc > 3 && strcmp(argv[2], "exec-in") == 0) {
    mkdir(argv[3], 0700);
    if (chdir(argv[3]) != 0) return 2;
    char *again[] = {argv[0], argv[1], NULL};
    execv("/proc/self/exe", again);
    return 3;
  }
  return 0;
}
