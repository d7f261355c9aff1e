/* test_html_health.c — the HTML model-health panel on a hand-built trace:
 * one chart per metric with its train and validation curves, RMS of the
 * gradients over steps on a log scale, and a distribution-over-time chart
 * per tensor; every chart has the training step on its x axis. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "trace/rec_hist.h"

static void scalar(tb *t, uint64_t ts, uint32_t name, double v, uint64_t step1) {
  prof__event e = {.ts = ts, .type = PROF_EV_SCALAR, .name = name, .a = prof__f64_bits(v), .b = step1};
  if (prof__tw_events(t->w, 1, &e, 1)) abort();
}

/* 40 steps of 1 ms. train/loss = 2 / (1 + k) every step; val/loss = 1.5 at
 * steps 9, 19, 29, 39; the gradient "fc1/grad" (values k+1 and -(k+1)/2)
 * summarised every step. */
static const char *model_trace(void) {
  tb t = tb_open("html-model");
  tb_str(&t, 1, "train/loss");
  tb_str(&t, 2, "val/loss");
  tb_str(&t, 3, "fc1/grad");
  prof__buf b = {0};
  prof__buf_u8(&b, PROF_HIST_FORMAT);
  for (uint64_t k = 0; k < 40; k++) {
    uint64_t ts = 1000000 + k * 1000000;
    tb_sb(&t, 1, ts, k);
    scalar(&t, ts + 500000, 1, 2.0 / (double)(1 + k), k + 1);
    if (k % 10 == 9) scalar(&t, ts + 600000, 2, 1.5, k + 1);
    prof__hrec r;
    memset(&r, 0, sizeof r);
    r.ts_ns = ts + 700000;
    r.step1 = k + 1;
    r.tid = 1;
    r.tag = 3;
    r.kind = PROF_HIST_GRADIENT;
    const float vals[] = {(float)(k + 1), -(float)(k + 1) / 2};
    prof__rec_hist_summarise(vals, 2, &r.sum);
    prof__rec_hist_encode(&b, &r);
    tb_se(&t, 1, ts + 900000, k);
  }
  tb_thread_named(&t, 1, "main", 0);
  tb_flush(&t);
  if (prof__tw_chunk(t.w, PROF_CHUNK_HIST, b.p, b.len)) abort();
  prof__buf_free(&b);
  return tb_close(&t, "0");
}

static char *html(void) {
  prof__an *an = NULL;
  char err[256], *text = NULL;
  size_t n = 0;
  assert_int_equal(prof__an_run_opts(&an, model_trace(), 1, err), 0);
  FILE *f = open_memstream(&text, &n);
  assert_int_equal(prof__report_write(an, "html", f), 0);
  fclose(f);
  prof__an_free(an);
  return text;
}

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void panel_has_metric_rms_and_distribution_charts(void **state) {
  (void)state;
  char *h = html();
  const char *sec = strstr(h, "<section class=\"sec\" id=\"model\">");
  assert_non_null(sec);
  assert_non_null(strstr(h, "<a href=\"#model\">Model health</a>"));
  const char *end = strstr(sec, "</section>");
  /* one chart for "loss" with both splits */
  const char *loss = strstr(sec, "<h3>loss</h3>");
  assert_true(loss && loss < end);
  assert_non_null(strstr(loss, "<title>train/loss</title>"));
  assert_non_null(strstr(loss, "<title>val/loss</title>"));
  /* gradient RMS over steps, then the distribution of fc1/grad */
  const char *rms = strstr(sec, "<h3>RMS of each gradient over steps (log scale)</h3>");
  assert_true(rms && rms < end);
  const char *grid = strstr(sec, "<div class=\"multiples\">"); /* small multiples, not full-width charts */
  assert_true(grid && grid < end);
  const char *dist = strstr(grid, "<h4>fc1/grad</h4>");
  assert_true(dist && dist < end);
  assert_non_null(strstr(dist, "min .. max"));
  assert_non_null(strstr(dist, "<polygon"));
  /* every chart of the panel has a step axis running 0 .. 39 */
  size_t charts = 0, axes = 0;
  for (const char *p = strstr(sec, "<svg"); p && p < end; p = strstr(p + 1, "<svg")) charts++;
  for (const char *p = strstr(sec, ">step</text>"); p && p < end; p = strstr(p + 1, ">step</text>")) axes++;
  assert_int_equal(charts, 3);
  assert_int_equal(axes, 3);
  /* ticks at round steps inside 0 .. 39: 0 and 30 on the full-width
   * charts, 0 and 20 on the small one, never a made-up step past 39 */
  assert_true(count(sec, "text-anchor=\"start\">0</text>") >= 3); /* clear of the axis name */
  assert_true(count(sec, "text-anchor=\"middle\">30</text>") >= 2);
  assert_int_equal(count(sec, "class=\"tick xt\" x=\"961"), 0); /* nothing drawn past the right edge */
  assert_int_equal(count(sec, "middle\">40</text>"), 0);
  assert_int_equal(count(sec, "middle\">39</text>"), 0);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(panel_has_metric_rms_and_distribution_charts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
