/* crash.c — the crash signal handlers, and the close at _exit and exec (see
 * crash.h).
 *
 * Everything here runs in signal context: only atomics, sigaction, raise,
 * clock_gettime, nanosleep and syscall — no malloc, no stdio, no locks.
 * The writer thread does the work (it takes no signals); the crashing
 * thread only waits for it, bounded, so a writer stuck behind a lock the
 * crashing thread holds (a heap lock inside malloc's abort) costs a few
 * seconds, never a hang.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "clock.h"
#include "crash.h"
#include "modules.h"
#include "session.h"

#define NSIG_CRASH 5
static const int crash_sigs[NSIG_CRASH] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static const char *const crash_names[NSIG_CRASH] = {"SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL"};
static struct sigaction prev[NSIG_CRASH]; /* the program's dispositions before us */
static int installed[NSIG_CRASH];

static pid_t own_pid; /* the session's process (prof__crash_install) */

static struct {
  int ending;      /* PROF_END_*: claimed by the first _exit or exec */
  int exit_status; /* the _exit status, once ending */
  int sig; /* claimed by the first crashing thread */
  int code;
  uint64_t addr, pc, tid, ticks;
  int recorded; /* the fields above are complete */
  int flushed;  /* the flush attempt ended (either way) */
} C;

/* The live page is removed at once: the process is going away. */
const char *prof__crash_name(int sig) {
  for (int i = 0; i < NSIG_CRASH; i++)
    if (crash_sigs[i] == sig) return crash_names[i];
  return NULL;
}

int prof__crash_signal(void) {
  return __atomic_load_n(&C.recorded, __ATOMIC_ACQUIRE) ? C.sig : 0;
}

static uint64_t context_pc(void *uc) {
  const ucontext_t *u = uc;
  if (!u) return 0;
#if defined(__x86_64__)
  return (uint64_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uint64_t)u->uc_mcontext.pc;
#else
  return 0;
#endif
}

static int index_of(int sig) {
  for (int i = 0; i < NSIG_CRASH; i++)
    if (crash_sigs[i] == sig) return i;
  return -1;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

static void on_crash(int sig, siginfo_t *si, void *uc) {
  int saved_errno = errno;
  int i = index_of(sig);
  int none = 0;
  if (__atomic_compare_exchange_n(&C.sig, &none, sig, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    C.code = si ? si->si_code : 0;
    C.addr = si && si->si_code > 0 ? (uint64_t)(uintptr_t)si->si_addr : 0; /* a fault's address */
    C.pc = context_pc(uc);
    C.tid = (uint64_t)syscall(SYS_gettid);
    C.ticks = prof__ticks();
    __atomic_store_n(&C.recorded, 1, __ATOMIC_RELEASE);
    prof__modules_crash();
    prof__writer_crash_flush(5000, 20000);
    __atomic_store_n(&C.flushed, 1, __ATOMIC_RELEASE);
  } else {
    /* Another thread crashed first: let it finish the flush (bounded). */
    for (int k = 0; k < 25000 && !__atomic_load_n(&C.flushed, __ATOMIC_ACQUIRE); k++) sleep_ms(1);
  }
  /* Give the signal back and deliver it again. A fault re-executes the
   * instruction when we return; a sent signal (abort, raise, kill) is sent
   * again, pending until this handler returns. */
  if (i >= 0) sigaction(sig, &prev[i], NULL);
  if (!si || si->si_code <= 0) raise(sig);
  errno = saved_errno;
}

void prof__crash_install(void) {
  own_pid = (pid_t)syscall(SYS_getpid);
  for (int i = 0; i < NSIG_CRASH; i++) {
    struct sigaction cur;
    if (installed[i] || sigaction(crash_sigs[i], NULL, &cur) != 0) continue;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) continue; /* the program's choice */
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_crash) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask); /* nothing interrupts the flush */
    if (sigaction(crash_sigs[i], &sa, &prev[i]) == 0) installed[i] = 1;
  }
}

void prof__crash_uninstall(void) {
  for (int i = 0; i < NSIG_CRASH; i++) {
    struct sigaction cur;
    if (!installed[i]) continue;
    installed[i] = 0;
    if (sigaction(crash_sigs[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_crash)
      sigaction(crash_sigs[i], &prev[i], NULL);
  }
}

int prof__crash_end_now(int how, int status) {
  if (!own_pid || (pid_t)syscall(SYS_getpid) != own_pid) return 0; /* a child's _exit or exec */
  int none = 0;
  if (__atomic_load_n(&C.sig, __ATOMIC_ACQUIRE) ||
      !__atomic_compare_exchange_n(&C.ending, &none, how, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return 0;
  __atomic_store_n(&C.exit_status, status, __ATOMIC_RELEASE); /* read after the writer's close */
  prof__modules_crash();
  return prof__writer_crash_flush(2000, 20000) == 0;
}

int prof__crash_ended(int *status) {
  int how = __atomic_load_n(&C.ending, __ATOMIC_ACQUIRE);
  if (how) *status = __atomic_load_n(&C.exit_status, __ATOMIC_ACQUIRE);
  return how;
}

size_t prof__crash_footer(prof__kv *kv, char (*vals)[32], size_t max) {
  if (!prof__crash_signal() || max < 7) return 0;
  const char *name = prof__crash_name(C.sig);
  snprintf(vals[0], 32, "%s", name ? name : "?");
  snprintf(vals[1], 32, "%d", C.sig);
  snprintf(vals[2], 32, "%d", C.code);
  snprintf(vals[3], 32, "0x%llx", (unsigned long long)C.addr);
  snprintf(vals[4], 32, "0x%llx", (unsigned long long)C.pc);
  snprintf(vals[5], 32, "%llu", (unsigned long long)C.tid);
  snprintf(vals[6], 32, "%llu", (unsigned long long)prof__ticks_to_ns(C.ticks));
  static const char *const keys[7] = {"crash.signal", "crash.signo", "crash.code", "crash.addr",
                                      "crash.pc",     "crash.tid",   "crash.ns"};
  for (int k = 0; k < 7; k++) {
    kv[k].key = keys[k];
    kv[k].value = vals[k];
  }
  return 7;
}
