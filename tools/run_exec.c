/* run_exec.c — `mlprof run` up to the exec of the program: the options,
 * the library to preload, the program's environment and the exec
 * (run_exec.h). No analysis here: the start-up front links this file alone.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_base.h"
#include "run_exec.h"
#include "run_trace.h"
#include "trace/ev_mem.h"
#include "trace/settings.h"
#include "trace/tracename.h"

/* --max-mb: what the library takes as MLPROF_MAX_MB (1 MiB .. 1 TiB). */
static int max_mb_valid(const char *v) {
  char *end = NULL;
  errno = 0;
  long mb = strtol(v, &end, 10);
  return errno == 0 && end != v && *end == 0 && mb >= 1 && mb <= (1L << 20);
}

/* The library next to the executable (build tree), in the install
 * prefix's lib folders, or one folder up (the full command installed in
 * <libdir>/mlprof/, the library in <libdir>). */
static int find_beside_exe(char *out, size_t n) {
  char exe[PATH_MAX];
  if (!cli_exe_dir(exe, sizeof exe)) return 0;
  static const char *const rel[] = {"libmlprof.so", "libmlprof.so.0", "../lib/libmlprof.so",
                                    "../lib/libmlprof.so.0", "../lib64/libmlprof.so", "../lib64/libmlprof.so.0",
                                    "../libmlprof.so", "../libmlprof.so.0"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    if (snprintf(out, n, "%s/%s", exe, rel[i]) >= (int)n) continue;
    if (cli_readable(out)) return 1;
  }
  char pat[PATH_MAX + 32];
  snprintf(pat, sizeof pat, "%s/../lib/*/libmlprof.so*", exe); /* multiarch */
  glob_t g;
  int found = 0;
  if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
    snprintf(out, n, "%s", g.gl_pathv[0]);
    found = cli_readable(out);
  }
  globfree(&g);
  return found;
}

static int find_library(const run_opts *o, char *out, size_t n) {
  const char *given = o->library ? o->library : prof__env("LIBRARY");
  if (given) {
    if (!cli_readable(given)) {
      cli_error("run", "cannot read the profiler library '%s'%s", given, o->library ? "" : " (from MLPROF_LIBRARY)");
      return 0;
    }
    if (!realpath(given, out)) snprintf(out, n, "%s", given);
    return 1;
  }
  if (find_beside_exe(out, n)) {
    char tmp[PATH_MAX];
    if (realpath(out, tmp)) snprintf(out, n, "%s", tmp);
    return 1;
  }
  cli_error("run",
            "cannot find libmlprof.so next to the mlprof command or in its install prefix; "
            "pass --library PATH or set MLPROF_LIBRARY");
  return 0;
}

static int parse(int argc, char **argv, run_opts *o, int *prog) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char **val = NULL;
    if (!strcmp(a, "--")) {
      *prog = i + 1;
      return *prog < argc ? 0 : -1;
    }
    if (a[0] != '-') {
      *prog = i;
      return 0;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) val = &o->output;
    else if (!strcmp(a, "--mem")) val = &o->mem;
    else if (!strcmp(a, "--max-mb")) val = &o->max_mb;
    else if (!strcmp(a, "--library")) val = &o->library;
    else if (!strcmp(a, "-f") || !strcmp(a, "--format")) val = &o->format;
    else if (!strcmp(a, "--no-children")) o->no_children = 1;
    else if (!strcmp(a, "--mpi")) o->mpi = 1;
    else if (!strcmp(a, "--no-report")) o->no_report = 1;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = 1;
    else {
      cli_error("run", "unknown option '%s' (see 'mlprof run --help')", a);
      return -2;
    }
    if (val) {
      if (i + 1 >= argc) {
        cli_error("run", "option '%s' needs a value", a);
        return -2;
      }
      *val = argv[++i];
    }
  }
  return -1;
}

int run_find_mpi_library(const char *lib, char *out, size_t n) {
  const char *slash = strrchr(lib, '/');
  int dir = slash ? (int)(slash - lib) : 0;
  static const char *const names[] = {"libmlprof_mpi.so", "libmlprof_mpi.so.0"};
  for (size_t i = 0; i < 2; i++) {
    if (snprintf(out, n, "%.*s%s%s", dir, lib, slash ? "/" : "", names[i]) >= (int)n) continue;
    if (cli_readable(out)) return 1;
  }
  return 0;
}

void run_child_env(const run_opts *o, const char *lib, const char *trace) {
  const char *old = getenv("LD_PRELOAD");
  char pre[8192], mpi[PATH_MAX] = "";
  /* With --mpi the PMPI wrappers come first, so they see MPI_* calls. */
  if (o->mpi && run_find_mpi_library(lib, mpi, sizeof mpi)) strcat(mpi, ":");
  snprintf(pre, sizeof pre, "%s%s%s%s", mpi, lib, old && *old ? ":" : "", old && *old ? old : "");
  setenv("LD_PRELOAD", pre, 1);
  setenv("MLPROF_PRELOAD", "1", 1);
  /* NVTX annotations and the program's cuInit reach libmlprof (a tool the user set, e.g. nsys, wins). */
  setenv("NVTX_INJECTION64_PATH", lib, 0);
  setenv("CUDA_INJECTION64_PATH", lib, 0);
  char pid[24];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  setenv("MLPROF_RUN_PID", pid, 1);
  setenv("MLPROF_OUTPUT", trace, 1);
  setenv("MLPROF_REPORT", "0", 1); /* the launcher writes the reports */
  if (o->mem) setenv("MLPROF_MEM", o->mem, 1);
  if (o->max_mb) setenv("MLPROF_MAX_MB", o->max_mb, 1);
  if (o->no_children) setenv("MLPROF_RUN_CHILDREN", "0", 1);
  run_python_env(lib);
}

void run_trace_path(const run_opts *o, const char *prog, pid_t pid, char *out, size_t n) {
  const char *base = strrchr(prog, '/');
  char name[PATH_MAX], err[PROF_ERR_MAX]; /* a folder that cannot be used is named once, by run_folder_refused */
  prof__trace_default_name(name, sizeof name, base ? base + 1 : prog, NULL, 0, (long)pid);
  (void)prof__trace_output_path(out, n, o->output ? o->output : prof__env("OUTPUT"), name, err);
}

int run_opts_check(int argc, char **argv, run_opts *o, int *prog, char *lib, size_t n) {
  *o = (run_opts){0};
  int p = parse(argc, argv, o, prog);
  if (p == -1) cli_error("run", "no program given: mlprof run [options] -- PROGRAM ARGS...");
  if (p) return CLI_USAGE;
  if (o->mem && prof__ev_mem_mode_parse(o->mem) < 0) {
    cli_error("run", "unknown memory mode '%s' (off, counts, sampled, full)", o->mem);
    return CLI_USAGE;
  }
  if (o->max_mb && !max_mb_valid(o->max_mb)) {
    cli_error("run", "--max-mb wants a whole number of MiB from 1 to 1048576, not '%s'", o->max_mb);
    return CLI_USAGE;
  }
  if (o->format && o->no_report) {
    cli_error("run", "--no-report and -f contradict each other: -f prints a report");
    return CLI_USAGE;
  }
  if (o->format && strcmp(o->format, "text") && strcmp(o->format, "json")) {
    cli_error("run", "unknown format '%s' (text, json)", o->format);
    return CLI_USAGE;
  }
  return find_library(o, lib, n) ? CLI_OK : CLI_USAGE;
}

int run_opts_replaces(const run_opts *o) { return o->quiet && o->no_report && !o->mpi; }

/* The file execvp would have run for `file` (PATH searched when it has no
 * slash; an unset PATH is the C library's default) into out[n]. */
static int program_file(const char *file, char *out, size_t n) {
  if (strchr(file, '/')) return snprintf(out, n, "%s", file) < (int)n;
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/bin:/usr/bin";
  for (const char *p = path;; p++) {
    const char *end = strchrnul(p, ':');
    int len = (int)(end - p);
    if (snprintf(out, n, "%.*s%s%s", len, p, len ? "/" : "", file) < (int)n && access(out, X_OK) == 0) return 1;
    if (!*end) return 0;
    p = end;
  }
}

/* execvp, with POSIX's fallback on every C library: a file that is not an
 * executable format (a script without "#!") runs under /bin/sh. glibc's
 * execvp does this itself; musl's, which a static front may be built
 * with, does not. Returns only when the exec failed. */
void run_execvp(char **prog) {
  execvp(prog[0], prog);
  if (errno != ENOEXEC) return;
  char file[PATH_MAX];
  size_t argc = 0;
  while (prog[argc]) argc++;
  if (!program_file(prog[0], file, sizeof file) || argc > 1u << 16) {
    errno = ENOEXEC;
    return;
  }
  char **argv = malloc((argc + 2) * sizeof *argv);
  if (!argv) {
    errno = ENOEXEC;
    return;
  }
  argv[0] = "sh";
  argv[1] = file;
  for (size_t i = 1; i <= argc; i++) argv[i + 1] = prog[i];
  execv("/bin/sh", argv);
  free(argv);
  errno = ENOEXEC;
}

void run_exec_profiled(const run_opts *o, const char *lib, char **prog, const char *traces) {
  char trace[PATH_MAX];
  run_trace_path(o, prog[0], getpid(), trace, sizeof trace);
  run_child_env(o, lib, trace);
  if (traces) setenv("MLPROF_RUN_TRACES", traces, 1);
  run_execvp(prog);
}

int run_refused_exec(const run_opts *o, char **prog) {
  char trace[PATH_MAX];
  run_trace_path(o, prog[0], 0, trace, sizeof trace);
  fflush(NULL);
  if (!run_folder_refused(trace)) return 0;
  run_execvp(prog); /* another user's folder: no output there */
  cli_error("run", "cannot run '%s': %s", prog[0], strerror(errno));
  return 127;
}

int run_replace(const run_opts *o, const char *lib, char **prog) {
  int rc = run_refused_exec(o, prog);
  if (rc) return rc;
  run_exec_profiled(o, lib, prog, NULL);
  cli_error("run", "cannot run '%s': %s", prog[0], strerror(errno));
  return 127;
}
