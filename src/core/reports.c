/* reports.c — which path writes a closed trace's reports (reports.h): the
 * launcher's list of traces, finding the mlprof command and its clean
 * environment, and the in-process fallback.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "clock.h"
#include "config.h"
#include "mlprof.h"
#include "reports.h"
#include "session.h"

extern char **environ;

/* ---- the launcher's list ------------------------------------------------------ */

/* MLPROF_RUN_TRACES = "FILE:DEV:INO": the launcher's list, reopened through
 * /proc/<launcher>/fd/<n>. The device and inode must match, so a process
 * that outlives the launcher never writes into a file of whatever process
 * took its pid later. */
static int open_list(void) {
  const char *spec = prof__env("RUN_TRACES");
  char file[PATH_MAX];
  unsigned long long dev, ino;
  const char *c2 = spec ? strrchr(spec, ':') : NULL, *c1 = NULL;
  for (const char *p = spec; c2 && p < c2; p++)
    if (*p == ':') c1 = p;
  if (!c1 || (size_t)(c1 - spec) >= sizeof file || sscanf(c1, ":%llu:%llu", &dev, &ino) != 2) return -1;
  memcpy(file, spec, (size_t)(c1 - spec));
  file[c1 - spec] = 0;
  struct stat st;
  if (stat(file, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != ino) return -1;
  int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

int prof__reports_announce(const char *path, const char *kind) {
  if (!prof__env("RUN_TRACES")) return 0;
  char cwd[PATH_MAX] = "", line[2 * PATH_MAX + 64];
  if (path[0] != '/' && !getcwd(cwd, sizeof cwd)) return 0;
  int n = snprintf(line, sizeof line, "%d %s %s%s%s\n", (int)getpid(), kind, cwd, cwd[0] ? "/" : "", path);
  if (n <= 0 || (size_t)n >= sizeof line || memchr(line, '\n', (size_t)n - 1)) return 0; /* one line per trace */
  int fd = open_list();
  if (fd < 0) return 0;
  int ok = write(fd, line, (size_t)n) == n;
  close(fd);
  return ok;
}

/* ---- the mlprof command ------------------------------------------------------------ */

static int is_exe(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* MLPROF_CLI, else the mlprof command beside this library: the build tree
 * keeps both in one folder, an install has <prefix>/lib[/<multiarch>]/ (with
 * the full command in its mlprof/ folder) and <prefix>/bin/. The full
 * command `mlprof-cli` comes first: `mlprof` is its start-up front, which
 * would only exec it. A program linked with the static library looks beside
 * its own executable. */
static int find_cli(char *out, size_t n, char *why, size_t wn) {
  const char *env = prof__env("CLI");
  if (env) {
    if (is_exe(env) && snprintf(out, n, "%s", env) < (int)n) return 1;
    snprintf(why, wn, "MLPROF_CLI='%.150s' is not an executable file", env);
    return 0;
  }
  Dl_info di;
  char lib[PATH_MAX];
  if (!dladdr((void *)&prof__reports_start, &di) || !di.dli_fname || !strchr(di.dli_fname, '/') ||
      !realpath(di.dli_fname, lib))
    if (!realpath("/proc/self/exe", lib)) snprintf(lib, sizeof lib, "?/?");
  char *slash = strrchr(lib, '/');
  if (slash) *slash = 0;
  static const char *const rel[] = {"mlprof-cli", "mlprof/mlprof-cli", "mlprof", "../bin/mlprof",
                                    "../../bin/mlprof"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
    if (snprintf(out, n, "%s/%s", lib, rel[i]) < (int)n && is_exe(out)) return 1;
  snprintf(why, wn, "no mlprof command beside %.150s; MLPROF_CLI names one", lib);
  return 0;
}

/* The analysis settings the command honours; every other MLPROF_ variable
 * stays out, so the command is never profiled itself. */
static int keep_mlprof_var(const char *kv) {
  static const char *const keep[] = {"MLPROF_READ_MAX_MB=", "MLPROF_PERF_MAP_DIR=", "MLPROF_VAL_PREFIXES=",
                                     "MLPROF_TRAIN_PREFIX="};
  for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
    if (strncmp(kv, keep[i], strlen(keep[i])) == 0) return 1;
  return 0;
}

static int is_mlprof_lib(const char *p, size_t len) {
  const char *b = p;
  for (size_t i = 0; i < len; i++)
    if (p[i] == '/') b = p + i + 1;
  return (size_t)(p + len - b) >= 9 && strncmp(b, "libmlprof", 9) == 0;
}

/* LD_PRELOAD without the profiler's libraries; NULL when nothing is left. */
static char *preload_without_mlprof(const char *kv) {
  const char *v = kv + strlen("LD_PRELOAD=");
  char *out = malloc(strlen(kv) + 1);
  if (!out) return NULL;
  size_t o = (size_t)sprintf(out, "LD_PRELOAD="), base = o;
  while (*v) {
    size_t len = strcspn(v, ": ");
    if (len && !is_mlprof_lib(v, len)) {
      if (o > base) out[o++] = ':';
      memcpy(out + o, v, len);
      o += len;
    }
    v += len + (v[len] != 0);
  }
  out[o] = 0;
  if (o > base) return out;
  free(out);
  return NULL;
}

static void free_env(char **env, char **owned) {
  for (char **p = owned; p && *p; p++) free(*p);
  free(owned);
  free(env);
}

/* The environment of this process, cleaned for the command (above), plus
 * MLPROF_DISABLE=1 against any other way of loading the library into it. */
static char **command_env(char ***owned_out) {
  size_t n = 0;
  while (environ && environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env), **owned = calloc(2, sizeof *owned);
  if (!env || !owned) {
    free(env);
    free(owned);
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *kv = environ[i];
    if (strncmp(kv, "MLPROF_", 7) == 0 && !keep_mlprof_var(kv)) continue;
    if ((strncmp(kv, "NVTX_INJECTION64_PATH=", 22) == 0 || strncmp(kv, "CUDA_INJECTION64_PATH=", 22) == 0) &&
        is_mlprof_lib(kv + 22, strlen(kv + 22)))
      continue;
    if (strncmp(kv, "LD_PRELOAD=", 11) == 0) {
      if (!owned[0] && (owned[0] = preload_without_mlprof(kv))) env[k++] = owned[0];
      continue;
    }
    env[k++] = (char *)kv;
  }
  env[k++] = (char *)"MLPROF_DISABLE=1";
  *owned_out = owned;
  return env;
}

int prof__reports_adopted_here(void) {
  int sub = 0;
  return getpid() == 1 || (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) == 0 && sub);
}

int prof__reports_wait_ms(void) {
  static int ms = -1; /* read once: a bad value is reported once */
  int v = __atomic_load_n(&ms, __ATOMIC_RELAXED);
  if (v < 0) {
    v = prof__env_flag("REPORT_WAIT", 0) || prof__reports_adopted_here() ? 300000 : 0;
    __atomic_store_n(&ms, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* ---- the paths ------------------------------------------------------------------------- */

static prof__report_fn in_process_fn; /* the assembly's (atomic) */

void prof__reports_setup(prof__report_fn in_process) { __atomic_store_n(&in_process_fn, in_process, __ATOMIC_RELEASE); }

int prof__reports_in_process(const char *path, char *err) {
  prof__report_fn fn = __atomic_load_n(&in_process_fn, __ATOMIC_ACQUIRE);
  if (!fn) {
    snprintf(err, PROF_ERR_MAX, "this build has no analyzer");
    return PROF_ESTATE;
  }
  return fn(path, err);
}

static void in_process(const char *path, prof__report_run *r) {
  r->by = PROF_REP_INPROC;
  r->done = 1;
  if (!__atomic_load_n(&in_process_fn, __ATOMIC_ACQUIRE)) r->by = PROF_REP_NONE;
  r->ok = prof__reports_in_process(path, r->err) == 0;
}

/* Start `mlprof write-reports --by cli` on path; 0, or -1 with why in note
 * (PROF_ERR_MAX bytes). */
static int start_command(const char *path, prof__report_job *job, char *note) {
  char exe[PATH_MAX], **owned = NULL, **env;
  if (!find_cli(exe, sizeof exe, note, PROF_ERR_MAX)) return -1;
  if (!(env = command_env(&owned))) {
    snprintf(note, PROF_ERR_MAX, "out of memory for the mlprof command");
    return -1;
  }
  char *argv[] = {exe, "write-reports", "--by", "cli", "--status-fd", "3", "--", (char *)path, NULL};
  char err[PROF_ERR_MAX];
  int rc = prof__report_spawn(exe, argv, env, 1, job, err);
  free_env(env, owned);
  if (rc) snprintf(note, PROF_ERR_MAX, "%s", err);
  return rc ? -1 : 0;
}

void prof__reports_start(const char *path, int wait_ms, prof__report_run *r) {
  memset(r, 0, sizeof *r);
  r->job.fd = -1;
  if (start_command(path, &r->job, r->note) != 0) {
    in_process(path, r);
    return;
  }
  r->by = PROF_REP_CLI;
  if (prof__report_job_check(&r->job, wait_ms)) {
    r->done = 1;
    r->ok = r->job.oks > 0 && !r->job.errors;
    if (!r->ok) snprintf(r->err, sizeof r->err, "%s", r->job.msg);
  }
}

/* ---- capture reports ------------------------------------------------------------------- */

/* The commands writing capture reports. The writer thread adds and polls
 * them (its hook); prof__reports_capture_end runs after it stopped. */
static struct cap_job {
  prof__report_job job;
  char path[PATH_MAX];
} cap_jobs[PROF_CAPTURES_IN_FLIGHT];
static int cap_hooked;

static void cap_job_done(struct cap_job *c) {
  int ok = c->job.oks > 0 && !c->job.errors;
  prof__capture_done(c->path, 1, ok ? PROF_REP_CLI : PROF_REP_NONE, ok ? NULL : c->job.msg);
  c->path[0] = 0;
}

static void cap_jobs_poll(struct prof__tw *w, int final, void *arg) {
  (void)w, (void)final, (void)arg;
  for (int i = 0; i < PROF_CAPTURES_IN_FLIGHT; i++)
    if (cap_jobs[i].path[0] && prof__report_job_check(&cap_jobs[i].job, 0)) cap_job_done(&cap_jobs[i]);
}

int prof__reports_capture_start(const char *path, char *note) {
  struct cap_job *c = NULL;
  for (int i = 0; i < PROF_CAPTURES_IN_FLIGHT && !c; i++)
    if (!cap_jobs[i].path[0]) c = &cap_jobs[i];
  if (!c || strlen(path) >= sizeof c->path) {
    snprintf(note, PROF_ERR_MAX, "no room for another mlprof command");
    return 0;
  }
  if (!cap_hooked && prof__writer_hook_add(cap_jobs_poll, NULL) != 0) {
    snprintf(note, PROF_ERR_MAX, "no writer hook left to follow the mlprof command");
    return 0;
  }
  cap_hooked = 1;
  if (start_command(path, &c->job, note) != 0) return 0;
  snprintf(c->path, sizeof c->path, "%s", path);
  return 1;
}

void prof__reports_capture_end(int wait_ms) {
  uint64_t deadline = prof__mono_ns() + (uint64_t)wait_ms * 1000000ull;
  for (int i = 0; i < PROF_CAPTURES_IN_FLIGHT; i++) {
    struct cap_job *c = &cap_jobs[i];
    if (!c->path[0]) continue;
    uint64_t now = prof__mono_ns();
    int left = now < deadline ? (int)((deadline - now) / 1000000ull) : 0;
    if (prof__report_job_check(&c->job, left)) cap_job_done(c);
    else {
      prof__report_job_forget(&c->job);
      c->path[0] = 0;
    }
  }
}
