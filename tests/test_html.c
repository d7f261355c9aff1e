/* test_html.c — the HTML report's structure for known traces: which
 * sections appear, the median step's timeline, escaping, no external
 * resources, and a bounded size on a big trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_html_util.h"
#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/report/html.h"

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static int has_section(const char *html, const char *id) {
  char buf[96];
  snprintf(buf, sizeof buf, "<section class=\"sec\" id=\"%s\">", id);
  return strstr(html, buf) != NULL;
}

/* Three steps of 10, 12 and 30 ms on thread 1 (median: step 1), each with
 * "forward" (compute) and a data range named with markup; thread 2 runs
 * "io-read" (io) during step 1. */
static const char *steps_trace(void) {
  tb t = tb_open("html");
  tb_str(&t, 1, "forward");
  tb_str(&t, 2, "<b>load</b> & \"x\"");
  tb_str(&t, 3, "io-read");
  uint64_t ts = 0;
  const uint64_t dur[] = {10000000, 12000000, 30000000};
  for (uint64_t k = 0; k < 3; k++) {
    tb_sb(&t, 1, ts, k);
    tb_b(&t, 1, ts, 2, PROF_CAT_DATA);
    tb_e(&t, 1, ts + 2000000, 2);
    tb_b(&t, 1, ts + 2000000, 1, PROF_CAT_COMPUTE);
    tb_e(&t, 1, ts + dur[k] - 1000000, 1);
    if (k == 1) {
      tb_b(&t, 2, ts + 1000000, 3, PROF_CAT_IO);
      tb_e(&t, 2, ts + 5000000, 3);
    }
    tb_se(&t, 1, ts + dur[k], k);
    ts += dur[k] + 1000;
  }
  tb_thread_named(&t, 1, "main", 0);
  tb_thread_named(&t, 2, "reader", 0);
  return tb_close(&t, "0");
}

static void page_has_every_section_for_a_run_with_steps(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  assert_true(strncmp(h, "<!DOCTYPE html>", 15) == 0);
  assert_non_null(strstr(h, "</html>"));
  const char *ids[] = {"summary", "steps", "breakdown", "timeline", "ranges", "health"};
  for (size_t i = 0; i < 6; i++)
    if (!has_section(h, ids[i])) fail_msg("section '%s' missing", ids[i]);
  assert_int_equal(count(h, "<section"), count(h, "</section>"));
  /* summary first, then findings before the charts */
  assert_true(strstr(h, "id=\"summary\"") < strstr(h, "id=\"steps\""));
  assert_true(strstr(h, "id=\"findings\"") < strstr(h, "id=\"steps\""));
  free(h);
}

/* The nav bar links every section on the page, in page order. */
static void nav_links_every_section(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  const char *nav = strstr(h, "<nav>"), *nav_end = nav ? strstr(nav, "</nav>") : NULL;
  assert_non_null(nav_end);
  size_t n = 0;
  for (const char *p = strstr(h, "<section class=\"sec\" id=\""); p; p = strstr(p + 1, "<section class=\"sec\" id=\"")) {
    char id[64], link[96];
    const char *b = p + strlen("<section class=\"sec\" id=\"");
    size_t len = strcspn(b, "\"");
    snprintf(id, sizeof id, "%.*s", (int)len, b);
    snprintf(link, sizeof link, "<a href=\"#%s\">", id);
    const char *l = strstr(nav, link);
    if (!l || l > nav_end) fail_msg("no nav link to section '%s'", id);
    n++;
  }
  assert_true(n >= 6);
  free(h);
}

/* Step charts have an x axis labelled with step numbers. */
static void step_chart_has_a_step_number_axis(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  const char *st = strstr(h, "id=\"steps\""), *end = strstr(st, "</svg>");
  const char *ax = strstr(st, "<text class=\"tick xl\"");
  assert_true(ax && ax < end);
  assert_non_null(strstr(ax, ">step</text>"));
  const char *t0 = strstr(st, "<text class=\"tick xt\""), *t2 = strstr(st, "text-anchor=\"middle\">2</text>");
  assert_true(t0 && t0 < end && t2 && t2 < end);
  free(h);
}

/* A long range name is ellipsized in its cell, with the full name on hover;
 * long tables fold (the page carries the rule and the script). */
static void long_names_ellipsize_and_long_tables_fold(void **state) {
  (void)state;
  static const char long_name[] = "model.encoder.layers.11.self_attention.output_projection.forward_hook";
  tb t = tb_open("html-long");
  tb_str(&t, 1, long_name);
  tb_sb(&t, 1, 0, 0);
  tb_b(&t, 1, 0, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 1, 900000, 1);
  tb_se(&t, 1, 1000000, 0);
  char *h = html_of_len(tb_close(&t, "0"), NULL);
  char want[256];
  snprintf(want, sizeof want, "<td class=\"el\" title=\"%s\">%s</td>", long_name, long_name);
  assert_non_null(strstr(h, want));
  assert_non_null(strstr(h, "td.el{max-width:"));
  assert_non_null(strstr(h, "table.folded tbody tr:nth-child(n+31){display:none}"));
  assert_non_null(strstr(h, "'Show all '+n+' rows'"));
  free(h);
}

static void timeline_shows_the_median_step_with_both_threads(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  const char *tl = strstr(h, "id=\"timeline\"");
  assert_non_null(tl);
  assert_non_null(strstr(tl, "Timeline of step 1 (the median step, 12.00 ms)"));
  const char *end = strstr(tl, "</section>");
  char *sec = strndup(tl, (size_t)(end - tl));
  assert_non_null(strstr(sec, "main (1)"));
  assert_non_null(strstr(sec, "reader (2)"));
  assert_non_null(strstr(sec, "<title>forward (compute) 9.00 ms, at +2.00 ms</title>"));
  assert_non_null(strstr(sec, "<title>io-read (io) 4.00 ms, at +1.00 ms</title>"));
  assert_int_equal(count(sec, "class=\"tl "), 3); /* load, forward, io-read of step 1 */
  free(sec);
  free(h);
}

static void step_bars_and_breakdown_layers(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  const char *st = strstr(h, "id=\"steps\""), *bd = strstr(h, "id=\"breakdown\"");
  assert_non_null(strstr(st, "<title>step 2: 30 ms</title>"));
  assert_non_null(strstr(bd, "<title>step 0: compute 7 ms; data 2 ms; comm 0 ms; io 0 ms; other 1 ms</title>"));
  free(h);
}

static void names_are_escaped_and_nothing_is_external(void **state) {
  (void)state;
  char *h = html_of_len(steps_trace(), NULL);
  assert_null(strstr(h, "<b>load</b>"));
  assert_non_null(strstr(h, "&lt;b&gt;load&lt;/b&gt; &amp; &quot;x&quot;"));
  assert_null(strstr(h, "https://"));
  assert_null(strstr(h, " src="));
  assert_null(strstr(h, "<link"));
  assert_null(strstr(h, "@import"));
  assert_null(strstr(h, "url("));
  for (const char *p = strstr(h, "http://"); p; p = strstr(p + 1, "http://"))
    assert_true(strncmp(p, "http://www.w3.org/2000/svg", 26) == 0); /* the SVG namespace only */
  free(h);
}

static void run_without_steps_has_no_step_sections(void **state) {
  (void)state;
  tb t = tb_open("html-nosteps");
  tb_str(&t, 1, "work");
  tb_b(&t, 1, 100, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 1, 5000, 1);
  char *h = html_of_len(tb_close(&t, "0"), NULL);
  assert_true(has_section(h, "summary"));
  assert_true(has_section(h, "ranges"));
  assert_false(has_section(h, "steps"));
  assert_false(has_section(h, "breakdown"));
  assert_false(has_section(h, "timeline"));
  free(h);
  tb e = tb_open("html-empty");
  h = html_of_len(tb_close(&e, "0"), NULL);
  assert_true(has_section(h, "summary"));
  assert_false(has_section(h, "ranges"));
  assert_true(has_section(h, "health"));
  free(h);
}

/* 5000 steps, each with 60 ranges of 300 distinct names: 600k events. */
static void big_trace_gives_a_bounded_page(void **state) {
  (void)state;
  tb t = tb_open("html-big");
  char name[32];
  for (uint32_t i = 1; i <= 300; i++) {
    snprintf(name, sizeof name, "range-%u", i);
    tb_str(&t, i, name);
  }
  uint64_t ts = 0;
  for (uint64_t k = 0; k < 5000; k++) {
    tb_sb(&t, 1, ts, k);
    for (uint32_t r = 0; r < 60; r++) {
      uint32_t id = 1 + (uint32_t)((k * 7 + r) % 300);
      tb_b(&t, 1, ts, id, (int)(r % PROF_CAT_COUNT));
      ts += 1000 + 10 * ((k + r) % 5);
      tb_e(&t, 1, ts, id);
    }
    tb_se(&t, 1, ts, k);
    ts += 100;
  }
  size_t len;
  char *h = html_of_len(tb_close(&t, "0"), &len);
  assert_true(len < 1500000);
  assert_true(count(h, "<g class=\"bar\">") <= 2 * 2000); /* two bar charts, grouped */
  assert_non_null(strstr(h, "each bar is the mean of 3 consecutive points"));
  const char *rs = strstr(h, "id=\"ranges\""), *re = strstr(rs, "</section>");
  char *ranges = strndup(rs, (size_t)(re - rs));
  assert_int_equal(count(ranges, "<tr data-range="), 50); /* top 50 ranges */
  assert_int_equal(count(ranges, "<tr>"), 1);             /* and the heading */
  free(ranges);
  assert_non_null(strstr(h, " more ranges are in the JSON report"));
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(page_has_every_section_for_a_run_with_steps),
      cmocka_unit_test(nav_links_every_section),
      cmocka_unit_test(step_chart_has_a_step_number_axis),
      cmocka_unit_test(long_names_ellipsize_and_long_tables_fold),
      cmocka_unit_test(timeline_shows_the_median_step_with_both_threads),
      cmocka_unit_test(step_bars_and_breakdown_layers),
      cmocka_unit_test(names_are_escaped_and_nothing_is_external),
      cmocka_unit_test(run_without_steps_has_no_step_sections),
      cmocka_unit_test(big_trace_gives_a_bounded_page),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
