/* papi_load.c — opens PAPI at run time: the one place that loads libpapi.
 *
 * The library does not link PAPI: loading libpapi and libpfm (whose event
 * tables take tens of thousands of relocations) would cost every profiled
 * program several milliseconds at start, and most machines a container runs
 * on (virtual machines, CI runners) offer no hardware counters at all. So
 * the kernel is asked first, with one perf_event_open of a hardware event
 * on the calling thread; only when that works is libpapi opened and its
 * functions resolved into the table papi.c calls through. Tests replace
 * prof__papi_load with --wrap to put mocks in the table.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu.h"

#ifdef MLPROF_HAVE_PAPI
#include "papi_api.h"

#ifndef MLPROF_PAPI_SONAME
#define MLPROF_PAPI_SONAME "libpapi.so"
#endif

/* Whether the kernel counts a hardware event (instructions, user space)
 * for this thread; else why not. errno is left as it was. */
static int hw_counters_present(char *why, size_t n) {
  int saved = errno;
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_HARDWARE;
  a.config = PERF_COUNT_HW_INSTRUCTIONS;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd >= 0) {
    close((int)fd);
    errno = saved;
    return 1;
  }
  snprintf(why, n, "the kernel counts no hardware event here: perf_event_open failed with %s", strerror(errno));
  errno = saved;
  return 0;
}

#define PAPI_FN(field, sym) {#sym, offsetof(prof__papi_api, field)}
static const struct {
  const char *sym;
  size_t off;
} fns[] = {
  PAPI_FN(library_init, PAPI_library_init),
  PAPI_FN(thread_init, PAPI_thread_init),
  PAPI_FN(get_component_info, PAPI_get_component_info),
  PAPI_FN(num_cmp_hwctrs, PAPI_num_cmp_hwctrs),
  PAPI_FN(create_eventset, PAPI_create_eventset),
  PAPI_FN(assign_eventset_component, PAPI_assign_eventset_component),
  PAPI_FN(attach, PAPI_attach),
  PAPI_FN(event_name_to_code, PAPI_event_name_to_code),
  PAPI_FN(add_event, PAPI_add_event),
  PAPI_FN(start, PAPI_start),
  PAPI_FN(read, PAPI_read),
  PAPI_FN(stop, PAPI_stop),
  PAPI_FN(cleanup_eventset, PAPI_cleanup_eventset),
  PAPI_FN(destroy_eventset, PAPI_destroy_eventset),
  PAPI_FN(strerror, PAPI_strerror),
};

int prof__papi_load(prof__papi_api *api, char *why, size_t n) {
  memset(api, 0, sizeof *api);
  if (!hw_counters_present(why, n)) return 0;
  int saved = errno;
  void *lib = dlopen(MLPROF_PAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, n, "PAPI could not be loaded: %s", e ? e : MLPROF_PAPI_SONAME);
    errno = saved;
    return 0;
  }
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    void *f = dlsym(lib, fns[i].sym);
    if (!f) {
      snprintf(why, n, "%s has no %s", MLPROF_PAPI_SONAME, fns[i].sym);
      memset(api, 0, sizeof *api);
      errno = saved;
      return 0; /* the library stays loaded: PAPI may have run constructors */
    }
    memcpy((char *)api + fns[i].off, &f, sizeof f);
  }
  errno = saved;
  return 1;
}
#else /* built without PAPI */

int prof__papi_load(struct prof__papi_api *api, char *why, size_t n) {
  (void)api;
  if (why && n) snprintf(why, n, "this build has no PAPI");
  return 0;
}

#endif /* MLPROF_HAVE_PAPI */
