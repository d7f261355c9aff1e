/* cmd_resume.c — `mlprof resume PID`: let a job paused by MLPROF_BREAK_AT
 * continue (through the live page; SIGCONT when it has none). */
#include <signal.h>
#include <time.h>

#include "cli.h"
#include "cmd_live.h"

static int run(int argc, char **argv) {
  const char *pid_s = NULL;
  int npos;
  const cli_opt opts[] = {{NULL, 0, NULL, NULL}};
  if (cli_parse("resume", argc, argv, opts, &pid_s, 1, &npos)) return CLI_USAGE;
  int pid = live_pid_arg("resume", npos == 1 ? pid_s : NULL);
  if (pid < 0) return CLI_USAGE;
  prof__live_page *p = prof__livepage_open(pid, NULL, 0);
  if (p && !live_own_job(pid, p, 0)) {
    cli_error("resume", "pid %d is not a running mlprof job of this user", pid);
    prof__livepage_close(p);
    return CLI_BADTRACE;
  }
  if (!p) { /* no page: the job stopped itself with SIGSTOP */
    if (!live_own_job(pid, NULL, 1)) {
      cli_error("resume", "pid %d is not a stopped mlprof job of this user", pid);
      return CLI_BADTRACE;
    }
    if (kill(pid, SIGCONT) != 0) {
      cli_error("resume", "pid %d: no live page and cannot signal it", pid);
      return CLI_BADTRACE;
    }
    printf("sent SIGCONT to pid %d\n", pid);
    return CLI_OK;
  }
  uint64_t paused = __atomic_load_n(&p->ctl.paused_step, __ATOMIC_ACQUIRE);
  if (!paused) printf("pid %d is not paused; it will not wait at its next break\n", pid);
  __atomic_fetch_add(&p->ctl.resume_seq, 1, __ATOMIC_ACQ_REL);
  struct timespec ts = {0, 20 * 1000 * 1000};
  for (int i = 0; paused && i < 250 && __atomic_load_n(&p->ctl.paused_step, __ATOMIC_ACQUIRE); i++)
    nanosleep(&ts, NULL);
  if (paused) printf("pid %d resumed at step %llu\n", pid, (unsigned long long)(paused - 1));
  prof__livepage_close(p);
  return CLI_OK;
}

const mlprof_cmd mlprof_cmd_resume = {
    "resume", "let a job paused by MLPROF_BREAK_AT continue",
    "usage: mlprof resume PID\n\n"
    "A job run with MLPROF_BREAK_AT=step:N writes <trace>.snapshot.txt at step N\n"
    "and waits (attach a debugger now); this lets it continue.\n",
    run};
