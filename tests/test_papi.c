/* test_papi.c — the PAPI door (src/cpu/papi.c) against mocked PAPI
 * functions: counters present, absent (with PAPI's reason), partially
 * available; plus a real probe on this machine, which must either work or
 * give a reason (the fallback path). PAPI's set-up runs in prof_init() on
 * the caller's thread, never on the writer thread. */
// wrap: PAPI_library_init PAPI_thread_init PAPI_get_component_info PAPI_num_cmp_hwctrs PAPI_create_eventset PAPI_assign_eventset_component PAPI_attach PAPI_event_name_to_code PAPI_add_event PAPI_start PAPI_read PAPI_stop PAPI_cleanup_eventset PAPI_destroy_eventset
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>

#include "cpu/cpu.h"

#if __has_include(<papi.h>)
#include <papi.h>
#include <unistd.h>

/* The real functions, weak: a library built without PAPI does not link it. */
#define WEAK __attribute__((weak))

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

int __real_PAPI_library_init(int v) WEAK;
int __real_PAPI_thread_init(unsigned long (*fn)(void)) WEAK;
const PAPI_component_info_t *__real_PAPI_get_component_info(int c);
int __real_PAPI_num_cmp_hwctrs(int c) WEAK;
int __real_PAPI_create_eventset(int *es) WEAK;
int __real_PAPI_assign_eventset_component(int es, int c) WEAK;
int __real_PAPI_attach(int es, unsigned long tid) WEAK;
int __real_PAPI_event_name_to_code(const char *n, int *code) WEAK;
int __real_PAPI_add_event(int es, int code) WEAK;
int __real_PAPI_start(int es) WEAK;
int __real_PAPI_read(int es, long long *v) WEAK;
int __real_PAPI_stop(int es, long long *v) WEAK;
int __real_PAPI_cleanup_eventset(int es) WEAK;
int __real_PAPI_destroy_eventset(int *es) WEAK;

int __wrap_PAPI_library_init(int v) {
  M.lib_inits++;
  M.lib_init_tid = (long)syscall(SYS_gettid);
  return M.real ? __real_PAPI_library_init(v) : (int)PAPI_VER_CURRENT;
}
int __wrap_PAPI_thread_init(unsigned long (*fn)(void)) {
  M.thread_inits++;
  M.thread_fn = fn;
  return M.real ? __real_PAPI_thread_init(fn) : PAPI_OK;
}
const PAPI_component_info_t *__wrap_PAPI_get_component_info(int c) {
  static PAPI_component_info_t info;
  if (M.real) return __real_PAPI_get_component_info(c);
  memset(&info, 0, sizeof info);
  strcpy(info.name, "perf_event");
  info.disabled = M.disabled;
  if (M.disabled) strcpy(info.disabled_reason, "perf_event_paranoid too high");
  return &info;
}
int __wrap_PAPI_num_cmp_hwctrs(int c) { return M.real ? __real_PAPI_num_cmp_hwctrs(c) : M.hwctrs; }
int __wrap_PAPI_create_eventset(int *es) {
  if (M.real) return __real_PAPI_create_eventset(es);
  *es = 7;
  return PAPI_OK;
}
int __wrap_PAPI_assign_eventset_component(int es, int c) {
  return M.real ? __real_PAPI_assign_eventset_component(es, c) : PAPI_OK;
}
int __wrap_PAPI_attach(int es, unsigned long tid) { return M.real ? __real_PAPI_attach(es, tid) : M.attach_rc; }
int __wrap_PAPI_event_name_to_code(const char *n, int *code) {
  if (M.real) return __real_PAPI_event_name_to_code(n, code);
  if (M.missing && strstr(M.missing, n)) return PAPI_ENOEVNT;
  *code = (int)strlen(n);
  return PAPI_OK;
}
int __wrap_PAPI_add_event(int es, int code) {
  if (M.real) return __real_PAPI_add_event(es, code);
  M.added++;
  return PAPI_OK;
}
int __wrap_PAPI_start(int es) {
  if (M.real) return __real_PAPI_start(es);
  M.started++;
  return PAPI_OK;
}
int __wrap_PAPI_read(int es, long long *v) {
  if (M.real) return __real_PAPI_read(es, v);
  for (int i = 0; i < M.added; i++) v[i] = 1000 * (i + 1);
  return PAPI_OK;
}
int __wrap_PAPI_stop(int es, long long *v) { return M.real ? __real_PAPI_stop(es, v) : PAPI_OK; }
int __wrap_PAPI_cleanup_eventset(int es) { return M.real ? __real_PAPI_cleanup_eventset(es) : PAPI_OK; }
int __wrap_PAPI_destroy_eventset(int *es) {
  if (M.real) return __real_PAPI_destroy_eventset(es);
  M.destroyed++;
  *es = PAPI_NULL;
  return PAPI_OK;
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

/* The real library on this machine: usable counters, or a reason. */
static void real_probe_works_or_explains(void **state) {
  (void)state;
  if (!__real_PAPI_library_init) skip();
  M.real = 1;
  char why[256] = "";
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
      cmocka_unit_test_setup(real_probe_works_or_explains, reset),
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
