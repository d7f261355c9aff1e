/* test_json.c — the JSON writer (escaping, commas, nesting, non-finite
 * numbers) and the strict JSON reader used to check reports. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/util/json.h"
#include "analyze/util/jsonparse.h"

typedef struct mem {
  char *buf;
  size_t len;
  FILE *f;
  prof__json j;
} mem;

static int mem_setup(void **state) {
  mem *m = calloc(1, sizeof *m);
  m->f = open_memstream(&m->buf, &m->len);
  *state = m;
  return 0;
}

static int mem_teardown(void **state) {
  mem *m = *state;
  if (m->f) fclose(m->f);
  free(m->buf);
  free(m);
  return 0;
}

/* Close the stream and return what was written. */
static const char *mem_text(mem *m) {
  fclose(m->f);
  m->f = NULL;
  return m->buf;
}

static void compact_object_places_commas(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 0);
  prof__json_obj_begin(&m->j);
  prof__json_kint(&m->j, "a", -3);
  prof__json_kuint(&m->j, "b", UINT64_MAX);
  prof__json_kbool(&m->j, "c", 1);
  prof__json_key(&m->j, "d");
  prof__json_null(&m->j);
  prof__json_obj_end(&m->j);
  assert_string_equal(mem_text(m), "{\"a\":-3,\"b\":18446744073709551615,\"c\":true,\"d\":null}");
}

static void nesting_and_empty_containers(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 0);
  prof__json_arr_begin(&m->j);
  prof__json_arr_begin(&m->j);
  prof__json_arr_end(&m->j);
  prof__json_obj_begin(&m->j);
  prof__json_obj_end(&m->j);
  prof__json_obj_begin(&m->j);
  prof__json_key(&m->j, "x");
  prof__json_arr_begin(&m->j);
  prof__json_int(&m->j, 1);
  prof__json_int(&m->j, 2);
  prof__json_arr_end(&m->j);
  prof__json_kstr(&m->j, "y", "z");
  prof__json_obj_end(&m->j);
  prof__json_raw(&m->j, "{\"r\":1}");
  prof__json_arr_end(&m->j);
  assert_string_equal(mem_text(m), "[[],{},{\"x\":[1,2],\"y\":\"z\"},{\"r\":1}]");
}

static void strings_are_escaped(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 0);
  prof__json_arr_begin(&m->j);
  prof__json_str(&m->j, "q\"b\\n\nt\tc\x01 \x7f");
  prof__json_strn(&m->j, "ab\0c", 4);
  prof__json_str(&m->j, "caf\xc3\xa9");      /* valid UTF-8 kept */
  prof__json_str(&m->j, "bad\xff\xc3");       /* invalid bytes replaced */
  prof__json_str(&m->j, "\xed\xa0\x80");      /* UTF-16 surrogate as UTF-8: invalid */
  prof__json_arr_end(&m->j);
  assert_string_equal(mem_text(m),
                      "[\"q\\\"b\\\\n\\nt\\tc\\u0001 \x7f\",\"ab\\u0000c\",\"caf\xc3\xa9\","
                      "\"bad\xef\xbf\xbd\xef\xbf\xbd\",\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"]");
}

static void keys_are_escaped_too(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 0);
  prof__json_obj_begin(&m->j);
  prof__json_kint(&m->j, "a\"b", 1);
  prof__json_obj_end(&m->j);
  assert_string_equal(mem_text(m), "{\"a\\\"b\":1}");
}

static void non_finite_numbers_become_null(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 0);
  prof__json_arr_begin(&m->j);
  prof__json_num(&m->j, NAN);
  prof__json_num(&m->j, INFINITY);
  prof__json_num(&m->j, -INFINITY);
  prof__json_num(&m->j, 0.1);
  prof__json_num(&m->j, 2.5);
  prof__json_num(&m->j, 1e300);
  prof__json_arr_end(&m->j);
  assert_string_equal(mem_text(m), "[null,null,null,0.1,2.5,1e+300]");
}

static void numbers_round_trip(void **state) {
  mem *m = *state;
  const double vals[] = {1.0 / 3.0, 123456789.123456789, -7e-12, 0.0};
  prof__json_init(&m->j, m->f, 0);
  prof__json_arr_begin(&m->j);
  for (size_t i = 0; i < 4; i++) prof__json_num(&m->j, vals[i]);
  prof__json_arr_end(&m->j);
  const char *t = mem_text(m);
  char err[128];
  prof__jv *v = prof__jv_parse(t, strlen(t), err);
  assert_non_null(v);
  for (size_t i = 0; i < 4; i++) assert_true(prof__jv_at(v, i)->num == vals[i]);
  prof__jv_free(v);
}

static void pretty_output_parses_back(void **state) {
  mem *m = *state;
  prof__json_init(&m->j, m->f, 1);
  prof__json_obj_begin(&m->j);
  prof__json_kstr(&m->j, "name", "line1\nline2");
  prof__json_key(&m->j, "list");
  prof__json_arr_begin(&m->j);
  for (int i = 0; i < 3; i++) {
    prof__json_obj_begin(&m->j);
    prof__json_kint(&m->j, "i", i);
    prof__json_obj_end(&m->j);
  }
  prof__json_arr_end(&m->j);
  prof__json_key(&m->j, "empty");
  prof__json_arr_begin(&m->j);
  prof__json_arr_end(&m->j);
  prof__json_obj_end(&m->j);
  const char *t = mem_text(m);
  assert_non_null(strchr(t, '\n'));
  char err[128];
  prof__jv *v = prof__jv_parse(t, strlen(t), err);
  assert_non_null(v);
  assert_string_equal(prof__jv_get(v, "name")->str, "line1\nline2");
  const prof__jv *list = prof__jv_get(v, "list");
  assert_int_equal(list->len, 3);
  assert_true(prof__jv_get(prof__jv_at(list, 2), "i")->num == 2);
  assert_int_equal(prof__jv_get(v, "empty")->len, 0);
  prof__jv_free(v);
}

static void parser_rejects_invalid_json(void **state) {
  (void)state;
  const char *bad[] = {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "[.5]",
                       "\"a\nb\"", "\"\\x\"", "[1] 2", "nul", "{1:2}", "\"\\ud800\"", "[-]",
                       "\"abc"};
  char err[128];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    prof__jv *v = prof__jv_parse(bad[i], strlen(bad[i]), err);
    if (v) fail_msg("accepted invalid JSON: %s", bad[i]);
    assert_non_null(strstr(err, "JSON error"));
  }
}

static void parser_decodes_escapes(void **state) {
  (void)state;
  const char *t = " {\"s\": \"a\\u00e9\\ud83d\\ude00\\/\\\"\", \"n\": -1.5e2, \"t\": [true, false, null]} ";
  char err[128];
  prof__jv *v = prof__jv_parse(t, strlen(t), err);
  assert_non_null(v);
  assert_string_equal(prof__jv_get(v, "s")->str, "a\xc3\xa9\xf0\x9f\x98\x80/\"");
  assert_true(prof__jv_get(v, "n")->num == -150.0);
  const prof__jv *arr = prof__jv_get(v, "t");
  assert_int_equal(prof__jv_at(arr, 0)->type, PROF_JV_BOOL);
  assert_int_equal(prof__jv_at(arr, 0)->boolean, 1);
  assert_int_equal(prof__jv_at(arr, 2)->type, PROF_JV_NULL);
  assert_null(prof__jv_at(arr, 3));
  prof__jv_free(v);
}

static void parser_limits_depth(void **state) {
  (void)state;
  char deep[1200];
  memset(deep, '[', 600);
  memset(deep + 600, ']', 600);
  char err[128];
  assert_null(prof__jv_parse(deep, 1200, err));
  assert_non_null(strstr(err, "deep"));
  prof__jv *v = prof__jv_parse(deep + 500, 200, err); /* 100 levels: fine */
  assert_non_null(v);
  prof__jv_free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(compact_object_places_commas, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(nesting_and_empty_containers, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(strings_are_escaped, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(keys_are_escaped_too, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(non_finite_numbers_become_null, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(numbers_round_trip, mem_setup, mem_teardown),
    cmocka_unit_test_setup_teardown(pretty_output_parses_back, mem_setup, mem_teardown),
    cmocka_unit_test(parser_rejects_invalid_json),
    cmocka_unit_test(parser_decodes_escapes),
    cmocka_unit_test(parser_limits_depth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
