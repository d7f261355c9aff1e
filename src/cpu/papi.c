/* papi.c — the door to PAPI: what the counters module asks of it.
 *
 * Hardware counters are read per thread from the writer thread: each
 * profiled thread gets an event set attached to its tid. PAPI's own set-up
 * (PAPI_library_init, PAPI_thread_init: neither is safe beside a dlopen in
 * another thread) runs once, in prof_init() on the caller's thread
 * (prof__counters_start), never on the writer thread. This file turns
 * PAPI's answers into three cases the counters module acts on: counters
 * present (all events added), partially available (the missing events are
 * named and skipped), or absent (PAPI's own reason is returned, and the
 * caller falls back to software counters). libpapi itself is opened at
 * run time, only where the kernel counts hardware events (papi_load.c);
 * every call goes through its table. Tests reach it with a --wrap of the
 * loader that fills the table with mocks.
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu.h"

#ifdef MLPROF_HAVE_PAPI
#include "papi_api.h"

static prof__papi_api P; /* set once by prof__papi_init, on prof_init()'s thread */

/* PAPI's thread id callback: the kernel tid (what PAPI_attach takes). */
static unsigned long papi_thread_id(void) { return (unsigned long)syscall(SYS_gettid); }

static void say(char *why, size_t n, const char *fmt, const char *a, const char *b) {
  if (why && n) snprintf(why, n, fmt, a, b);
}

int prof__papi_init(char *why, size_t n) {
  if (!P.library_init && !prof__papi_load(&P, why, n)) return 0;
  int v = P.library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT) {
    say(why, n, "PAPI_library_init failed: %s%s", v > 0 ? "version mismatch" : P.strerror(v), "");
    return 0;
  }
  /* PAPI is used from the writer thread after this: it must know threads. */
  v = P.thread_init(papi_thread_id);
  if (v != PAPI_OK) {
    say(why, n, "PAPI_thread_init failed: %s%s", P.strerror(v), "");
    return 0;
  }
  const PAPI_component_info_t *c = P.get_component_info(0);
  if (!c) {
    say(why, n, "PAPI has no CPU component%s%s", "", "");
    return 0;
  }
  if (c->disabled) {
    say(why, n, "PAPI component %s is disabled: %s", c->name, c->disabled_reason);
    return 0;
  }
  if (P.num_cmp_hwctrs(0) <= 0) {
    say(why, n, "PAPI component %s reports zero hardware counters%s", c->name, "");
    return 0;
  }
  return 1;
}

static void add_events(prof__papi_set *set, const char *events, char *why, size_t n) {
  char list[512];
  snprintf(list, sizeof list, "%s", events && *events ? events : PROF_PAPI_DEFAULT_EVENTS);
  char *save = NULL;
  for (char *e = strtok_r(list, ", ", &save); e && set->n < PROF_PAPI_MAX; e = strtok_r(NULL, ", ", &save)) {
    int code = 0;
    int rc = P.event_name_to_code(e, &code);
    if (rc == PAPI_OK) rc = P.add_event(set->es, code);
    if (rc != PAPI_OK) {
      size_t used = why ? strlen(why) : 0;
      if (why && used + 1 < n)
        snprintf(why + used, n - used, "%s%s unavailable (%s)", used ? "; " : "", e, P.strerror(rc));
      continue;
    }
    snprintf(set->names[set->n++], sizeof set->names[0], "%s", e);
  }
}

int prof__papi_open(prof__papi_set *set, int tid, const char *events, char *why, size_t n) {
  memset(set, 0, sizeof *set);
  set->es = PAPI_NULL;
  if (why && n) why[0] = 0;
  const char *step = "PAPI_create_eventset";
  int rc = P.create_eventset(&set->es);
  set->open = rc == PAPI_OK;
  if (rc == PAPI_OK) rc = P.assign_eventset_component(set->es, 0), step = "PAPI_assign_eventset_component";
  if (rc == PAPI_OK) rc = P.attach(set->es, (unsigned long)tid), step = "PAPI_attach";
  if (rc != PAPI_OK) {
    say(why, n, "%s: %s", step, P.strerror(rc));
    prof__papi_close(set);
    return 0;
  }
  add_events(set, events, why, n);
  if (set->n > 0 && (rc = P.start(set->es)) != PAPI_OK) {
    say(why, n, "PAPI_start: %s%s", P.strerror(rc), "");
    prof__papi_close(set);
    return 0;
  }
  if (set->n == 0) prof__papi_close(set);
  return set->n;
}

int prof__papi_read(prof__papi_set *set, long long *vals) {
  if (!set || set->n <= 0) return -1;
  return P.read(set->es, vals) == PAPI_OK ? 0 : -1;
}

void prof__papi_close(prof__papi_set *set) {
  if (!set || !set->open || set->es == PAPI_NULL) return;
  long long scratch[PROF_PAPI_MAX];
  if (set->n > 0) P.stop(set->es, scratch);
  P.cleanup_eventset(set->es);
  P.destroy_eventset(&set->es);
  set->es = PAPI_NULL;
  set->open = 0;
  set->n = 0;
}

#else /* built without PAPI */

int prof__papi_init(char *why, size_t n) {
  if (why && n) snprintf(why, n, "this build has no PAPI");
  return 0;
}
int prof__papi_open(prof__papi_set *set, int tid, const char *events, char *why, size_t n) {
  (void)tid, (void)events, (void)why, (void)n;
  memset(set, 0, sizeof *set);
  return 0;
}
int prof__papi_read(prof__papi_set *set, long long *vals) {
  (void)set, (void)vals;
  return -1;
}
void prof__papi_close(prof__papi_set *set) { (void)set; }

#endif
