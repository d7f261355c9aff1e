/* test_scope.c — scoped ranges and the compile-out switch (mlprof.h,
 * mlprof.hpp).
 *
 * PROF_SCOPE in C closes its range on every way out of a block (end,
 * return, break, continue, goto), nests, and shares a line; mlprof::Range
 * and mlprof::Step in C++ (tests/progs/scope_cxx.cpp) nest and close when an
 * exception passes through. Both are checked by reading the trace back.
 * Built with -DMLPROF_DISABLED and no libmlprof, tests/progs/api_calls.c
 * links, runs, prints exactly what the linked program prints under
 * MLPROF_DISABLE=1, and references no prof_* symbol; every function of
 * mlprof.h has its stub. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

#define PROGS MLPROF_BIN_DIR "/tests/progs"
#define HEADER MLPROF_SRC_DIR "/include/mlprof.h"

/* Run `cmd` with its output in `out`; print the output on failure. */
static int run_logged(const char *cmd, const char *out) {
  int rc = th_run(cmd, out);
  if (rc != 0) {
    char *text = th_read_file(out, NULL);
    print_message("command failed (%d): %s\n%s\n", rc, cmd, text ? text : "");
    free(text);
  }
  return rc;
}

/* ---- The trace as one line of tokens ----------------------------------- */

typedef struct tok_names {
  uint32_t id[64];
  char name[64][32];
  int n;
} tok_names;

static const char *name_of(const tok_names *t, uint32_t id) {
  for (int i = 0; i < t->n; i++)
    if (t->id[i] == id) return t->name[i];
  return "?";
}

/* Steps, ranges and marks of `path` in order: "S" and "E" for a step's
 * begin and end, "+name" (":cat" when not compute) and "-name" for a
 * range, "!name" for a mark, separated by spaces. */
static void trace_tokens(const char *path, char *out, size_t len) {
  prof__reader *r = NULL;
  char err[256] = "";
  int rc = prof__reader_open(&r, path, err);
  if (rc != 0) print_message("%s: %s\n", path, err);
  assert_int_equal(rc, 0);
  static prof__event evs[512];
  static tok_names names;
  size_t nev = 0;
  names.n = 0;
  prof__rec rec;
  int n;
  while ((n = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_STRING && names.n < 64) {
      names.id[names.n] = rec.id;
      snprintf(names.name[names.n++], sizeof names.name[0], "%.*s", (int)rec.len, rec.str);
    }
    if (rec.kind != PROF_REC_EVENT) continue;
    int t = rec.ev.type;
    if ((t == PROF_EV_RANGE_BEGIN || t == PROF_EV_RANGE_END || t == PROF_EV_MARK || t == PROF_EV_STEP_BEGIN ||
         t == PROF_EV_STEP_END) && nev < 512)
      evs[nev++] = rec.ev;
  }
  assert_int_equal(n, 0);
  assert_true(prof__reader_has_footer(r));
  prof__reader_close(r);
  size_t pos = 0;
  out[0] = 0;
  for (size_t i = 0; i < nev && pos < len; i++) {
    const prof__event *e = &evs[i];
    const char *nm = name_of(&names, e->name);
    int w = 0;
    if (e->type == PROF_EV_STEP_BEGIN) w = snprintf(out + pos, len - pos, "%sS", pos ? " " : "");
    if (e->type == PROF_EV_STEP_END) w = snprintf(out + pos, len - pos, "%sE", pos ? " " : "");
    if (e->type == PROF_EV_MARK) w = snprintf(out + pos, len - pos, "%s!%s", pos ? " " : "", nm);
    if (e->type == PROF_EV_RANGE_END) w = snprintf(out + pos, len - pos, "%s-%s", pos ? " " : "", nm);
    if (e->type == PROF_EV_RANGE_BEGIN) {
      if (e->cat)
        w = snprintf(out + pos, len - pos, "%s+%s:%d", pos ? " " : "", nm, e->cat);
      else
        w = snprintf(out + pos, len - pos, "%s+%s", pos ? " " : "", nm);
    }
    if (w > 0) pos += (size_t)w;
  }
}

/* ---- PROF_SCOPE in C ------------------------------------------------------ */

static int scoped(int early) {
  PROF_SCOPE("outer");
  {
    PROF_SCOPE_CAT("inner", PROF_CAT_DATA);
    PROF_SCOPE("inner2");
    if (early) return 1;
  }
  for (int i = 0; i < 3; i++) {
    PROF_SCOPE("loop");
    if (i == 0) continue;
    if (i == 1) break;
    prof_mark("never");
  }
  {
    PROF_SCOPE(NULL); /* ignored and counted; must not pop "outer" */
    prof_mark("in_null");
  }
  PROF_SCOPE("a"); PROF_SCOPE("b"); /* one line: two variables */
  prof_range_push("explicit");
  prof_range_pop();
  {
    PROF_SCOPE("jump");
    goto done;
  }
done:
  prof_mark("done");
  return 0;
}

static void c_scopes_close_on_every_way_out(void **state) {
  (void)state;
  const char *path = th_tmp_path("scope-c", ".mlpt");
  setenv("MLPROF_MODULES", "none", 1);
  setenv("MLPROF_MEM", "off", 1);
  prof_config cfg = prof_config_default();
  cfg.output = path;
  cfg.report = 0;
  assert_int_equal(prof_init(&cfg), 0);
  assert_int_equal(prof_start(), 0);
  assert_int_equal(scoped(1), 1);
  assert_int_equal(scoped(0), 0);
  assert_int_equal(prof_stop(), 0);
  prof_stats st = {.size = sizeof st};
  assert_int_equal(prof_stats_get(&st), 0);
  assert_int_equal(st.misuse, 1); /* the NULL name; no unbalanced pop */
  assert_int_equal(prof_shutdown(), 0);
  char got[2048];
  trace_tokens(path, got, sizeof got);
  const char *want = "S +outer +inner:1 +inner2 -inner2 -inner -outer "
                     "+outer +inner:1 +inner2 -inner2 -inner +loop -loop +loop -loop !in_null "
                     "+a +b +explicit -explicit +jump -jump !done -b -a -outer E";
  if (strcmp(got, want) != 0) print_message("got:  %s\nwant: %s\n", got, want);
  assert_string_equal(got, want);
}

/* ---- mlprof::Range and mlprof::Step in C++ -------------------------------- */

static void cxx_range_and_step_nest_and_unwind(void **state) {
  (void)state;
#ifndef MLPROF_SCOPE_CXX
  print_message("no C++ compiler at configure time: scope_cxx not built\n");
  skip();
#endif
  const char *path = th_tmp_path("scope-cxx", ".mlpt");
  const char *out = th_tmp_path("scope-cxx", ".txt");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "MLPROF_MODULES=none MLPROF_MEM=off '%s/scope_cxx' '%s'", PROGS, path);
  assert_int_equal(run_logged(cmd, out), 0);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "misuse 1\n")); /* the inner Step, started while one is open */
  free(text);
  char got[2048];
  trace_tokens(path, got, sizeof got);
  const char *step0 = "S +forward +load:1 -load +work -work +scoped_throw -scoped_throw +tail:3 -tail -forward E";
  const char *step1 = "S +forward +load:1 -load +work -work !caught +scoped_throw -scoped_throw !caught_scope "
                      "+tail:3 -tail -forward E";
  char want[1024];
  snprintf(want, sizeof want, "%s %s S E", step0, step1);
  if (strcmp(got, want) != 0) print_message("got:  %s\nwant: %s\n", got, want);
  assert_string_equal(got, want);
}

/* ---- The compile-out switch ---------------------------------------------- */

/* Symbols of `exe` whose names start with "prof_" (the first few printed
 * when `show`), or -1. */
static int prof_symbols(const char *exe, int show) {
  const char *out = th_tmp_path("scope-nm", ".txt");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "nm '%s'", exe);
  if (run_logged(cmd, out) != 0) return -1;
  char *text = th_read_file(out, NULL);
  if (!text) return -1;
  int found = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    const char *sym = strrchr(line, ' ');
    sym = sym ? sym + 1 : line;
    if (strncmp(sym, "prof_", 5) == 0) {
      if (show && found < 5) print_message("  %s: %s\n", exe, sym);
      found++;
    }
  }
  free(text);
  return found;
}

/* Compile `src` with -DMLPROF_DISABLED at -O0 (stubs not inlined away) and
 * no libmlprof into `exe`, with compiler `cc` and `flags`. */
static int compile_off(const char *cc, const char *flags, const char *src, const char *exe) {
  char cmd[2000];
  snprintf(cmd, sizeof cmd,
           "%s %s -O0 -Wall -Wextra -Werror -pedantic -DMLPROF_DISABLED -I'%s/include' '%s' -o '%s'", cc,
           flags, MLPROF_SRC_DIR, src, exe);
  return run_logged(cmd, th_tmp_path("scope-cc", ".txt"));
}

static void compiled_out_program_links_alone_and_acts_disabled(void **state) {
  (void)state;
  const char *exe = th_tmp_path("api-off", "");
  assert_int_equal(compile_off("cc", "-std=c11", MLPROF_SRC_DIR "/tests/progs/api_calls.c", exe), 0);
  const char *trace_off = th_tmp_path("api-off", ".mlpt"), *trace_on = th_tmp_path("api-on", ".mlpt");
  const char *out_off = th_tmp_path("api-off", ".txt"), *out_on = th_tmp_path("api-on", ".txt");
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "env -u MLPROF_DISABLE '%s' '%s' 2>/dev/null", exe, trace_off);
  assert_int_equal(run_logged(cmd, out_off), 0);
  snprintf(cmd, sizeof cmd, "MLPROF_DISABLE=1 '%s/api_calls' '%s' 2>/dev/null", PROGS, trace_on);
  assert_int_equal(run_logged(cmd, out_on), 0);
  char *off = th_read_file(out_off, NULL), *on = th_read_file(out_on, NULL);
  assert_non_null(off);
  assert_non_null(on);
  if (strcmp(off, on) != 0) print_message("compiled out:\n%s\nMLPROF_DISABLE=1:\n%s\n", off, on);
  assert_string_equal(off, on);
  assert_non_null(strstr(off, "init -5\n"));         /* PROF_EDISABLED */
  assert_non_null(strstr(off, "evaluated 28\n"));    /* each argument once */
  free(off);
  free(on);
  assert_false(th_exists(trace_off));
  assert_false(th_exists(trace_on));
}

static void compiled_out_programs_reference_no_prof_symbol(void **state) {
  (void)state;
  const char *exe = th_tmp_path("api-off", "");
  assert_int_equal(compile_off("cc", "-std=c11", MLPROF_SRC_DIR "/tests/progs/api_calls.c", exe), 0);
  assert_int_equal(prof_symbols(exe, 1), 0);
  assert_true(prof_symbols(PROGS "/api_calls", 0) > 10); /* the check sees them when they are there */
  if (th_run("command -v clang >/dev/null", NULL) == 0) {
    const char *exe2 = th_tmp_path("api-off-clang", "");
    assert_int_equal(compile_off("clang", "-std=c99", MLPROF_SRC_DIR "/tests/progs/api_calls.c", exe2), 0);
    assert_int_equal(prof_symbols(exe2, 1), 0);
  }
  if (th_run("command -v c++ >/dev/null", NULL) != 0) {
    print_message("no c++ command: the C++ compile-out check is skipped\n");
    return;
  }
  const char *cxx = th_tmp_path("scope-cxx-off", "");
  assert_int_equal(compile_off("c++", "-std=c++11", MLPROF_SRC_DIR "/tests/progs/scope_cxx.cpp", cxx), 0);
  assert_int_equal(prof_symbols(cxx, 1), 0);
  const char *trace = th_tmp_path("scope-cxx-off", ".mlpt"), *out = th_tmp_path("scope-cxx-off", ".txt");
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "'%s' '%s'", cxx, trace);
  assert_int_equal(run_logged(cmd, out), 0);
  char *text = th_read_file(out, NULL);
  assert_non_null(text);
  assert_string_equal(text, "disabled\nmisuse 0\n");
  free(text);
  assert_false(th_exists(trace));
}

/* Every function declared PROF_API in mlprof.h is mapped to a stub and the
 * stub is defined, so a function added later cannot miss the switch. */
static void every_api_function_has_a_stub(void **state) {
  (void)state;
  char *h = th_read_file(HEADER, NULL);
  assert_non_null(h);
  int functions = 0;
  for (const char *p = strstr(h, "\nPROF_API "); p; p = strstr(p + 1, "\nPROF_API ")) {
    const char *paren = strchr(p, '(');
    assert_non_null(paren);
    const char *b = paren;
    while (b > p && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= '0' && b[-1] <= '9'))) b--;
    char name[64], want[200];
    snprintf(name, sizeof name, "%.*s", (int)(paren - b), b);
    assert_int_equal(strncmp(name, "prof_", 5), 0);
    snprintf(want, sizeof want, "define %s mlprof__off_%s\n", name, name + 5);
    if (!strstr(h, want)) print_message("mlprof.h: no compile-out mapping '%s'\n", want);
    assert_non_null(strstr(h, want));
    snprintf(want, sizeof want, "mlprof__off_%s(", name + 5);
    if (!strstr(h, want)) print_message("mlprof.h: no compile-out stub for %s\n", name);
    assert_non_null(strstr(h, want));
    functions++;
  }
  free(h);
  assert_true(functions >= 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(c_scopes_close_on_every_way_out),
    cmocka_unit_test(cxx_range_and_step_nest_and_unwind),
    cmocka_unit_test(compiled_out_program_links_alone_and_acts_disabled),
    cmocka_unit_test(compiled_out_programs_reference_no_prof_symbol),
    cmocka_unit_test(every_api_function_has_a_stub),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
