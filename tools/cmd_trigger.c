/* cmd_trigger.c — `mlprof trigger PID [--steps N]`: ask a running job to
 * record its next N steps into a trace of their own (with its report),
 * through the live page; waits for the capture and prints its path. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_live.h"

static int wait_capture(prof__live_page *p, int pid, const char *before, double timeout) {
  prof__live_page v;
  struct timespec ts = {0, 50 * 1000 * 1000};
  for (double waited = 0; timeout <= 0 || waited < timeout; waited += 0.05) {
    int alive = live_alive(pid);
    if (prof__livepage_read(p, &v) == 0 && v.bg.last_capture[0] && strcmp(v.bg.last_capture, before) != 0) {
      printf("captured: %s\nreport: %s.report.txt\n", v.bg.last_capture, v.bg.last_capture);
      return CLI_OK;
    }
    if (!alive) {
      cli_error("trigger", "pid %d ended before the capture finished", pid);
      return CLI_BADTRACE;
    }
    nanosleep(&ts, NULL);
  }
  cli_error("trigger", "no capture finished within %.0f s (is the job still taking steps?)", timeout);
  return CLI_BADTRACE;
}

static int run(int argc, char **argv) {
  const char *pid_s = NULL, *steps_s = NULL, *timeout_s = NULL;
  int no_wait = 0, npos;
  const cli_opt opts[] = {{"steps", 'n', &steps_s, NULL},
                          {"timeout", 't', &timeout_s, NULL},
                          {"no-wait", 0, NULL, &no_wait},
                          {NULL, 0, NULL, NULL}};
  if (cli_parse("trigger", argc, argv, opts, &pid_s, 1, &npos)) return CLI_USAGE;
  int pid = live_pid_arg("trigger", npos == 1 ? pid_s : NULL);
  if (pid < 0) return CLI_USAGE;
  char *end = NULL;
  long steps = steps_s ? strtol(steps_s, &end, 10) : 10;
  if ((steps_s && *end) || steps < 1 || steps > 1000000) {
    cli_error("trigger", "--steps must be a number from 1 to 1000000");
    return CLI_USAGE;
  }
  prof__live_page *p = live_attach_own("trigger", pid);
  if (!p) return CLI_BADTRACE;
  char before[256];
  memcpy(before, p->bg.last_capture, sizeof before);
  before[sizeof before - 1] = 0;
  __atomic_store_n(&p->ctl.trigger_steps, (uint32_t)steps, __ATOMIC_RELEASE);
  printf("pid %d will record its next %ld steps\n", pid, steps);
  fflush(stdout);
  int rc = no_wait ? CLI_OK : wait_capture(p, pid, before, timeout_s ? atof(timeout_s) : 0);
  prof__livepage_close(p);
  return rc;
}

const mlprof_cmd mlprof_cmd_trigger = {
    "trigger", "record the next N steps of a running job (trace + report)",
    "usage: mlprof trigger PID [--steps N] [--timeout SECONDS] [--no-wait]\n\n"
    "Asks the job to record its next N steps (default 10) into\n"
    "<trace>.trigger<K>.mlpt, complete on its own, with its report beside it,\n"
    "and waits until it is written (prints the path). The request goes through\n"
    "the live page; no signal is sent. A job started with MLPROF_TRIGGER_SIGNAL\n"
    "(USR1, USR2 or RTMIN+N) also records MLPROF_TRIGGER_STEPS steps on that signal.\n"
    "  -n, --steps N        steps to record (1..1000000, default 10)\n"
    "  -t, --timeout S      give up waiting after S seconds (default: no limit)\n"
    "      --no-wait        return once the request is made\n",
    run};
