/* cmd_top.c — `mlprof top PID`: a running job's step time, throughput,
 * memory, GPU utilisation and busiest ranges, read from the live page the
 * library updates at step boundaries. Redraws every second on a terminal;
 * `--once` (or any non-terminal output without --interval) prints one
 * plain-text frame for scripts. Also the helpers of cmd_live.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_live.h"
#include "analyze/util/termsafe.h"

/* Text from the live page (written by the job) as one field (termsafe.h). */
#define TN(buf, s) prof__term_name(buf, sizeof buf, s)

int live_pid_arg(const char *cmd, const char *arg) {
  char *end;
  long pid = arg ? strtol(arg, &end, 10) : 0;
  if (!arg || *end || pid <= 0 || pid > 0x7fffffff) {
    cli_error(cmd, "expected a process id, got '%s'", arg ? arg : "");
    return -1;
  }
  return (int)pid;
}

int live_alive(int pid) { return kill(pid, 0) == 0 || errno == EPERM; }

/* Does the file hold `needle` (binary safe, read in blocks)? */
static int file_has(const char *path, const char *needle) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char buf[8192];
  size_t keep = 0, nl = strlen(needle), n;
  int found = 0;
  while (!found && (n = fread(buf + keep, 1, sizeof buf - keep, f)) > 0) {
    n += keep;
    found = memmem(buf, n, needle, nl) != NULL;
    keep = n >= nl ? nl - 1 : n;
    memmove(buf, buf + n - keep, keep);
  }
  fclose(f);
  return found;
}

/* Start of process pid, CLOCK_MONOTONIC-like ns since boot (0: unknown). */
static uint64_t proc_start_ns(int pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *q = strrchr(buf, ')'); /* the name may hold spaces */
  unsigned long long start = 0;
  for (int field = 2; q && *q && field < 22; q++)
    if (*q == ' ' && ++field == 22) start = strtoull(q + 1, NULL, 10);
  long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? start * (1000000000ull / (uint64_t)hz) : 0;
}

int live_own_job(int pid, const prof__live_page *p, int stopped) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  long uid = -1;
  char state = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Uid:", 4) == 0) uid = strtol(line + 4, NULL, 10);
    else if (strncmp(line, "State:", 6) == 0) sscanf(line + 6, " %c", &state);
  }
  fclose(f);
  if (uid != (long)getuid() || (stopped && state != 'T')) return 0;
  if (p) { /* the page was made by this process, not by an earlier one with its pid */
    struct timespec b, m; /* /proc counts from boot, suspend included: move the page's time there */
    clock_gettime(CLOCK_BOOTTIME, &b);
    clock_gettime(CLOCK_MONOTONIC, &m);
    int64_t off = ((int64_t)b.tv_sec - m.tv_sec) * 1000000000ll + (b.tv_nsec - m.tv_nsec);
    uint64_t born = proc_start_ns(pid), page_born = p->start_mono_ns + (uint64_t)(off > 0 ? off : 0);
    return born == 0 || born <= page_born + 1000000000ull;
  }
  /* Without a page only a job that pauses itself qualifies: one started
   * with a break point, or one that has libmlprof loaded. Any MLPROF_
   * variable is not enough (children of a profiled shell inherit them). */
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  if (file_has(path, "MLPROF_BREAK_AT=")) return 1;
  snprintf(path, sizeof path, "/proc/%d/maps", pid);
  return file_has(path, "libmlprof");
}

prof__live_page *live_attach(const char *cmd, int pid) {
  char path[512];
  prof__live_page *p = prof__livepage_open(pid, path, sizeof path);
  if (!p)
    cli_error(cmd, "no live page for pid %d at %s (%s): is it running with mlprof, with MLPROF_LIVE not 0?", pid,
              path, errno == EPROTO ? "not an mlprof page of this version"
                    : errno == EACCES ? "not a regular file of this user" : strerror(errno));
  return p;
}

prof__live_page *live_attach_own(const char *cmd, int pid) {
  prof__live_page *p = live_attach(cmd, pid);
  if (p && !live_own_job(pid, p, 0)) {
    cli_error(cmd, "pid %d is not a running mlprof job of this user", pid);
    prof__livepage_close(p);
    return NULL;
  }
  return p;
}

static double mib(uint64_t b) { return (double)b / 1048576.0; }
static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void print_state(FILE *out, const prof__live_page *v, int alive) {
  char a[PROF_TERM_NAME];
  if (!alive) fprintf(out, "state: process ended\n");
  else if (v->ctl.paused_step)
    fprintf(out, "state: PAUSED at step %llu (snapshot %s); resume with: mlprof resume %u\n",
            (unsigned long long)(v->ctl.paused_step - 1), TN(a, v->ctl.last_snapshot[0] ? v->ctl.last_snapshot : "-"),
            v->pid);
  else if (v->bg.capturing) fprintf(out, "state: running, capturing on demand\n");
  else fprintf(out, "state: running\n");
  if (v->bg.last_capture[0]) fprintf(out, "last capture: %s\n", TN(a, v->bg.last_capture));
}

static void print_frame(FILE *out, const prof__live_page *v, int alive) {
  char a[PROF_TERM_NAME], b[PROF_TERM_NAME];
  uint64_t now = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  fprintf(out, "mlprof top: pid %u (%s), up %.0f s, trace %s\n", v->pid, TN(a, v->program),
          now > v->start_mono_ns ? (double)(now - v->start_mono_ns) / 1e9 : 0.0, TN(b, v->trace));
  if (v->step.steps)
    fprintf(out, "steps: %llu done, last #%llu %.2f ms, avg %.2f ms (min %.2f, max %.2f), throughput %.2f steps/s\n",
           (unsigned long long)v->step.steps, (unsigned long long)v->step.last_step, ms(v->step.last_step_ns),
           ms(v->step.ewma_step_ns), ms(v->step.min_step_ns), ms(v->step.max_step_ns),
           v->step.ewma_step_ns ? 1e9 / (double)v->step.ewma_step_ns : 0.0);
  else fprintf(out, "steps: none finished yet\n");
  if (v->step.open_step)
    fprintf(out, "open step: #%llu running for %.2f ms\n", (unsigned long long)(v->step.open_step - 1),
           now > v->step.open_mono_ns ? ms(now - v->step.open_mono_ns) : 0.0);
  fprintf(out, "memory: rss %.1f MiB (peak %.1f MiB)\n", mib(v->bg.rss_bytes), mib(v->bg.peak_rss_bytes));
  if (v->bg.gpu_util_pct >= 0) fprintf(out, "gpu: %d%% busy\n", v->bg.gpu_util_pct);
  else fprintf(out, "gpu: n/a\n");
  fprintf(out, "profiler: %llu events written, %llu lost, %.1f MiB of trace\n", (unsigned long long)v->bg.events,
         (unsigned long long)v->bg.lost, mib(v->bg.bytes));
  print_state(out, v, alive);
  fprintf(out, "top ranges (self time, last second):\n");
  if (!v->bg.nranges) fprintf(out, "  (none)\n");
  for (uint32_t i = 0; i < v->bg.nranges && i < PROF_LIVE_TOP; i++)
    fprintf(out, "  %-32.47s %10.2f ms %8llu calls\n", TN(a, v->bg.top[i].name), ms(v->bg.top[i].self_ns),
           (unsigned long long)v->bg.top[i].count);
}

/* Keys on a terminal: 'q' quits. Standard input is put in non-canonical,
 * no-echo mode for the redraw loop and restored on the way out (also on
 * Ctrl-C, which stays a signal). */
static struct termios saved_tio;
static int keys_on;

static void keys_restore(void) {
  if (keys_on) tcsetattr(0, TCSANOW, &saved_tio);
  keys_on = 0;
}

/* Ctrl-C and kill restore the terminal, then end the command as before. */
static void keys_on_signal(int sig) {
  if (keys_on) tcsetattr(0, TCSANOW, &saved_tio); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

static void keys_begin(void) {
  if (!isatty(0) || tcgetattr(0, &saved_tio) != 0) return;
  signal(SIGINT, keys_on_signal);
  signal(SIGTERM, keys_on_signal);
  signal(SIGHUP, keys_on_signal);
  struct termios t = saved_tio;
  t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  if (tcsetattr(0, TCSANOW, &t) == 0) keys_on = 1;
}

/* Wait `secs` or until a key; 1 when the key asks to quit. */
static int wait_or_quit(double secs) {
  if (!keys_on) {
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    return 0;
  }
  struct timespec end, now;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += (time_t)secs;
  end.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
  if (end.tv_nsec >= 1000000000L) end.tv_sec++, end.tv_nsec -= 1000000000L;
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (long)(end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
    if (ms <= 0) return 0;
    struct pollfd pfd = {0, POLLIN, 0};
    int r = poll(&pfd, 1, (int)(ms > 1000 ? 1000 : ms));
    if (r < 0 && errno != EINTR) return 0;
    if (r <= 0) continue;
    char c;
    ssize_t n = read(0, &c, 1);
    if (n == 0) { /* end of input: no more keys, keep the plain redraw */
      keys_restore();
      return wait_or_quit((double)ms / 1000.0);
    }
    if (n == 1 && (c == 'q' || c == 'Q')) return 1;
  }
}

static int run(int argc, char **argv) {
  const char *pid_s = NULL, *interval = NULL;
  int once = 0, npos;
  const cli_opt opts[] = {{"once", '1', NULL, &once}, {"interval", 'n', &interval, NULL}, {NULL, 0, NULL, NULL}};
  if (cli_parse("top", argc, argv, opts, &pid_s, 1, &npos)) return CLI_USAGE;
  int pid = live_pid_arg("top", npos == 1 ? pid_s : NULL);
  if (pid < 0) return CLI_USAGE;
  double every = interval ? atof(interval) : 1.0;
  if (!(every >= 0.05 && every <= 3600)) { /* NaN too */
    cli_error("top", "--interval must be between 0.05 and 3600 seconds");
    return CLI_USAGE;
  }
  prof__live_page *p = live_attach("top", pid);
  if (!p) return CLI_BADTRACE;
  int tty = isatty(1);
  if (!tty && !interval) once = 1;
  prof__live_page v;
  if (tty && !once) {
    keys_begin();
    atexit(keys_restore);
  }
  for (;;) {
    int alive = live_alive(pid);
    if (prof__livepage_read(p, &v) != 0) printf("(the page was changing too fast to read; retrying)\n");
    if (tty && !once) printf("\033[H\033[2J");
    /* Names on the page come from the job: the frame goes through the
     * terminal filter (the clear-screen above is ours). */
    fflush(stdout);
    FILE *out = prof__term_open(stdout);
    print_frame(out ? out : stdout, &v, alive);
    if (out) prof__term_close(out);
    fflush(stdout);
    if (once || !alive) break;
    if (wait_or_quit(every)) break;
    if (!tty) printf("\n");
  }
  keys_restore();
  prof__livepage_close(p);
  return ferror(stdout) ? CLI_OUTPUT : CLI_OK;
}

const mlprof_cmd mlprof_cmd_top = {
    "top", "live view of a running job: step time, throughput, memory, top ranges",
    "usage: mlprof top PID [--once] [--interval SECONDS]\n\n"
    "Shows a running job's step time, throughput, memory, GPU utilisation and\n"
    "busiest ranges from the small shared-memory page the library updates at\n"
    "step boundaries (<dir>/mlprof.PID, dir = MLPROF_LIVE_DIR or /dev/shm/mlprof-UID; no\n"
    "ptrace). On a terminal it redraws every second until the job ends or\n"
    "'q' is pressed;\n"
    "--once, or output to a pipe or file, prints one plain-text frame.\n"
    "  -1, --once           print one frame and exit\n"
    "  -n, --interval S     refresh period in seconds (default 1)\n"
    "exit status: 0, 1 usage error, 2 no live page for that pid.\n",
    run};
