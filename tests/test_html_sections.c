/* test_html_sections.c — the report sections' panels in the HTML report, on
 * hand-built traces: memory (ALLOC/FREE replayed exactly in full mode, the
 * mem.* counter tracks as charts with the peak kept when a long series is
 * reduced), resources (CPU, I/O and GPU samples, per-step table) and
 * communication; and none of them for a trace without their data. The GPU
 * panel is tested in test_gpu_analyze.c with its reference trace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "test_html_util.h"
#include "trace/rec_res.h"

#define T0 1000000000ull
#define MS 1000000ull

static prof__tw *open_with(const char *stem, const prof__kv *hdr, size_t n, const char **path) {
  char err[256];
  *path = th_tmp_path(stem, ".mlpt");
  prof__tw *w = prof__tw_open(*path, hdr, n, err);
  if (!w) fail_msg("%s", err);
  return w;
}

/* ---- memory ---------------------------------------------------------------
 * Full mode, one step [T0, T0+10ms) on thread 1:
 *   +1 ms ALLOC A 1000 B; +2 ms ALLOC B 3000 B (heap peak 4000 B, inside
 *   the range "optimizer" open from +1.5 ms to +2.5 ms);
 *   +3 ms FREE A; +4 ms ALLOC C 500 B; +5 ms FREE C (temporary: the thread's
 *   latest block); B is never freed (a 3000 B leak). All from stack 0, so one
 *   site: 3 calls, 4500 B.
 * Counters on thread 2 every ms: live bytes 0, 4096, 8192 (peak), 4096 ...;
 * RSS 1, 2, 3 (peak) MiB. `nlive` > 4 writes a long live series instead,
 * with one spike of 1e9 B at sample 3333. */
static const char *memory_trace(size_t nlive) {
  const char *path;
  prof__kv hdr[] = {{"program", "mem-train"}, {"pid", "9"}, {"mem.mode", "full"}, {"mem.sample_bytes", "524288"}};
  prof__tw *w = open_with("html-mem", hdr, 4, &path);
  str(w, 10, "mem.live_bytes");
  str(w, 11, "mem.rss_bytes");
  str(w, 12, "optimizer");
  put(w, 1, T0, PROF_EV_STEP_BEGIN, 0, 0, 0, 0);
  put(w, 1, T0 + 1 * MS, PROF_EV_ALLOC, 0, 0, 0xA000, 1000);
  put(w, 1, T0 + 3 * MS / 2, PROF_EV_RANGE_BEGIN, 12, 0, 0, 0);
  put(w, 1, T0 + 2 * MS, PROF_EV_ALLOC, 0, 0, 0xB000, 3000);
  put(w, 1, T0 + 5 * MS / 2, PROF_EV_RANGE_END, 12, 0, 0, 0);
  put(w, 1, T0 + 3 * MS, PROF_EV_FREE, 0, 0, 0xA000, 0);
  put(w, 1, T0 + 4 * MS, PROF_EV_ALLOC, 0, 0, 0xC000, 500);
  put(w, 1, T0 + 5 * MS, PROF_EV_FREE, 0, 0, 0xC000, 0);
  put(w, 1, T0 + 10 * MS, PROF_EV_STEP_END, 0, 0, 0, 0);
  const double live[] = {0, 4096, 8192, 4096}, rss[] = {1048576, 2097152, 3145728, 2097152};
  for (size_t i = 0; i < (nlive > 4 ? nlive : 4); i++) {
    double v = nlive > 4 ? (i == 3333 ? 1e9 : 1000.0 * (double)(i % 7)) : live[i];
    put(w, 2, T0 + i * MS, PROF_EV_COUNTER, 10, 0, prof__f64_bits(v), 0);
    if (i < 4) put(w, 2, T0 + i * MS, PROF_EV_COUNTER, 11, 0, prof__f64_bits(rss[i]), 0);
  }
  return close_trace(w, path);
}

static void memory_panel_shows_exact_peak_leak_sites_and_charts(void **state) {
  (void)state;
  char *h = html_of_len(memory_trace(4), NULL);
  char *sec = html_section(h, "memory");
  assert_non_null(sec);
  html_expect(sec, "<th>heap peak (exact)</th><td>3.9 KiB at 0.002 s (step 0), inside range optimizer</td>");
  html_expect(sec, "<th>RSS peak</th><td>3.0 MiB</td>");
  html_expect(sec, "<th>allocated</th><td>3 allocations, 4.4 KiB</td>");
  html_expect(sec, "<th>still allocated at exit</th><td>2.9 KiB in 1 block from 1 call site</td>");
  /* the leak, the site by bytes and calls, the temporary block */
  const char *leaks = strstr(sec, "Still allocated at exit (1 call site)");
  assert_non_null(leaks);
  html_expect(leaks, "<td class=\"num\" data-v=\"3000\">2.9 KiB</td><td class=\"num\" data-v=\"1\">1</td><td>heap</td>");
  const char *by_bytes = strstr(sec, "Top allocation sites by bytes allocated");
  assert_non_null(by_bytes);
  html_expect(by_bytes, "<td class=\"num\" data-v=\"4500\">4.4 KiB</td><td class=\"num\" data-v=\"3\">3</td>");
  const char *temp = strstr(sec, "Temporary allocations");
  assert_non_null(temp);
  html_expect(temp, "<td class=\"num\" data-v=\"500\">500 B</td><td class=\"num\" data-v=\"1\">1</td>");
  /* charts: live bytes in KiB, RSS in MiB, each with its peak marked */
  html_expect(sec, "peak 8 KiB at 0.002 s");
  html_expect(sec, "peak 3 MiB at 0.002 s");
  free(sec);
  free(h);
}

/* The text and JSON reports place the peak too: step and innermost range. */
static void memory_peak_is_placed_in_text_and_json(void **state) {
  (void)state;
  prof__an *an = NULL;
  char err[256], *t = NULL;
  size_t len = 0;
  assert_int_equal(prof__an_run_opts(&an, memory_trace(4), 1, err), 0);
  FILE *f = open_memstream(&t, &len);
  assert_int_equal(prof__report_write(an, "text", f), 0);
  assert_int_equal(prof__report_write(an, "json", f), 0);
  fclose(f);
  prof__an_free(an);
  html_expect(t, "the heap peak was at 0.002 s, in step 0, inside range optimizer\n");
  const char *top = strstr(t, "top sites by live bytes at the peak");
  assert_non_null(top);
  html_expect(t, "\"peak_range\": \"optimizer\"");
  free(t);
}

static size_t polyline_points(const char *s) {
  const char *p = strstr(s, "points=\"");
  assert_non_null(p);
  size_t n = 0;
  for (p += 8; *p && *p != '"'; p++) n += *p == ' ';
  return n;
}

static void long_memory_series_is_reduced_and_keeps_its_peak(void **state) {
  (void)state;
  char *h = html_of_len(memory_trace(5000), NULL);
  char *sec = html_section(h, "memory");
  assert_non_null(sec);
  size_t n = polyline_points(sec);
  assert_true(n >= 900 && n <= 1000);
  html_expect(sec, "peak 954 MiB at 3.333 s"); /* 1e9 B, sample 3333 */
  free(sec);
  free(h);
}

/* ---- resources --------------------------------------------------------------
 * Two steps of 1 s from T0; samples every 100 ms: process CPU 1.5 cores, one
 * interval of 3 cores in step 1 (mean 1.65 there); reads 2 MiB/s; NVML
 * utilisation 40 %. */
static const char *resources_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "res-train"}, {"pid", "9"}, {"res.period_ms", "100"}, {"res.cpus", "4"},
                    {"res.gpu", "NVML, 1 GPU"}};
  prof__tw *w = open_with("html-res", hdr, 5, &path);
  str(w, 2, "res.cpu_cores");
  str(w, 3, "res.io_read_bytes_per_s");
  str(w, 4, "res.gpu0.util_pct");
  for (uint64_t k = 0; k < 2; k++) {
    put(w, 1, T0 + k * 1000 * MS, PROF_EV_STEP_BEGIN, 0, 0, k, 0);
    put(w, 1, T0 + (k + 1) * 1000 * MS, PROF_EV_STEP_END, 0, 0, k, 0);
  }
  const uint64_t P = 100 * MS;
  for (uint64_t i = 0; i < 20; i++) {
    uint64_t t = T0 + i * P;
    put(w, PROF_RES_TID, t, PROF_EV_COUNTER, 2, PROF_RES_CPU, prof__f64_bits(i == 14 ? 3.0 : 1.5), P);
    put(w, PROF_RES_TID, t, PROF_EV_COUNTER, 3, PROF_RES_IO_READ, prof__f64_bits(2.0 * 1048576), P);
    put(w, PROF_RES_TID, t + P, PROF_EV_COUNTER, 4, PROF_RES_GPU_UTIL, prof__f64_bits(40), 0);
  }
  return close_trace(w, path);
}

static void resources_panel_has_charts_and_per_step_rows(void **state) {
  (void)state;
  char *h = html_of_len(resources_trace(), NULL);
  char *sec = html_section(h, "resources");
  assert_non_null(sec);
  html_expect(sec, "<th>sampled</th><td>every 100 ms; 4.00 usable cores</td>");
  html_expect(sec, "<h3>Process CPU over time</h3>");
  html_expect(sec, "peak 3 cores at 1.450 s"); /* interval 14: [1.4, 1.5) s, drawn at its middle */
  html_expect(sec, "<h3>Read rate over time (syscalls)</h3>");
  html_expect(sec, "peak 2 MiB/s");
  html_expect(sec, "<h3>GPU utilisation over time (NVML, mean of the GPUs)</h3>");
  html_expect(sec, "peak 40 %");
  assert_null(strstr(sec, "Write rate over time")); /* nothing was written */
  /* per step: duration, CPU mean, reads per second, GPU utilisation */
  html_expect(sec, "<tr><td class=\"num\" data-v=\"0\">0</td><td class=\"num\" data-v=\"1000000000\">1.000 s</td>"
              "<td class=\"num\" data-v=\"1.5"); /* 1.5 up to rounding */
  html_expect(sec, "<td class=\"num\" data-v=\"1\">1</td><td class=\"num\" data-v=\"1000000000\">1.000 s</td>"
              "<td class=\"num\" data-v=\"1.6"); /* 1.65 up to rounding */
  html_expect(sec, ">1.65</td><td class=\"num\" data-v=\"3\">3.00</td>"); /* mean and peak of step 1 */
  html_expect(sec, ">2.0 MiB/s</td>");
  html_expect(sec, ">40%</td>");
  free(sec);
  free(h);
}

/* ---- communication ------------------------------------------------------------ */

static const char *comm_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "comm-train"}, {"pid", "9"}};
  prof__tw *w = open_with("html-comm", hdr, 2, &path);
  str(w, 1, "allreduce");
  for (uint64_t k = 0; k < 2; k++) { /* 1 MiB each; COMM ranges of 1 and 2 ms */
    uint64_t t = T0 + k * 10 * MS;
    prof__event b = {.ts = t, .type = PROF_EV_RANGE_BEGIN, .cat = PROF_CAT_COMM, .name = 1};
    assert_int_equal(prof__tw_events(w, 1, &b, 1), 0);
    put(w, 1, t, PROF_EV_COMM, 1, 0, 1048576, 8);
    put(w, 1, t + (k + 1) * MS, PROF_EV_RANGE_END, 1, 0, 0, 0);
  }
  return close_trace(w, path);
}

static void comm_panel_has_calls_bytes_and_time(void **state) {
  (void)state;
  char *h = html_of_len(comm_trace(), NULL);
  char *sec = html_section(h, "comm");
  assert_non_null(sec);
  html_expect(sec, "<td>allreduce</td><td class=\"num\" data-v=\"2\">2</td>"
              "<td class=\"num\" data-v=\"2097152\">2.0 MiB</td><td class=\"num\" data-v=\"3000000\">3.00 ms</td>");
  html_expect(sec, "<td class=\"num\" data-v=\"8\">8</td></tr>"); /* communicator size */
  free(sec);
  free(h);
}

/* ---- absence ----------------------------------------------------------------- */

static void trace_without_section_data_has_no_panels(void **state) {
  (void)state;
  tb t = tb_open("html-plain");
  tb_str(&t, 1, "forward");
  tb_sb(&t, 1, T0, 0);
  tb_b(&t, 1, T0, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 1, T0 + 5 * MS, 1);
  tb_se(&t, 1, T0 + 6 * MS, 0);
  char *h = html_of_len(tb_close(&t, "0"), NULL);
  assert_non_null(strstr(h, "id=\"steps\""));
  const char *ids[] = {"memory", "gpu", "resources", "comm"};
  for (size_t i = 0; i < 4; i++) {
    char *sec = html_section(h, ids[i]);
    if (sec) fail_msg("unexpected section '%s'", ids[i]);
  }
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_panel_shows_exact_peak_leak_sites_and_charts),
      cmocka_unit_test(long_memory_series_is_reduced_and_keeps_its_peak),
      cmocka_unit_test(memory_peak_is_placed_in_text_and_json),
      cmocka_unit_test(resources_panel_has_charts_and_per_step_rows),
      cmocka_unit_test(comm_panel_has_calls_bytes_and_time),
      cmocka_unit_test(trace_without_section_data_has_no_panels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
