/* papi_api.h — the PAPI functions the counters use, as a table filled at
 * run time (papi_load.c): the library does not link libpapi. Private to
 * src/cpu and its test; needs papi.h (MLPROF_HAVE_PAPI builds only).
 */
#ifndef PROF_PAPI_API_H
#define PROF_PAPI_API_H

#include <stddef.h>

#include <papi.h>

typedef struct prof__papi_api {
  int (*library_init)(int version);
  int (*thread_init)(unsigned long (*id_fn)(void));
  const PAPI_component_info_t *(*get_component_info)(int cidx);
  int (*num_cmp_hwctrs)(int cidx);
  int (*create_eventset)(int *es);
  int (*assign_eventset_component)(int es, int cidx);
  int (*attach)(int es, unsigned long tid);
  int (*event_name_to_code)(const char *name, int *code);
  int (*add_event)(int es, int code);
  int (*start)(int es);
  int (*read)(int es, long long *vals);
  int (*stop)(int es, long long *vals);
  int (*cleanup_eventset)(int es);
  int (*destroy_eventset)(int *es);
  char *(*strerror)(int err);
} prof__papi_api;

/* prof__papi_load (cpu.h) fills it: it first asks the kernel whether this
 * machine counts hardware events at all (one perf_event_open of a hardware
 * event on the calling thread) and only then opens libpapi. Called from
 * prof__papi_init, on the thread that calls prof_init(). */

#endif
