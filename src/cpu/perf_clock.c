/* perf_clock.c — a thread's CPU clock as a perf software event that
 * signals that thread at exact periods, for the sampler (sampler.c).
 *
 * POSIX CPU-time timers are checked at scheduler ticks only: asked for
 * 1 kHz, a thread gets one signal per tick (250 Hz is common) carrying the
 * missed periods as overruns, and the sample lands wherever the thread was
 * at the tick, which under contention is not where its CPU time went. The
 * kernel's task-clock event (PERF_COUNT_SW_TASK_CLOCK, the thread's own
 * CPU time) runs a high-resolution timer while the thread runs and
 * overflows after exactly one period of it, as `perf record -e
 * task-clock` samples. Here it is opened per thread (pid = tid, any CPU),
 * its overflow delivered as the sampler's realtime signal to that thread
 * alone (F_SETOWN_EX with F_OWNER_TID, F_SETSIG, O_ASYNC), with no ring
 * buffer. Each overflow also disables the event (an event limit of one,
 * PERF_EVENT_IOC_REFRESH): the handler enables it again once it has taken
 * its sample, so at most one signal per thread is ever queued, even for a
 * thread that blocks the signal for long.
 *
 * Kernel time is excluded from the overflow (exclude_kernel: allowed at
 * any perf_event_paranoid below 3, and no signal can be raised while the
 * thread is inside execve), but not from the count: the handler reads the
 * count and weighs its sample by the periods since the last one, so time
 * in system calls is not lost but charged to the thread's next sample.
 * Everything here but the open and the close is async-signal-safe (plain
 * system calls).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu.h"

static int open_event(int tid, uint64_t period_ns) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = period_ns;
  a.disabled = 1;       /* enabled by the first refresh, once the signal is routed */
  a.exclude_kernel = 1; /* see the file comment */
  a.exclude_hv = 1;
  return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int prof__perf_clock_open(int tid, int sig, uint64_t period_ns) {
  int fd = open_event(tid, period_ns);
  if (fd < 0) return -1;
  struct f_owner_ex owner = {F_OWNER_TID, tid};
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, sig) != 0 ||
      fcntl(fd, F_SETFL, fl | O_ASYNC) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int prof__perf_clock_probe(char *why, size_t n) {
  int fd = open_event((int)syscall(SYS_gettid), 10000000);
  if (fd >= 0) {
    close(fd);
    return 1;
  }
  int e = errno;
  int paranoid = -1;
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
  if (f) {
    if (fscanf(f, "%d", &paranoid) != 1) paranoid = -1;
    fclose(f);
  }
  if (paranoid >= 0)
    snprintf(why, n, "perf_event_open: %s (kernel.perf_event_paranoid = %d)", strerror(e), paranoid);
  else
    snprintf(why, n, "perf_event_open: %s", strerror(e));
  return 0;
}

void prof__perf_clock_rearm(int fd) { ioctl(fd, PERF_EVENT_IOC_REFRESH, 1); }

uint64_t prof__perf_clock_read(int fd) {
  uint64_t v = 0;
  return read(fd, &v, sizeof v) == (ssize_t)sizeof v ? v : 0;
}

/* Whether fd is still a perf event that sends `sig`: the program may have
 * closed every descriptor it did not open (a daemon's start) and opened
 * its own files under the same numbers, which are not mlprof's to touch. */
static int still_ours(int fd, int sig) {
  char path[64], link[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, link, sizeof link - 1);
  if (n < 0) return 0;
  link[n] = 0;
  return strcmp(link, "anon_inode:[perf_event]") == 0 && fcntl(fd, F_GETSIG) == sig;
}

int prof__perf_clock_close(int fd, int sig) {
  if (!still_ours(fd, sig)) return -1;
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0); /* also for a copy a child of fork() may still hold */
  close(fd);
  return 0;
}
