/* ctl.c — control of a running job at step boundaries: on-demand capture
 * (`mlprof trigger` through the live page, or a signal the user names in
 * MLPROF_TRIGGER_SIGNAL) and MLPROF_BREAK_AT (write a snapshot, then wait
 * for `mlprof resume`).
 *
 * No signal is taken by default: signals belong to the program. A named
 * trigger signal must be SIGUSR1, SIGUSR2 or a realtime signal, and is left
 * alone when the program already handles it. The handler only sets a flag;
 * the next prof_start() turns it into a capture request, so nothing unsafe
 * runs in signal context. It stays installed after shutdown (a late signal
 * must not kill the program) and is given back when libmlprof is unloaded.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/crash.h"
#include "core/producer.h"
#include "live.h"

static volatile sig_atomic_t sig_pending;
static uint64_t trigger_default = 10;
static uint64_t break_at = UINT64_MAX;

static int trigger_sig;              /* the signal we handle, 0: none */
static struct sigaction trigger_old; /* its disposition before us */

static void on_trigger_signal(int s) {
  (void)s;
  sig_pending = 1;
}

/* "N", "RTMIN+N" or "RTMAX-N" (after an optional "SIG"): a realtime signal
 * number, or 0 when `v` is not one. */
static int realtime_signal(const char *v) {
  int base = 0, dir = 1;
  if (strncmp(v, "RTMIN", 5) == 0) base = SIGRTMIN, v += 5;
  else if (strncmp(v, "RTMAX", 5) == 0) base = SIGRTMAX, v += 5, dir = -1;
  long off = 0;
  if (base && *v) {
    if (*v != (dir > 0 ? '+' : '-')) return 0;
    v++;
  }
  if (!base || *v) {
    char *end;
    errno = 0;
    off = strtol(v, &end, 10);
    if (errno || end == v || *end) return 0;
  }
  long sig = base ? base + dir * off : off;
  return sig >= SIGRTMIN && sig <= SIGRTMAX ? (int)sig : 0;
}

/* MLPROF_TRIGGER_SIGNAL: USR1, USR2, RTMIN+N, RTMAX-N or such a signal's
 * number (with or without "SIG"); unset, empty, 0, none or off: no signal. */
static int trigger_signal(void) {
  const char *raw = prof__env("TRIGGER_SIGNAL");
  if (!raw || !*raw) return 0;
  const char *v = strncmp(raw, "SIG", 3) == 0 ? raw + 3 : raw;
  if (strcmp(v, "none") == 0 || strcmp(v, "off") == 0 || strcmp(v, "0") == 0) return 0;
  if (strcmp(v, "USR1") == 0 || strcmp(v, "10") == 0) return SIGUSR1;
  if (strcmp(v, "USR2") == 0 || strcmp(v, "12") == 0) return SIGUSR2;
  int sig = realtime_signal(v);
  if (!sig)
    fprintf(stderr, "mlprof: MLPROF_TRIGGER_SIGNAL='%s' is not allowed (USR1, USR2 or a realtime signal, "
            "RTMIN+N or %d..%d); no trigger signal (mlprof trigger still works)\n", raw, SIGRTMIN, SIGRTMAX);
  return sig;
}

static int trigger_handler_is_ours(void) {
  struct sigaction cur;
  return trigger_sig && sigaction(trigger_sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
         cur.sa_handler == on_trigger_signal;
}

/* Take `sig` unless the program handles it already. */
static void take_trigger_signal(int sig) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) return;
  if (cur.sa_handler == on_trigger_signal && !(cur.sa_flags & SA_SIGINFO)) return; /* ours already */
  if ((cur.sa_flags & SA_SIGINFO) || (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)) {
    fprintf(stderr, "mlprof: signal %d (MLPROF_TRIGGER_SIGNAL) already has a handler in the program; "
            "it is left alone (mlprof trigger still works)\n", sig);
    return;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_trigger_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, &trigger_old) == 0) trigger_sig = sig;
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
  if (sig) take_trigger_signal(sig);
}

/* The handler stays installed after shutdown: a late signal must not kill
 * the program (the default action of SIGUSR1/2 and realtime signals). */
void prof__ctl_stop(void) {}

/* The process ends (libmlprof is never unloaded: -z nodelete): give the
 * signal back, unless the program installed its own handler since. */
__attribute__((destructor)) static void ctl_unload(void) {
  (void)prof__session_exit();
  prof__crash_uninstall();
  if (trigger_handler_is_ours()) sigaction(trigger_sig, &trigger_old, NULL);
  trigger_sig = 0;
}

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

uint64_t prof__ctl_step(int begin, uint64_t step, uint64_t ticks) {
  prof__live_step(begin, step, ticks);
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
