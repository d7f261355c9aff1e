/* ctl.c — control of a running job at step boundaries: on-demand capture
 * (a signal, SIGUSR2 by default, or `mlprof trigger` through the live page)
 * and MLPROF_BREAK_AT (write a snapshot, then wait for `mlprof resume`).
 *
 * The signal handler only sets a flag; the next prof_start() turns it into
 * a capture request, so nothing unsafe runs in signal context.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/session.h"
#include "model.h"

static volatile sig_atomic_t sig_pending;
static uint64_t trigger_default = 10;
static uint64_t break_at = UINT64_MAX;

static void on_trigger_signal(int s) {
  (void)s;
  sig_pending = 1;
}

/* MLPROF_TRIGGER_SIGNAL: USR1, USR2 (default), a number, or 0/none. */
static int trigger_signal(void) {
  const char *v = prof__env("TRIGGER_SIGNAL");
  if (!v) return SIGUSR2;
  if (strncmp(v, "SIG", 3) == 0) v += 3;
  if (strcmp(v, "USR1") == 0) return SIGUSR1;
  if (strcmp(v, "USR2") == 0) return SIGUSR2;
  if (strcmp(v, "none") == 0 || strcmp(v, "off") == 0) return 0;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 0 || n >= NSIG || n == SIGKILL || n == SIGSTOP) {
    fprintf(stderr, "mlprof: ignoring MLPROF_TRIGGER_SIGNAL='%s'; using SIGUSR2\n", v);
    return SIGUSR2;
  }
  return (int)n;
}

static uint64_t env_u64(const char *name, const char *prefix, uint64_t dflt) {
  const char *v = prof__env(name);
  if (!v) return dflt;
  if (prefix && strncmp(v, prefix, strlen(prefix)) == 0) v += strlen(prefix);
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *end || *v == '-') {
    fprintf(stderr, "mlprof: ignoring MLPROF_%s='%s'\n", name, prof__env(name));
    return dflt;
  }
  return n;
}

void prof__ctl_start(void) {
  trigger_default = env_u64("TRIGGER_STEPS", NULL, 10);
  if (!trigger_default) trigger_default = 10;
  break_at = env_u64("BREAK_AT", "step:", UINT64_MAX);
  int sig = trigger_signal();
  if (!sig) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_trigger_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* The handler stays installed after shutdown: a late signal must not kill
 * the program (the default action of SIGUSR2). */
void prof__ctl_stop(void) {}

/* Snapshot, then wait until `mlprof resume` bumps resume_seq (or SIGCONT
 * when there is no live page). */
static void do_break(uint64_t step) {
  char snap[4200] = "";
  const char *trace = prof_trace_path();
  int rc = prof_snapshot(NULL);
  if (trace) snprintf(snap, sizeof snap, "%s.snapshot.txt", trace);
  prof__live_page *p = prof__live_self();
  int pid = (int)getpid();
  fprintf(stderr, "mlprof: paused at step %llu (pid %d); snapshot %s%s; resume with: mlprof resume %d\n",
          (unsigned long long)step, pid, rc == 0 ? snap : "not written: ", rc == 0 ? "" : prof_strerror(rc),
          pid);
  if (!p) {
    raise(SIGSTOP);
    return;
  }
  /* The page keeps a prefix of a very long path. */
  if (snprintf(p->ctl.last_snapshot, sizeof p->ctl.last_snapshot, "%s", rc == 0 ? snap : "") >=
      (int)sizeof p->ctl.last_snapshot)
    p->ctl.last_snapshot[sizeof p->ctl.last_snapshot - 1] = 0;
  uint32_t seq = __atomic_load_n(&p->ctl.resume_seq, __ATOMIC_ACQUIRE);
  __atomic_store_n(&p->ctl.paused_step, step + 1, __ATOMIC_RELEASE);
  struct timespec ts = {0, 20 * 1000 * 1000};
  while (__atomic_load_n(&p->ctl.resume_seq, __ATOMIC_ACQUIRE) == seq) nanosleep(&ts, NULL);
  __atomic_store_n(&p->ctl.paused_step, 0, __ATOMIC_RELEASE);
  fprintf(stderr, "mlprof: resumed at step %llu\n", (unsigned long long)step);
}

uint64_t prof__model_step(int begin, uint64_t step, uint64_t ticks) {
  prof__live_step(begin, step, prof__ticks_to_ns(ticks));
  if (!begin) return 0;
  if (PROF_UNLIKELY(step == break_at)) do_break(step);
  uint64_t n = 0;
  prof__live_page *p = prof__live_self();
  if (p && __atomic_load_n(&p->ctl.trigger_steps, __ATOMIC_RELAXED))
    n = __atomic_exchange_n(&p->ctl.trigger_steps, 0, __ATOMIC_ACQ_REL);
  if (PROF_UNLIKELY(sig_pending)) {
    sig_pending = 0;
    if (!n) n = trigger_default;
  }
  return n;
}
