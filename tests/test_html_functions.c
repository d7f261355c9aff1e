/* test_html_functions.c — the CPU-sampling panels of the HTML report on
 * hand-built traces: the "functions" panel (facts, top functions with
 * their shares, the flame graph's frames and their geometry, the small
 * frames left out, CPU vs wall per step, hot functions per range) and the
 * "counters" panel (per-step CPU time and page faults from software
 * counters; IPC and LLC misses per 1000 instructions from PAPI counters);
 * and neither panel for a trace without their data.
 *
 * The stacks point at functions of this test program, and the module map
 * names this program, so the analyzer symbolizes them to their real names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "test_html_util.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

#define T0 1000000000ull
#define MS 1000000ull
#define RANGE_FWD 20
#define W 1000 /* weight (sampling periods) of one sample of the big stacks */

/* ---- functions the stacks point at ---------------------------------------- */

volatile int fg_sink;
__attribute__((noinline)) void fg_leaf(void) { for (int i = 0; i < 3; i++) fg_sink += i; }
__attribute__((noinline)) void fg_mid(void) { for (int i = 0; i < 3; i++) fg_sink += i * 2; }
__attribute__((noinline)) void fg_other(void) { for (int i = 0; i < 3; i++) fg_sink += i * 3; }
__attribute__((noinline)) void fg_tiny(void) { for (int i = 0; i < 3; i++) fg_sink += i * 4; }
__attribute__((noinline)) void fg_root(void) { for (int i = 0; i < 3; i++) fg_sink += i * 5; }
/* Named like the profiler's own code (the prof_ API). */
__attribute__((noinline)) void prof_test_own(void) { for (int i = 0; i < 3; i++) fg_sink += i * 6; }

static uintptr_t pc_in(void (*fn)(void)) { return (uintptr_t)fn + 4; }

/* ---- trace building ----------------------------------------------------------- */

static prof__tw *open_trace(const char *stem, const char **path) {
  char err[256];
  prof__kv hdr[] = {{"program", "fg-train"}, {"pid", "7"}, {"cpu.sample_hz", "100"}};
  *path = th_tmp_path(stem, ".mlpt");
  prof__tw *w = prof__tw_open(*path, hdr, 3, err);
  if (!w) fail_msg("%s", err);
  return w;
}

static void counter(prof__tw *w, uint32_t tid, uint64_t ts, uint32_t name, double v) {
  put(w, tid, ts, PROF_EV_COUNTER, name, 0, prof__f64_bits(v), 0);
}

/* Stacks (innermost first): 1 leaf<mid<root, 2 mid<root, 3 other<root,
 * 4 tiny<root, 5 prof_test_own<root (a profiler call). */
static void stacks_chunk(prof__tw *w) {
  const uintptr_t st[5][3] = {{pc_in(fg_leaf), pc_in(fg_mid), pc_in(fg_root)},
                              {pc_in(fg_mid), pc_in(fg_root), 0},
                              {pc_in(fg_other), pc_in(fg_root), 0},
                              {pc_in(fg_tiny), pc_in(fg_root), 0},
                              {pc_in(prof_test_own), pc_in(fg_root), 0}};
  const int depth[5] = {3, 2, 2, 2, 2};
  prof__buf b = {0};
  prof__buf_varint(&b, 5);
  for (int i = 0; i < 5; i++) {
    prof__buf_varint(&b, (uint64_t)i + 1);
    prof__buf_varint(&b, (uint64_t)depth[i]);
    uintptr_t prev = 0;
    for (int k = 0; k < depth[i]; k++) {
      prof__buf_svarint(&b, (int64_t)(st[i][k] - prev));
      prev = st[i][k];
    }
  }
  assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_STACKS, b.p, b.len), 0);
  prof__buf_free(&b);
}

/* Two steps of 50 ms on thread 1. Samples, all in step 0 inside the range
 * "forward": stack 1 ×6, stack 2 ×3, stack 3 ×1 (weight W each) and stack 4
 * ×1 with weight 5. Total weight 10005: self fg_leaf 6000 (60.0%), fg_mid
 * 3000, fg_other 1000, fg_tiny 5 (0.05%, under the flame graph's cut);
 * total fg_root 10005, fg_mid 9000. With `samples` 0 no SAMPLE is written. */
static const char *functions_trace(int samples) {
  const char *path;
  prof__tw *w = open_trace("html-fn", &path);
  str(w, RANGE_FWD, "forward");
  modules_chunk(w);
  stacks_chunk(w);
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  put(w, 1, T0, PROF_EV_RANGE_BEGIN, RANGE_FWD, 0, 0, 0);
  const uint32_t stack[] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4};
  for (int i = 0; samples && i < 11; i++)
    put(w, 1, T0 + (uint64_t)(i + 1) * MS, PROF_EV_SAMPLE, stack[i], 0, RANGE_FWD, stack[i] == 4 ? 5 : W);
  put(w, 1, T0 + 40 * MS, PROF_EV_RANGE_END, RANGE_FWD, 0, 0, 0);
  put(w, 1, T0 + 50 * MS, PROF_EV_STEP_END, 0, 0, 0, 0);
  put(w, 1, T0 + 50 * MS, PROF_EV_STEP_BEGIN, 0, 0, 1, 0);
  put(w, 1, T0 + 100 * MS, PROF_EV_STEP_END, 0, 0, 1, 0);
  return close_trace(w, path);
}

/* One step of 50 ms; 10 samples in it: 8 inside the profiler's own code
 * (stack 5), 2 in fg_leaf (stack 1). */
static const char *own_code_trace(void) {
  const char *path;
  prof__tw *w = open_trace("own-fn", &path);
  str(w, RANGE_FWD, "forward");
  modules_chunk(w);
  stacks_chunk(w);
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  for (int i = 0; i < 10; i++) put(w, 1, T0 + (uint64_t)(i + 1) * MS, PROF_EV_SAMPLE, i < 8 ? 5 : 1, 0, 0, W);
  put(w, 1, T0 + 50 * MS, PROF_EV_STEP_END, 0, 0, 0, 0);
  return close_trace(w, path);
}

static char *text_of(const char *path) {
  prof__an *an = NULL;
  char err[256], *text = NULL;
  size_t len = 0;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  FILE *f = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", f), 0);
  fclose(f);
  prof__an_free(an);
  return text;
}

/* ---- report ------------------------------------------------------------------ */

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* ---- functions ------------------------------------------------------------------ */

static const char *counters_trace(int papi);

/* The text report says why the counters are software only, as the JSON and
 * HTML do. */
static void text_names_why_counters_are_software_only(void **state) {
  (void)state;
  char *t = text_of(counters_trace(0));
  assert_non_null(strstr(t, "software counters only: no hardware counters in this VM"));
  free(t);
}

static void profiler_code_is_its_own_line_never_a_hot_spot(void **state) {
  (void)state;
  char *t = text_of(own_code_trace());
  assert_non_null(strstr(t, "profiler's own cost: 80.0% of the samples"));
  assert_null(strstr(t, "prof_test_own"));
  const char *self = strstr(t, "By self:");
  assert_non_null(self);
  assert_non_null(strstr(self, "fg_leaf"));
  assert_non_null(strstr(t, "caveat: only 10 samples"));
  free(t);
}

static void functions_panel_ranks_and_facts(void **state) {
  (void)state;
  char *h = html_of_len(functions_trace(1), NULL);
  char *sec = html_section(h, "functions");
  assert_non_null(sec);
  html_expect(sec, "<th>mode</th><td>CPU time (running threads)</td>");
  html_expect(sec, "<th>rate</th><td>100 Hz (one sample every 10.00 ms)</td>");
  html_expect(sec, "<th>samples</th><td>11 (0 without a call stack)</td>");
  html_expect(sec, "<th>sampled time</th><td>about 100050.0 ms (10005 sampling periods)</td>");
  /* the first row is the top self function: fg_leaf, 60.0% self, 60 s */
  const char *row = strstr(strstr(sec, "<tbody>"), "<tr><td>");
  assert_non_null(row);
  assert_int_equal(strncmp(row, "<tr><td>fg_leaf", 15), 0);
  html_expect(row, "<td class=\"num\" data-v=\"0.59970014992503751\">60.0%</td>"
              "<td class=\"num\" data-v=\"60000\">60000.0 ms</td>");
  /* fg_root: no self time, every sample in total */
  html_expect(sec, "<td class=\"num\" data-v=\"0\">0.0%</td><td class=\"num\" data-v=\"0\">0.0 ms</td>"
              "<td class=\"num\" data-v=\"1\">100.0%</td>");
  /* the range table: "forward" holds every sample, fg_leaf hottest */
  html_expect(sec, "<td>forward</td><td class=\"num\" data-v=\"10005\">10005</td>");
  html_expect(sec, "fg_leaf 60%, fg_mid 30%, fg_other 10%");
  /* per step: the samples fall in step 0 (compute), none in step 1 (waiting) */
  html_expect(sec, "CPU vs wall time per step");
  html_expect(sec, "<td>compute</td><td class=\"num\" data-v=\"1\">1</td>");
  html_expect(sec, "<td>waiting</td><td class=\"num\" data-v=\"1\">1</td>");
  free(sec);
  free(h);
}

static void flame_graph_has_the_merged_tree(void **state) {
  (void)state;
  char *h = html_of_len(functions_trace(1), NULL);
  char *sec = html_section(h, "functions");
  assert_non_null(sec);
  const char *svg = strstr(sec, "<svg class=\"flame\"");
  assert_non_null(svg);
  /* all, fg_root, fg_mid, fg_leaf, fg_other: five frames; fg_tiny (0.05%)
   * is under the 0.1% cut */
  assert_int_equal(count(svg, "<g class=\"fr\""), 5);
  html_expect(svg, "data-x=\"0.000000\" data-w=\"1.000000\" data-d=\"0\"><title>all — 10.0k samples (100.0%)</title>");
  html_expect(svg, "data-x=\"0.000000\" data-w=\"1.000000\" data-d=\"1\"><title>fg_root — 10.0k samples (100.0%)</title>");
  html_expect(svg, "data-x=\"0.000000\" data-w=\"0.899550\" data-d=\"2\"><title>fg_mid — 9.00k samples (90.0%)</title>");
  html_expect(svg, "data-x=\"0.000000\" data-w=\"0.599700\" data-d=\"3\"><title>fg_leaf — 6.00k samples (60.0%)</title>");
  html_expect(svg, "data-x=\"0.899550\" data-w=\"0.099950\" data-d=\"2\"><title>fg_other — 1.00k samples (10.0%)</title>");
  assert_null(strstr(svg, "fg_tiny"));
  /* ... while the table still lists it */
  html_expect(sec, "<tr><td>fg_tiny");
  free(sec);
  free(h);
}

static void no_samples_no_functions_panel(void **state) {
  (void)state;
  char *h = html_of_len(functions_trace(0), NULL);
  assert_non_null(strstr(h, "id=\"steps\""));
  assert_null(strstr(h, "id=\"functions\""));
  assert_null(strstr(h, "class=\"flame\""));
  assert_null(strstr(h, "id=\"counters\""));
  free(h);
}

/* ---- counters ------------------------------------------------------------------- */

enum { C_CPU = 30, C_PF, C_CYC, C_INS, C_LLC };

/* Steps as above; readings on thread 1 at 0, 50 and 100 ms: CPU time 0,
 * 40, 50 ms and page faults 0, 10, 30 (step 0: 40 ms, 10 faults; step 1:
 * 10 ms, 20 faults). With `papi`: cycles 0, 1e8, 2e8 and instructions 0,
 * 2e8, 3e8 (IPC 2.00 then 1.00), LLC misses 0, 4e5, 5e5 (2.00 then 1.00 per
 * 1000 instructions). */
static const char *counters_trace(int papi) {
  const char *path;
  prof__tw *w = open_trace("html-ctr", &path);
  str(w, C_CPU, "cpuctr/cpu_ns");
  str(w, C_PF, "cpuctr/page_faults");
  str(w, C_CYC, "cpuctr/PAPI_TOT_CYC");
  str(w, C_INS, "cpuctr/PAPI_TOT_INS");
  str(w, C_LLC, "cpuctr/PAPI_L3_TCM");
  prof__kv meta[] = {{"counters.source", papi ? "papi+software" : "software"},
                     {"counters.papi_reason", "no hardware counters in this VM"}};
  assert_int_equal(prof__tw_meta(w, meta, papi ? 1 : 2), 0);
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  put(w, 1, T0 + 50 * MS, PROF_EV_STEP_END, 0, 0, 0, 0);
  put(w, 1, T0 + 50 * MS, PROF_EV_STEP_BEGIN, 0, 0, 1, 0);
  put(w, 1, T0 + 100 * MS, PROF_EV_STEP_END, 0, 0, 1, 0);
  const double cpu[] = {0, 40e6, 50e6}, pf[] = {0, 10, 30}, cyc[] = {0, 1e8, 2e8}, ins[] = {0, 2e8, 3e8},
               llc[] = {0, 4e5, 5e5};
  for (int i = 0; i < 3; i++) {
    uint64_t ts = T0 + (uint64_t)i * 50 * MS;
    counter(w, 1, ts, C_CPU, cpu[i]);
    counter(w, 1, ts, C_PF, pf[i]);
    if (!papi) continue;
    counter(w, 1, ts, C_CYC, cyc[i]);
    counter(w, 1, ts, C_INS, ins[i]);
    counter(w, 1, ts, C_LLC, llc[i]);
  }
  return close_trace(w, path);
}

static void counters_panel_software(void **state) {
  (void)state;
  char *h = html_of_len(counters_trace(0), NULL);
  char *sec = html_section(h, "counters");
  assert_non_null(sec);
  html_expect(sec, "<th>source</th><td>software counters");
  html_expect(sec, "<th>PAPI unavailable</th><td>no hardware counters in this VM</td>");
  html_expect(sec, "<th>step</th><th>wall</th><th>CPU time</th><th>page_faults</th></tr>");
  html_expect(sec, "<tr><td class=\"num\" data-v=\"0\">0</td><td class=\"num\" data-v=\"50000000\">50.00 ms</td>"
              "<td class=\"num\" data-v=\"40000000\">40.00 ms</td><td class=\"num\" data-v=\"10\">10.0</td></tr>");
  html_expect(sec, "<tr><td class=\"num\" data-v=\"1\">1</td><td class=\"num\" data-v=\"50000000\">50.00 ms</td>"
              "<td class=\"num\" data-v=\"10000000\">10.00 ms</td><td class=\"num\" data-v=\"20\">20.0</td></tr>");
  /* the bar chart of CPU time per step, against the step number */
  html_expect(sec, "CPU time of the step thread per step");
  html_expect(sec, "<title>step 0: 40 ms</title>");
  html_expect(sec, ">step</text>");
  assert_null(strstr(sec, "IPC"));
  free(sec);
  free(h);
}

static void counters_panel_papi(void **state) {
  (void)state;
  char *h = html_of_len(counters_trace(1), NULL);
  char *sec = html_section(h, "counters");
  assert_non_null(sec);
  html_expect(sec, "<th>source</th><td>PAPI hardware counters + software counters</td>");
  assert_null(strstr(sec, "PAPI unavailable"));
  html_expect(sec, "<th>IPC</th><th>LLC misses / 1k instr.</th>");
  html_expect(sec, "<td class=\"num\" data-v=\"2\">2.00</td><td class=\"num\" data-v=\"2\">2.00</td></tr>");
  html_expect(sec, "<td class=\"num\" data-v=\"1\">1.00</td><td class=\"num\" data-v=\"1\">1.00</td></tr>");
  html_expect(sec, "Instructions per cycle per step");
  html_expect(sec, "<title>step 0: 2 IPC</title>");
  free(sec);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(functions_panel_ranks_and_facts), cmocka_unit_test(flame_graph_has_the_merged_tree),
      cmocka_unit_test(no_samples_no_functions_panel),   cmocka_unit_test(counters_panel_software),
      cmocka_unit_test(counters_panel_papi),
      cmocka_unit_test(profiler_code_is_its_own_line_never_a_hot_spot),
      cmocka_unit_test(text_names_why_counters_are_software_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
