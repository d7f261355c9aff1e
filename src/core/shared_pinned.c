/* shared_pinned.c — whether this library's image stays mapped until the
 * process ends, in the shared library only (linked statically, the image
 * is the program's own, and the session keeps the safe default).
 *
 * A library named in LD_PRELOAD (as `mlprof run` loads it) is never
 * unloaded: dlclose leaves the objects loaded at start-up. Its destructors
 * then mean the process's exit, and the session's end may run the writer's
 * final cycle on the exiting thread, leaving the writer thread asleep
 * (prof__session_exit). A library opened with dlopen may be closed: its
 * destructors then stop the writer thread before its code goes away.
 * Read at load, first of the constructors that may change LD_PRELOAD
 * (mem/shared_preload.c drops it for MLPROF_RUN_CHILDREN=0).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "session_core.h"

/* Is `path` (this image's, as the loader opened it) an entry of LD_PRELOAD?
 * Entries are separated by colons or spaces; one without a slash names a
 * file the loader searched for, matched by its base name. */
static int preloaded(const char *path) {
  const char *pre = getenv("LD_PRELOAD");
  if (!pre || !path) return 0;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(path), bn = strlen(base);
  for (const char *p = pre; *p;) {
    size_t len = strcspn(p, ": ");
    if (len == n && strncmp(p, path, n) == 0) return 1;
    if (len == bn && !memchr(p, '/', len) && strncmp(p, base, bn) == 0) return 1;
    p += len;
    while (*p == ':' || *p == ' ') p++;
  }
  return 0;
}

__attribute__((constructor(102))) static void pinned_at_load(void) {
  Dl_info info;
  if (dladdr((void *)pinned_at_load, &info) && preloaded(info.dli_fname)) prof__session_pin();
}
