/* test_papi.c — the PAPI door (src/cpu/papi.c) against mocked PAPI
 * functions: counters present, absent (with PAPI's reason), partially
 * available; plus the real loader on this machine (src/cpu/papi_load.c),
 * which must either give working functions or a reason, and must not map
 * libpapi where the kernel counts no hardware event. PAPI's set-up runs in
 * prof_init() on the caller's thread, never on the writer thread. The
 * loader is replaced (--wrap) by one that fills the table with the mocks
 * below; a mock passes through to the real function when M.real is set. */
// wrap: prof__papi_load
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "cpu/cpu.h"

#if __has_include(<papi.h>)
#include <unistd.h>

#include "cpu/papi_api.h"

static prof__papi_api R; /* the real functions, once the real loader gave them */

static struct {
  int real;              /* pass through to the real PAPI */
  int disabled, hwctrs;
  const char *missing;   /* event names PAPI does not have */
  int attach_rc;
  int added, started, destroyed;
  int lib_inits, thread_inits; /* calls of PAPI_library_init / PAPI_thread_init */
  long lib_init_tid;           /* the thread that called PAPI_library_init last */
  unsigned long (*thread_fn)(void);
} M;
static int mock_library_init(int v) {
  M.lib_inits++;
  M.lib_init_tid = (long)syscall(SYS_gettid);
  return M.real ? R.library_init(v) : (int)PAPI_VER_CURRENT;
}
static int mock_thread_init(unsigned long (*fn)(void)) {
  M.thread_inits++;
  M.thread_fn = fn;
  return M.real ? R.thread_init(fn) : PAPI_OK;
}
static const PAPI_component_info_t *mock_get_component_info(int c) {
  static PAPI_component_info_t info;
  if (M.real) return R.get_component_info(c);
  memset(&info, 0, sizeof info);
  strcpy(info.name, "perf_event");
  info.disabled = M.disabled;
  if (M.disabled) strcpy(info.disabled_reason, "perf_event_paranoid too high");
  return &info;
}
static int mock_num_cmp_hwctrs(int c) { return M.real ? R.num_cmp_hwctrs(c) : M.hwctrs; }
static int mock_create_eventset(int *es) {
  if (M.real) return R.create_eventset(es);
  *es = 7;
  return PAPI_OK;
}
static int mock_assign_eventset_component(int es, int c) {
  return M.real ? R.assign_eventset_component(es, c) : PAPI_OK;
}
static int mock_attach(int es, unsigned long tid) { return M.real ? R.attach(es, tid) : M.attach_rc; }
static int mock_event_name_to_code(const char *n, int *code) {
  if (M.real) return R.event_name_to_code(n, code);
  if (M.missing && strstr(M.missing, n)) return PAPI_ENOEVNT;
  *code = (int)strlen(n);
  return PAPI_OK;
}
static int mock_add_event(int es, int code) {
  if (M.real) return R.add_event(es, code);
  M.added++;
  return PAPI_OK;
}
static int mock_start(int es) {
  if (M.real) return R.start(es);
  M.started++;
  return PAPI_OK;
}
static int mock_read(int es, long long *v) {
  if (M.real) return R.read(es, v);
  for (int i = 0; i < M.added; i++) v[i] = 1000 * (i + 1);
  return PAPI_OK;
}
static int mock_stop(int es, long long *v) { return M.real ? R.stop(es, v) : PAPI_OK; }
static int mock_cleanup_eventset(int es) { return M.real ? R.cleanup_eventset(es) : PAPI_OK; }
static int mock_destroy_eventset(int *es) {
  if (M.real) return R.destroy_eventset(es);
  M.destroyed++;
  *es = PAPI_NULL;
  return PAPI_OK;
}

static char *mock_strerror(int err) {
  static char buf[40];
  if (M.real) return R.strerror(err);
  snprintf(buf, sizeof buf, "mocked PAPI error %d", err);
  return buf;
}

/* The loader the library calls: the mocks, never libpapi itself. */
int __real_prof__papi_load(prof__papi_api *api, char *why, size_t n);
int __wrap_prof__papi_load(prof__papi_api *api, char *why, size_t n) {
  (void)why, (void)n;
  *api = (prof__papi_api){
      .library_init = mock_library_init,
      .thread_init = mock_thread_init,
      .get_component_info = mock_get_component_info,
      .num_cmp_hwctrs = mock_num_cmp_hwctrs,
      .create_eventset = mock_create_eventset,
      .assign_eventset_component = mock_assign_eventset_component,
      .attach = mock_attach,
      .event_name_to_code = mock_event_name_to_code,
      .add_event = mock_add_event,
      .start = mock_start,
      .read = mock_read,
      .stop = mock_stop,
      .cleanup_eventset = mock_cleanup_eventset,
      .destroy_eventset = mock_destroy_eventset,
      .strerror = mock_strerror,
  };
  return 1;
}

static int reset(void **state) {
  (void)state;
  memset(&M, 0, sizeof M);
  M.hwctrs = 6;
  return 0;
}

/* Skip when the library was built without PAPI (its door then says so). */
static void need_papi(void) {
  char why[128] = "";
  prof__papi_init(why, sizeof why);
  memset(&M, 0, sizeof M);
  M.hwctrs = 6;
  if (strstr(why, "no PAPI")) skip();
}

static void counters_present_all_events_count(void **state) {
  (void)state;
  need_papi();
  char why[256] = "";
  assert_int_equal(prof__papi_init(why, sizeof why), 1);
  prof__papi_set set;
  assert_int_equal(prof__papi_open(&set, 1234, NULL, why, sizeof why), 3);
  assert_string_equal(set.names[0], "PAPI_TOT_CYC");
  assert_string_equal(set.names[1], "PAPI_TOT_INS");
  assert_string_equal(set.names[2], "PAPI_L3_TCM");
  assert_string_equal(why, "");
  assert_int_equal(M.started, 1);
  long long v[PROF_PAPI_MAX];
  assert_int_equal(prof__papi_read(&set, v), 0);
  assert_int_equal(v[2], 3000);
  prof__papi_close(&set);
  assert_int_equal(M.destroyed, 1);
  assert_int_equal(prof__papi_read(&set, v), -1); /* closed */
}

static void counters_absent_give_papi_reason(void **state) {
  (void)state;
  need_papi();
  char why[256] = "";
  M.disabled = 1;
  assert_int_equal(prof__papi_init(why, sizeof why), 0);
  assert_non_null(strstr(why, "perf_event_paranoid too high"));
  M.disabled = 0;
  M.hwctrs = 0;
  assert_int_equal(prof__papi_init(why, sizeof why), 0);
  assert_non_null(strstr(why, "zero hardware counters"));
}

static void attach_failure_leaves_nothing_open(void **state) {
  (void)state;
  need_papi();
  char why[256] = "";
  M.attach_rc = PAPI_EPERM;
  prof__papi_set set;
  assert_int_equal(prof__papi_open(&set, 1234, NULL, why, sizeof why), 0);
  assert_non_null(strstr(why, "PAPI_attach"));
  assert_int_equal(M.started, 0);
  assert_int_equal(M.destroyed, 1);
}

static void partial_events_are_skipped_and_named(void **state) {
  (void)state;
  need_papi();
  char why[256] = "";
  M.missing = "PAPI_L3_TCM";
  prof__papi_set set;
  assert_int_equal(prof__papi_open(&set, 1, "PAPI_TOT_CYC, PAPI_L3_TCM,PAPI_TOT_INS", why, sizeof why), 2);
  assert_string_equal(set.names[0], "PAPI_TOT_CYC");
  assert_string_equal(set.names[1], "PAPI_TOT_INS");
  assert_non_null(strstr(why, "PAPI_L3_TCM unavailable"));
  prof__papi_close(&set);
  M.missing = "PAPI_TOT_CYC PAPI_TOT_INS PAPI_L3_TCM";
  assert_int_equal(prof__papi_open(&set, 1, NULL, why, sizeof why), 0); /* none: unusable */
  assert_int_equal(M.started, 1);                                    /* only the first set started */
}

static void *writer_like_cycle(void *arg) {
  (void)arg;
  prof__counters_cycle(NULL, 0);
  prof__counters_cycle(NULL, 1);
  return NULL;
}

/* PAPI_library_init and PAPI_thread_init run once, in prof__counters_start
 * (prof_init, the caller's thread); the writer's cycles never initialise. */
static void papi_set_up_on_callers_thread_at_start(void **state) {
  (void)state;
  need_papi();
  prof__counters_start();
  assert_int_equal(M.lib_inits, 1);
  assert_int_equal(M.lib_init_tid, (long)syscall(SYS_gettid));
  assert_int_equal(M.thread_inits, 1);
  assert_non_null(M.thread_fn);
  assert_int_equal(M.thread_fn(), (unsigned long)syscall(SYS_gettid)); /* kernel tids */
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, writer_like_cycle, NULL), 0);
  pthread_join(th, NULL);
  assert_int_equal(M.lib_inits, 1);
  assert_int_equal(M.thread_inits, 1);
}

/* Whether this process maps a library whose file name contains `name`. */
static int maps_library(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024];
  int hit = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, name)) hit = 1;
  if (f) fclose(f);
  return hit;
}

/* The real loader on this machine: every function of libpapi, or a
 * reason; and where the kernel counts no hardware event, libpapi is never
 * mapped (the cost of loading it is not paid for nothing). With the real
 * functions, the door works or explains. */
static void real_loader_works_or_explains(void **state) {
  (void)state;
  char why[256] = "";
  if (!__real_prof__papi_load(&R, why, sizeof why)) {
    assert_true(strlen(why) > 0);
    assert_null(R.library_init);
    if (strstr(why, "no hardware event")) assert_false(maps_library("libpapi"));
    print_message("no PAPI here: %s\n", why);
    return;
  }
  assert_true(maps_library("libpapi"));
  assert_non_null(R.library_init);
  assert_non_null(R.strerror);
  M.real = 1;
  int ok = prof__papi_init(why, sizeof why);
  if (!ok) {
    assert_true(strlen(why) > 0);
    return;
  }
  prof__papi_set set;
  int n = prof__papi_open(&set, (int)getpid(), NULL, why, sizeof why);
  assert_true(n > 0 || strlen(why) > 0);
  prof__papi_close(&set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(counters_present_all_events_count, reset),
      cmocka_unit_test_setup(counters_absent_give_papi_reason, reset),
      cmocka_unit_test_setup(attach_failure_leaves_nothing_open, reset),
      cmocka_unit_test_setup(partial_events_are_skipped_and_named, reset),
      cmocka_unit_test_setup(papi_set_up_on_callers_thread_at_start, reset),
      cmocka_unit_test_setup(real_loader_works_or_explains, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
static void no_papi_in_this_build(void **state) {
  (void)state;
  char why[128];
  assert_int_equal(prof__papi_init(why, sizeof why), 0);
  assert_non_null(strstr(why, "no PAPI"));
}
int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(no_papi_in_this_build)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
