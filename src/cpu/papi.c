/* papi.c — the door to PAPI (the only file that includes papi.h).
 *
 * Hardware counters are read per thread from the writer thread: each
 * profiled thread gets an event set attached to its tid. PAPI's own set-up
 * (PAPI_library_init, PAPI_thread_init: neither is safe beside a dlopen in
 * another thread) runs once, in prof_init() on the caller's thread
 * (prof__counters_start), never on the writer thread. This file turns
 * PAPI's answers into three cases the counters module acts on: counters
 * present (all events added), partially available (the missing events are
 * named and skipped), or absent (PAPI's own reason is returned, and the
 * caller falls back to software counters). Tests reach it with --wrap mocks.
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu.h"

#ifdef MLPROF_HAVE_PAPI
#include <papi.h>

/* PAPI's thread id callback: the kernel tid (what PAPI_attach takes). */
static unsigned long papi_thread_id(void) { return (unsigned long)syscall(SYS_gettid); }

static void say(char *why, size_t n, const char *fmt, const char *a, const char *b) {
  if (why && n) snprintf(why, n, fmt, a, b);
}

int prof__papi_init(char *why, size_t n) {
  int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT) {
    say(why, n, "PAPI_library_init failed: %s%s", v > 0 ? "version mismatch" : PAPI_strerror(v), "");
    return 0;
  }
  /* PAPI is used from the writer thread after this: it must know threads. */
  v = PAPI_thread_init(papi_thread_id);
  if (v != PAPI_OK) {
    say(why, n, "PAPI_thread_init failed: %s%s", PAPI_strerror(v), "");
    return 0;
  }
  const PAPI_component_info_t *c = PAPI_get_component_info(0);
  if (!c) {
    say(why, n, "PAPI has no CPU component%s%s", "", "");
    return 0;
  }
  if (c->disabled) {
    say(why, n, "PAPI component %s is disabled: %s", c->name, c->disabled_reason);
    return 0;
  }
  if (PAPI_num_cmp_hwctrs(0) <= 0) {
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
    int rc = PAPI_event_name_to_code(e, &code);
    if (rc == PAPI_OK) rc = PAPI_add_event(set->es, code);
    if (rc != PAPI_OK) {
      size_t used = why ? strlen(why) : 0;
      if (why && used + 1 < n)
        snprintf(why + used, n - used, "%s%s unavailable (%s)", used ? "; " : "", e, PAPI_strerror(rc));
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
  int rc = PAPI_create_eventset(&set->es);
  set->open = rc == PAPI_OK;
  if (rc == PAPI_OK) rc = PAPI_assign_eventset_component(set->es, 0), step = "PAPI_assign_eventset_component";
  if (rc == PAPI_OK) rc = PAPI_attach(set->es, (unsigned long)tid), step = "PAPI_attach";
  if (rc != PAPI_OK) {
    say(why, n, "%s: %s", step, PAPI_strerror(rc));
    prof__papi_close(set);
    return 0;
  }
  add_events(set, events, why, n);
  if (set->n > 0 && (rc = PAPI_start(set->es)) != PAPI_OK) {
    say(why, n, "PAPI_start: %s%s", PAPI_strerror(rc), "");
    prof__papi_close(set);
    return 0;
  }
  if (set->n == 0) prof__papi_close(set);
  return set->n;
}

int prof__papi_read(prof__papi_set *set, long long *vals) {
  if (!set || set->n <= 0) return -1;
  return PAPI_read(set->es, vals) == PAPI_OK ? 0 : -1;
}

void prof__papi_close(prof__papi_set *set) {
  if (!set || !set->open || set->es == PAPI_NULL) return;
  long long scratch[PROF_PAPI_MAX];
  if (set->n > 0) PAPI_stop(set->es, scratch);
  PAPI_cleanup_eventset(set->es);
  PAPI_destroy_eventset(&set->es);
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
