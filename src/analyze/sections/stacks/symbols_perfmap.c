/* symbols_perfmap.c — names for JIT-compiled code from perf map files.
 *
 * JITs (the JVM with perf-map-agent, V8, LuaJIT, CPython >= 3.12 with its
 * perf trampoline, PyTorch's fusers) write /tmp/perf-<pid>.map: one line
 * per compiled function, "START SIZE NAME" with START and SIZE in hex. An
 * address outside every recorded module is looked up in the map of the
 * traced process (its pid is in the trace header), read once per analysis.
 * Only a regular file is read (a FIFO or device there is ignored).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/sections/stacks/sec_stacks.h"

typedef struct pm_sym {
  uint64_t start, size;
  char *name;
} pm_sym;

typedef struct prof__perfmap {
  pm_sym *v;
  size_t n, cap;
} prof__perfmap;

static int cmp_pm(const void *a, const void *b) {
  const pm_sym *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static FILE *open_regular(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, "r");
  if (!f) close(fd);
  return f;
}

static void load(prof__perfmap *pm, const char *path) {
  FILE *f = open_regular(path);
  if (!f) return;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    if (line[len - 1] == '\n') line[--len] = 0;
    char *end;
    uint64_t start = strtoull(line, &end, 16);
    if (end == line || *end != ' ') continue;
    char *p = end + 1;
    uint64_t size = strtoull(p, &end, 16);
    if (end == p || *end != ' ' || !end[1]) continue;
    if (pm->n == pm->cap) {
      size_t c = pm->cap ? pm->cap * 2 : 256;
      pm_sym *v = realloc(pm->v, c * sizeof *v);
      if (!v) break;
      pm->v = v;
      pm->cap = c;
    }
    char *name = strdup(end + 1);
    if (!name) break;
    pm->v[pm->n++] = (pm_sym){start, size, name};
  }
  free(line);
  fclose(f);
  if (pm->n) qsort(pm->v, pm->n, sizeof *pm->v, cmp_pm);
}

int prof__symbols_perfmap(prof__an *an, prof__stacks_st *s, uintptr_t pc, prof__frame *f) {
  if (!s->perfmap_tried) {
    s->perfmap_tried = 1;
    const char *pid = an ? prof__an_header(an, "pid") : NULL;
    const char *dir = getenv("MLPROF_PERF_MAP_DIR"); /* where the maps are, when not /tmp */
    s->perfmap = calloc(1, sizeof *s->perfmap);
    if (pid && atoi(pid) > 0 && s->perfmap) {
      char path[512];
      snprintf(path, sizeof path, "%s/perf-%d.map", dir && *dir ? dir : "/tmp", atoi(pid));
      load(s->perfmap, path);
    }
  }
  prof__perfmap *pm = s->perfmap;
  if (!pm || !pm->n) return -1;
  size_t lo = 0, hi = pm->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (pm->v[mid].start <= pc) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return -1;
  const pm_sym *x = &pm->v[lo - 1];
  if (pc - x->start >= (x->size ? x->size : 1)) return -1;
  char *d = prof__demangle(x->name);
  f->func = d ? d : strdup(x->name);
  if (d) f->mangled = strdup(x->name);
  f->module = strdup("[jit]");
  return f->func ? 0 : -1;
}

void prof__perfmap_free(prof__perfmap *pm) {
  if (!pm) return;
  for (size_t i = 0; i < pm->n; i++) free(pm->v[i].name);
  free(pm->v);
  free(pm);
}
