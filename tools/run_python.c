/* run_python.c — `mlprof run` for Python programs: torch's record_function
 * blocks become ranges of an unmodified script. Beside the library lies
 * `mlprof-python/sitecustomize.py` (a copy of python/mlprof/_record_function.py
 * made by the build and by the install); its folder goes first on the
 * program's PYTHONPATH, so the interpreter runs it at start-up. It wraps
 * torch's class once torch is imported, then runs the sitecustomize that
 * would have run otherwise. MLPROF_TORCH_RANGES=0 turns it off. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_trace.h"
#include "trace/settings.h"

void run_python_env(const char *lib) {
  const char *off = prof__env("TORCH_RANGES");
  if (off && prof__flag_parse(off) == 0) return;
  const char *slash = strrchr(lib, '/');
  int dir = slash ? (int)(slash - lib) : 0;
  char site[PATH_MAX], file[PATH_MAX + 32];
  if (snprintf(site, sizeof site, "%.*s%smlprof-python", dir, lib, slash ? "/" : "") >= (int)sizeof site) return;
  snprintf(file, sizeof file, "%s/sitecustomize.py", site);
  if (access(file, R_OK) != 0) return;
  const char *old = getenv("PYTHONPATH");
  size_t n = strlen(site) + (old ? strlen(old) : 0) + 2;
  char *path = malloc(n);
  if (!path) return;
  snprintf(path, n, "%s%s%s", site, old && *old ? ":" : "", old && *old ? old : "");
  setenv("PYTHONPATH", path, 1);
  free(path);
}
