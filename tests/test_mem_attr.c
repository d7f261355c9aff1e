/* test_mem_attr.c — memory reaching the user's code: C++ names shortened
 * for the text report (prof__short_name), and an unmodified program whose
 * allocations look like PyTorch's (tests/progs/mem_attr_prog.c) under
 * `mlprof run --mem full`: each site is attributed to its first frame
 * that is not allocator code and to its operator; blocks made by a static
 * constructor or before the first step are "retained", not leaks, and the
 * leaks keep their exact bytes; the live bytes at the heap peak are given
 * by range and by operator; the text shows shortened template names while
 * the JSON keeps the full ones.
 *
 * Under ASan every run test skips (the interposer never sees an allocation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/util/jsonparse.h"
#include "analyze/util/shortname.h"
#include "helpers.h"

#define CLI MLPROF_BIN_DIR "/mlprof"
#define PROG MLPROF_BIN_DIR "/tests/progs/mem_attr_prog"
#define ELL "\xe2\x80\xa6"

static void short_is(const char *in, const char *want) {
  char out[256];
  prof__short_name(in, out, sizeof out);
  if (strcmp(out, want) != 0) fail_msg("'%s' -> '%s', want '%s'", in, out, want);
}

static void names_are_shortened(void **state) {
  (void)state;
  short_is("std::_Hashtable<std::string, std::pair<std::string const, int>, std::allocator<int> >::_M_insert<int>(int&&)",
           "std::_Hashtable<" ELL ">::_M_insert<" ELL ">(" ELL ")");
  short_is("c10::alloc_cpu(unsigned long)", "c10::alloc_cpu(" ELL ")");
  short_is("f()", "f()");
  short_is("operator new(unsigned long)", "operator new(" ELL ")");
  short_is("std::ostream::operator<<(int)", "std::ostream::operator<<(" ELL ")");
  short_is("c10::(anonymous namespace)::g(int)", "c10::(anonymous namespace)::g(" ELL ")");
  short_is("sgemm_", "sgemm_");
  short_is("broken<a<b", "broken<" ELL); /* never closes: cut there */
  char tiny[8];
  prof__short_name("abcdefghijkl", tiny, sizeof tiny);
  assert_int_equal(strlen(tiny), 7);
  prof__short_name("ab<cdef>", tiny, 5); /* the ellipsis is never cut in two */
  assert_string_equal(tiny, "ab<");
}

static int sanitized(void) {
#ifdef MLPROF_SANITIZED
  return 1;
#else
  return 0;
#endif
}

static const prof__jv *with_frame(const prof__jv *arr, const char *frame) {
  for (size_t i = 0; arr && i < arr->len; i++) {
    const prof__jv *f = prof__jv_get(prof__jv_at(arr, i), "frame");
    if (f && f->str && strcmp(f->str, frame) == 0) return prof__jv_at(arr, i);
  }
  return NULL;
}

static const prof__jv *named(const prof__jv *arr, const char *name) {
  for (size_t i = 0; arr && i < arr->len; i++)
    if (strcmp(prof__jv_get(prof__jv_at(arr, i), "name")->str, name) == 0) return prof__jv_at(arr, i);
  return NULL;
}

static double num(const prof__jv *o, const char *k) { return prof__jv_get(o, k)->num; }

static void sites_reach_the_users_code(void **state) {
  (void)state;
  if (sanitized()) skip();
  const char *trace = th_tmp_path("mem_attr", ".mlpt"), *json = th_tmp_path("mem_attr", ".json");
  const char *text = th_tmp_path("mem_attr", ".txt");
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s run --mem full -q --no-report -o '%s' -- %s 2>/dev/null && %s report -f json -o '%s' '%s' && "
           "%s report -o '%s' '%s'", CLI, trace, PROG, CLI, json, trace, CLI, text, trace);
  assert_int_equal(th_run(cmd, NULL), 0);
  size_t len;
  char *body = th_read_file(json, &len), err[256];
  assert_non_null(body);
  prof__jv *r = prof__jv_parse(body, len, err);
  assert_non_null(r);
  free(body);
  const prof__jv *mem = prof__jv_get(r, "memory");
  assert_non_null(mem);
  /* leaks: the operator's block, attributed past c10::alloc_cpu */
  const prof__jv *leaks = prof__jv_get(mem, "leaks");
  const prof__jv *op = with_frame(leaks, "at::_ops::addmm::call()");
  assert_non_null(op);
  assert_true(num(op, "bytes") == 300000);
  assert_string_equal(prof__jv_get(op, "operator")->str, "aten::addmm");
  assert_string_equal(prof__jv_at(prof__jv_get(op, "stack"), 0)->str, "c10::alloc_cpu(unsigned long)");
  const prof__jv *tpl = with_frame(leaks, "void reg::Table<int>::insert<long>(long)");
  assert_non_null(tpl); /* the full name in JSON */
  assert_true(num(tpl, "bytes") == 50000);
  /* retained: the static constructor's and the set-up's blocks, not leaks */
  const prof__jv *kept = prof__jv_get(mem, "retained");
  assert_non_null(kept);
  const prof__jv *ctor = with_frame(kept, "_GLOBAL__sub_I_registry");
  const prof__jv *setup = with_frame(kept, "setup_model");
  assert_true(ctor && setup);
  assert_string_equal(prof__jv_get(ctor, "why")->str, "library_init");
  assert_string_equal(prof__jv_get(setup, "why")->str, "startup");
  assert_true(num(ctor, "bytes") == 100000 && num(setup, "bytes") == 200000);
  assert_null(with_frame(leaks, "_GLOBAL__sub_I_registry"));
  assert_null(with_frame(leaks, "setup_model"));
  assert_true(num(mem, "retained_bytes") >= 300000);
  /* the heap peak by range and by operator */
  const prof__jv *fc1 = named(prof__jv_get(mem, "peak_by_range"), "fc1");
  assert_non_null(fc1);
  assert_true(num(fc1, "bytes") == 750000);
  const prof__jv *addmm = named(prof__jv_get(mem, "peak_by_operator"), "aten::addmm");
  assert_non_null(addmm);
  assert_true(num(addmm, "bytes") == 300000);
  prof__jv_free(r);
  /* the text: shortened names, the operator beside the site */
  char *t = th_read_file(text, &len);
  assert_non_null(t);
  assert_non_null(strstr(t, "retained until exit"));
  assert_non_null(strstr(t, "reg::Table<" ELL ">::insert<" ELL ">(" ELL ")"));
  assert_null(strstr(t, "Table<int>"));
  assert_non_null(strstr(t, "at::_ops::addmm::call() < main"));
  assert_non_null(strstr(t, "  [aten::addmm]"));
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_are_shortened),
      cmocka_unit_test(sites_reach_the_users_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
