/* test_speedscope.c — mlprof's exports in speedscope, the flame-graph
 * viewer, in a real browser. scripts/speedscope-check serves speedscope and
 * the file to headless Chromium, and passes when speedscope loaded the file
 * with no error, alert, console error or warning (its importer warns when
 * the events of a thread do not nest) and every given name is a row of its
 * sandwich view.
 *  - The example trainer's trace, exported with `mlprof export --chrome`
 *    and `--folded`. The names come from the trace: its report (range
 *    names, first and last step, the hottest sampled function) and the
 *    frames of the heaviest folded stack.
 *  - A hand-made trace with the timings that trip speedscope's importer:
 *    ranges closed at one instant (a parent's end closing its child, two
 *    ranges left open at the end of the trace), at times where the child's
 *    ts + dur comes out larger than its parent's in floating point, and a
 *    zero-length range at the time another range begins.
 *  - The merged export (`mlprof export --chrome T0 T1`) of two ranks with
 *    those timings, the zero-length range carrying a COMM record.
 * Skips when Chromium, node/npm or the npm packages are not available. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_analyze_tb.h"
#include "analyze/util/jsonparse.h"

#define TRAINER MLPROF_BIN_DIR "/examples/train_mlp"
#define MLPROF MLPROF_BIN_DIR "/mlprof"
#define MAX_NAMES 24

typedef struct names {
  char *v[MAX_NAMES];
  int n;
} names;

static void add_name(names *ns, const char *s, size_t len) {
  for (int i = 0; i < ns->n; i++)
    if (strlen(ns->v[i]) == len && memcmp(ns->v[i], s, len) == 0) return;
  if (ns->n == MAX_NAMES || len == 0) return;
  ns->v[ns->n] = strndup(s, len);
  assert_non_null(ns->v[ns->n]);
  ns->n++;
}

static void free_names(names *ns) {
  for (int i = 0; i < ns->n; i++) free(ns->v[i]);
  ns->n = 0;
}

/* Append ' s' to cmd, single-quoted for the shell. */
static void append_arg(char *cmd, size_t cap, const char *s) {
  size_t n = strlen(cmd);
  if (n + 3 < cap) cmd[n++] = ' ', cmd[n++] = '\'';
  for (; *s && n + 6 < cap; s++) {
    if (*s == '\'') {
      memcpy(cmd + n, "'\\''", 4);
      n += 4;
    } else {
      cmd[n++] = *s;
    }
  }
  if (n + 2 < cap) cmd[n++] = '\'';
  cmd[n] = 0;
}

/* Run scripts/speedscope-check on `file` with `ns`; skips the test when the
 * script says it cannot run here, fails it when the check fails. */
static void check_in_speedscope(const char *file, const names *ns, const char *outdir) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s/scripts/speedscope-check' -o '%s' '%s'", MLPROF_SRC_DIR, outdir, file);
  for (int i = 0; i < ns->n; i++) append_arg(cmd, sizeof cmd, ns->v[i]);
  const char *log = th_tmp_path("speedscope-check", ".log");
  int rc = th_run(cmd, log);
  char *out = th_read_file(log, NULL);
  if (rc == 77) {
    printf("skipping: %s", out ? out : "speedscope-check cannot run here\n");
    free(out);
    skip();
  }
  if (rc != 0) fail_msg("speedscope-check exited %d on %s:\n%s", rc, file, out ? out : "");
  assert_non_null(strstr(out, "speedscope-check: ok"));
  printf("%s", out);
  free(out);
  const char *base = strrchr(file, '/');
  snprintf(cmd, sizeof cmd, "%s/%s.png", outdir, base ? base + 1 : file);
  assert_true(th_exists(cmd)); /* the screenshot */
}

static prof__jv *json_file(const char *path) {
  size_t len;
  char err[128];
  char *text = th_read_file(path, &len);
  assert_non_null(text);
  prof__jv *v = prof__jv_parse(text, len, err);
  free(text);
  if (!v) fail_msg("%s: %s", path, err);
  return v;
}

/* From the report: every range name, the first and the last step. */
static void chrome_names_from_report(const char *report, names *ns) {
  prof__jv *r = json_file(report);
  const prof__jv *ranges = prof__jv_get(r, "ranges");
  assert_non_null(ranges);
  for (size_t i = 0; i < ranges->len; i++) {
    const prof__jv *name = prof__jv_get(&ranges->items[i], "name");
    if (name && name->type == PROF_JV_STR) add_name(ns, name->str, strlen(name->str));
  }
  const prof__jv *steps = prof__jv_path(r, "steps.per_step");
  assert_non_null(steps);
  assert_true(steps->len > 0);
  const prof__jv *ends[2] = {prof__jv_at(steps, 0), prof__jv_at(steps, steps->len - 1)};
  for (int i = 0; i < 2; i++) {
    char s[48];
    const prof__jv *num = prof__jv_get(ends[i], "number");
    assert_non_null(num);
    snprintf(s, sizeof s, "step %.0f", num->num);
    add_name(ns, s, strlen(s));
  }
  prof__jv_free(r);
}

/* The hottest sampled function that is not inlined (the report's), and the
 * frames of the heaviest folded stack (the first line) and the leaves of the
 * next ones. */
static void folded_names(const char *report, const char *folded, names *ns) {
  prof__jv *r = json_file(report);
  const prof__jv *top = prof__jv_path(r, "functions.top_self");
  assert_non_null(top);
  for (size_t i = 0; i < top->len; i++) {
    const prof__jv *name = prof__jv_get(&top->items[i], "name"), *inl = prof__jv_get(&top->items[i], "inlined");
    if (name && name->type == PROF_JV_STR && !(inl && inl->boolean)) {
      add_name(ns, name->str, strlen(name->str));
      break;
    }
  }
  prof__jv_free(r);
  assert_int_equal(ns->n, 1);
  char *text = th_read_file(folded, NULL);
  assert_non_null(text);
  int line = 0;
  for (char *p = text; *p && line < 4; line++) {
    char *eol = strchr(p, '\n'), *sp;
    if (!eol) eol = p + strlen(p);
    for (sp = eol; sp > p && sp[-1] != ' '; sp--) {}
    assert_true(sp > p); /* "FRAME;FRAME;... WEIGHT" */
    const char *end = sp - 1;
    for (const char *f = p; f < end;) {
      const char *semi = memchr(f, ';', (size_t)(end - f));
      const char *fe = semi ? semi : end;
      if (line == 0 || !semi) add_name(ns, f, (size_t)(fe - f));
      f = fe + 1;
    }
    p = *eol ? eol + 1 : eol;
  }
  free(text);
  assert_true(ns->n >= 3);
}

static void demo_exports_load_in_speedscope(void **state) {
  (void)state;
  if (!th_exists(TRAINER)) {
    printf("skipping: the example trainer is not built\n");
    skip();
  }
  const char *dir = th_tmp_path("speedscope", "");
  char cmd[4096], path[1024], trace[1024], report[1100], chrome[1100], folded[1100];
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s' && MLPROF_OUTPUT='%s' MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_SAMPLE_HZ=1000 '%s' --steps 40", dir, dir,
           TRAINER);
  assert_int_equal(th_run(cmd, th_tmp_path("speedscope-train", ".log")), 0);
  snprintf(cmd, sizeof cmd, "ls '%s'/*.mlpt > '%s/name.txt'", dir, dir);
  assert_int_equal(th_run(cmd, NULL), 0);
  snprintf(path, sizeof path, "%s/name.txt", dir);
  char *name = th_read_file(path, NULL);
  assert_non_null(name);
  name[strcspn(name, "\n")] = 0;
  snprintf(trace, sizeof trace, "%s", name);
  free(name);
  snprintf(report, sizeof report, "%s.report.json", trace);
  snprintf(chrome, sizeof chrome, "%s.trace.json", trace);
  snprintf(folded, sizeof folded, "%s.folded", trace);
  snprintf(cmd, sizeof cmd, "'%s' export --chrome '%s' && '%s' export --folded '%s'", MLPROF, trace, MLPROF, trace);
  assert_int_equal(th_run(cmd, th_tmp_path("speedscope-export", ".log")), 0);

  names ns = {0};
  chrome_names_from_report(report, &ns);
  snprintf(path, sizeof path, "%s/check", dir);
  check_in_speedscope(chrome, &ns, path);
  free_names(&ns);
  folded_names(report, folded, &ns);
  check_in_speedscope(folded, &ns, path);
  free_names(&ns);
}

/* Thread 7, times in ns after the first event (base 1 s, plus `shift`):
 *   setup [0, 500); epoch from 1003 holding batch from 2003, both ended by
 *   epoch's end at 3001; tick [4000, 4000) then load [4000, 6000);
 *   pop [6102, 6204) then push [6204, 6500), back to back (6.102 + 0.102
 *   > 6.204 in doubles: pop's end would read after push's begin);
 *   outer from 7535539027 holding inner from 7679830883, both open at the
 *   thread's last event, a mark at 7707139652.
 * Written at one instant, batch's and inner's ends would read later than
 * epoch's and outer's once speedscope adds ts and dur in doubles (2.003 +
 * 0.998 > 1.003 + 1.998), and a zero-length complete event sharing its
 * time with another begin is ended before it begins. With `comm`, tick
 * carries a COMM record (8 bytes, 2 ranks, peer 1), which the merged
 * export writes as the args of its events. */
static void edge_events(tb *t, uint64_t shift, int comm) {
  const uint64_t b = 1000000000 + shift;
  const char *s[] = {"setup", "epoch", "batch", "tick", "load", "outer", "inner", "last", "pop", "push"};
  for (uint32_t i = 0; i < 10; i++) tb_str(t, i + 1, s[i]);
  tb_b(t, 7, b, 1, PROF_CAT_OTHER);
  tb_e(t, 7, b + 500, 1);
  tb_b(t, 7, b + 1003, 2, PROF_CAT_COMPUTE);
  tb_b(t, 7, b + 2003, 3, PROF_CAT_COMPUTE);
  tb_e(t, 7, b + 3001, 2);
  tb_b(t, 7, b + 4000, 4, comm ? PROF_CAT_COMM : PROF_CAT_OTHER);
  if (comm) {
    prof__event e = {.ts = b + 4000, .type = PROF_EV_COMM, .name = 4, .cat = PROF_CAT_COMM,
                     .a = 8, .b = (2ull << 32) | 2}; /* 2 ranks, peer 1 */
    if (prof__tw_events(t->w, 7, &e, 1)) abort();
  }
  tb_e(t, 7, b + 4000, 4);
  tb_b(t, 7, b + 4000, 5, PROF_CAT_DATA);
  tb_e(t, 7, b + 6000, 5);
  tb_b(t, 7, b + 6102, 9, PROF_CAT_COMPUTE);
  tb_e(t, 7, b + 6204, 9);
  tb_b(t, 7, b + 6204, 10, PROF_CAT_COMPUTE);
  tb_e(t, 7, b + 6500, 10);
  tb_b(t, 7, b + 7535539027ull, 6, PROF_CAT_COMPUTE);
  tb_b(t, 7, b + 7679830883ull, 7, PROF_CAT_COMPUTE);
  tb_mark(t, 7, b + 7707139652ull, 8);
  tb_thread_named(t, 7, "main", 0);
}

static const char *edge_trace(void) {
  tb t = tb_open("speedscope-edges");
  edge_events(&t, 0, 0);
  return tb_close(&t, "1");
}

/* Rank `rank` of a two-rank run on one host, its events `shift` ns later. */
static const char *edge_rank_trace(int rank, uint64_t shift) {
  char r[16];
  snprintf(r, sizeof r, "%d", rank);
  prof__kv extra[] = {{"rank", r}, {"world_size", "2"}};
  tb t = tb_open_with("speedscope-rank", extra, 2);
  edge_events(&t, shift, 1);
  return tb_close(&t, "0");
}

static void ranges_closed_together_and_zero_length_ranges_nest_in_speedscope(void **state) {
  (void)state;
  char cmd[2048], chrome[1100];
  const char *trace = edge_trace();
  snprintf(chrome, sizeof chrome, "%s.trace.json", trace);
  snprintf(cmd, sizeof cmd, "'%s' export --chrome '%s'", MLPROF, trace);
  assert_int_equal(th_run(cmd, th_tmp_path("speedscope-export", ".log")), 0);
  names ns = {0};
  const char *want[] = {"setup", "epoch", "batch", "tick", "load", "pop", "push", "outer", "inner"};
  for (int i = 0; i < 9; i++) add_name(&ns, want[i], strlen(want[i]));
  char dir[600];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("speedscope-edges", ".check"));
  check_in_speedscope(chrome, &ns, dir);
  free_names(&ns);
}

/* The merged export of two such ranks (one process per rank): the same
 * rules hold there, and tick's begin and end carry the same args, which
 * speedscope makes part of the frame's name. */
static void merged_rank_export_nests_in_speedscope(void **state) {
  (void)state;
  char cmd[4096], chrome[1100], ranks[2][1100];
  for (int r = 0; r < 2; r++) snprintf(ranks[r], sizeof ranks[r], "%s", edge_rank_trace(r, 250 * (uint64_t)r));
  snprintf(chrome, sizeof chrome, "%s", th_tmp_path("speedscope-merged", ".trace.json"));
  snprintf(cmd, sizeof cmd, "'%s' export --chrome -o '%s' '%s' '%s'", MLPROF, chrome, ranks[0], ranks[1]);
  assert_int_equal(th_run(cmd, th_tmp_path("speedscope-export", ".log")), 0);
  names ns = {0};
  const char *want[] = {"setup", "epoch", "batch", "tick {\"bytes\":8,\"comm_size\":2,\"peer\":1}", "load", "pop",
                        "push", "outer", "inner"};
  for (int i = 0; i < 9; i++) add_name(&ns, want[i], strlen(want[i]));
  char dir[600];
  snprintf(dir, sizeof dir, "%s", th_tmp_path("speedscope-merged", ".check"));
  check_in_speedscope(chrome, &ns, dir);
  free_names(&ns);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(demo_exports_load_in_speedscope),
      cmocka_unit_test(ranges_closed_together_and_zero_length_ranges_nest_in_speedscope),
      cmocka_unit_test(merged_rank_export_nests_in_speedscope),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
