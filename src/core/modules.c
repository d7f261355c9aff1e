/* modules.c — the registry of producer modules (modules.h, producer.h):
 * the build's producers that MLPROF_MODULES selects and those added at run
 * time, started in order at prof_init and stopped in reverse at shutdown.
 *
 * Registration and start/stop happen under the session's lock; the hooks
 * run on other threads (step: the step thread; observe: the writer;
 * crash: a fatal-signal handler) read only the modules started so far,
 * published with `started` (release/acquire), and never lock.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "modules.h"
#include "session_core.h"

#define MODULES_MAX 32

static prof__module modules[MODULES_MAX];
static int nmodules, started, builtin_added;

static int add_locked(const prof__module *m) {
  if (nmodules >= MODULES_MAX || !m) return PROF_EINVAL;
  modules[nmodules++] = *m;
  return 0;
}

int prof__module_add(const prof__module *m) {
  prof__session_lock();
  int rc = add_locked(m);
  prof__session_unlock();
  return rc;
}

/* MLPROF_MODULES: a comma-separated list of the producer modules to start
 * ("stack,mem,cpu,gpu,res,health,live"; "model" is the former name of "health"), "none", or "all" (the default). */
/* Does the list entry p[0..len) name module m (or its former name)? */
static int names(const prof__module *m, const char *p, size_t len) {
  if (strlen(m->name) == len && strncmp(m->name, p, len) == 0) return 1;
  return m->alias && strlen(m->alias) == len && strncmp(m->alias, p, len) == 0;
}

static int wanted(const prof__module *m) {
  const char *list = prof__env("MODULES");
  if (!list || strcmp(list, "all") == 0) return 1;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (names(m, p, len)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* Say once which MLPROF_MODULES entries name no module of this build. */
static void check_list(const prof__module *const *builtin) {
  const char *list = prof__env("MODULES");
  if (!list || strcmp(list, "all") == 0 || strcmp(list, "none") == 0) return;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int known = 0;
    for (int i = 0; builtin[i] && !known; i++)
      known = names(builtin[i], p, len);
    if (!known) {
      char names[160] = "";
      for (int i = 0; builtin[i]; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? "," : "", builtin[i]->name);
      }
      fprintf(stderr, "mlprof: MLPROF_MODULES='%s': '%.*s' is not a module of this build (expected all, none "
              "or a list of %s); it is ignored\n", list, (int)len, p, names);
    }
    if (!e) break;
    p = e + 1;
  }
}

void prof__modules_builtin(const prof__module *const *builtin) {
  static const prof__module *const none[] = {NULL};
  if (builtin_added) return;
  builtin_added = 1;
  if (!builtin) builtin = none;
  check_list(builtin);
  for (int i = 0; builtin[i]; i++)
    if (wanted(builtin[i])) add_locked(builtin[i]);
}

void prof__modules_prepare(void) {
  for (int i = 0; i < nmodules; i++)
    if (modules[i].prepare) modules[i].prepare();
}

size_t prof__modules_header(prof__kv *kv, size_t max) {
  size_t n = 0;
  for (int i = 0; i < nmodules; i++)
    if (modules[i].header) n += modules[i].header(kv + n, max - n);
  return n;
}

void prof__modules_start(void) {
  for (int i = 0; i < nmodules; i++) {
    if (modules[i].start) modules[i].start();
    __atomic_store_n(&started, i + 1, __ATOMIC_RELEASE);
  }
}

void prof__modules_stop(void) {
  while (started > 0) {
    int i = started - 1;
    __atomic_store_n(&started, i, __ATOMIC_RELEASE);
    if (modules[i].stop) modules[i].stop();
  }
}

/* The largest capture request wins. */
uint64_t prof__modules_step(int begin, uint64_t step, uint64_t ticks) {
  uint64_t od = 0;
  int n = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (modules[i].step) {
      uint64_t r = modules[i].step(begin, step, ticks);
      if (r > od) od = r;
    }
  return od;
}

void prof__modules_observe(uint32_t tid, const prof__event *ev, size_t n) {
  int k = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++)
    if (modules[i].observe) modules[i].observe(tid, ev, n);
}

void prof__modules_crash(void) {
  int k = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++)
    if (modules[i].crash) modules[i].crash();
}

int prof__modules_running(const char *name) {
  int k = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
  for (int i = 0; i < k; i++)
    if (name && strcmp(modules[i].name, name) == 0) return 1;
  return 0;
}
