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
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session_core.h"
#include "trace/settings.h"

/* Is `path` (this image's, as the loader opened it) an entry of LD_PRELOAD?
 * Entries are separated by colons or spaces; one without a slash names a
 * file the loader searched for, matched by its base name. */
static int preloaded(const char *path) {
  const char *p = getenv("LD_PRELOAD"), *e;
  if (!p || !path) return 0;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen(path), bn = strlen(base), len;
  while ((e = prof__preload_next(&p, &len)) != NULL) {
    if (len == n && strncmp(e, path, n) == 0) return 1;
    if (len == bn && !memchr(e, '/', len) && strncmp(e, base, bn) == 0) return 1;
  }
  return 0;
}

/* The loaded object holding `at` (its name as the loader opened it); found
 * through the program headers (dladdr would also scan the symbols). */
struct find {
  uintptr_t at;
  const char *name;
};

static int holds(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct find *f = arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && f->at - lo < ph->p_memsz) {
      f->name = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

__attribute__((constructor(102))) static void pinned_at_load(void) {
  struct find f = {(uintptr_t)pinned_at_load, NULL};
  if (dl_iterate_phdr(holds, &f) && preloaded(f.name)) prof__session_pin();
}
