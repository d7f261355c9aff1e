/* sec_health_html.c — the HTML model-health panel (sec_health_html.h): SVG
 * charts with the training step on the x axis. Each metric gets one chart
 * with its train and validation curves; gradients and other tensors get one
 * chart of RMS over steps (log scale, all tensors of a kind together) and
 * one distribution chart each (min..max band, mean ± std band, mean line).
 * Series longer than MAX_PTS points are thinned to every k-th point, the
 * last point always kept. Axes tick at nice values (html_axis.h); the
 * distribution charts are small multiples in a grid. */
#include <math.h>
#include <string.h>

#include "analyze/report/html.h"
#include "analyze/report/html_axis.h"
#include "analyze/sections/health/sec_health_html.h"

#define W 960 /* a full-width chart */
#define H 200
#define SW 420 /* a small multiple */
#define SH 170
#define L 64
#define B 24
#define T 10
#define MAX_PTS 400
#define MAX_CHARTS 24 /* distribution charts (one per tensor) */

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

typedef struct axes {
  double x0, x1, y0, y1; /* data ranges (log axes: exponents) */
  int logy;
  int w, h;              /* chart size: W x H, or SW x SH for a small multiple */
  prof__axis ya, xa;     /* ticks, set by svg_begin */
} axes;

static double px(const axes *a, double step) {
  return L + (a->x1 > a->x0 ? (step - a->x0) / (a->x1 - a->x0) : 0.5) * (a->w - L - 8);
}

static double py(const axes *a, double v) {
  if (a->logy) v = v > 0 ? log10(v) : a->ya.lo;
  double f = a->ya.hi > a->ya.lo ? (v - a->ya.lo) / (a->ya.hi - a->ya.lo) : 0.5;
  if (f < 0) f = 0;
  if (f > 1) f = 1;
  return T + (1 - f) * (a->h - T - B);
}

/* Opens the chart and draws its axes: y ticks at nice values over a range
 * that holds the data, x ticks at round step numbers inside the steps shown
 * (the last label kept inside the chart). */
static void svg_begin(FILE *out, const char *title, axes *a) {
  char b[32];
  int want = a->h < H ? 4 : 5;
  if (a->logy) prof__axis_log(&a->ya, a->y0, a->y1, want);
  else prof__axis_linear(&a->ya, a->y0, a->y1, want);
  prof__axis_within(&a->xa, a->x0, a->x1, a->w < W ? 4 : 7);
  fprintf(out, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", a->w, a->h);
  prof__html_esc(out, title);
  fputs("\">", out);
  for (size_t i = 0; i < a->ya.n; i++) {
    double v = a->ya.v[i], y = py(a, a->logy ? pow(10, v) : v);
    fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", L, a->w, y, y);
    fprintf(out, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", L - 4, y + 4,
            prof__axis_label(&a->ya, v, b, sizeof b));
  }
  for (size_t i = 0; i < a->xa.n; i++) {
    double x = px(a, a->xa.v[i]);
    const char *anchor = x > a->w - 24 ? "end" : x < L + 12 ? "start" : "middle";
    fprintf(out, "<text class=\"tick xt\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>", x, a->h - B + 15, anchor,
            prof__axis_label(&a->xa, a->xa.v[i], b, sizeof b));
  }
  fprintf(out, "<text class=\"tick xl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">step</text>\n", L - 4, a->h - B + 15);
}

static void svg_end(FILE *out, const char *const *names, const char *const *colors, size_t n, const char *note) {
  fputs("</svg><figcaption>", out);
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "<span class=\"key\"><i style=\"background:%s\"></i>", colors[i]);
    prof__html_esc(out, names[i]);
    fputs("</span>", out);
  }
  if (note) fprintf(out, " <span class=\"note\">%s</span>", note);
  fputs("</figcaption></figure>\n", out);
}

static size_t stride(size_t n) { return n > MAX_PTS ? (n + MAX_PTS - 1) / MAX_PTS : 1; }

/* One polyline; points with a non-finite value (or <= 0 on a log axis) are
 * skipped. */
static void polyline(FILE *out, const axes *a, const uint64_t *x, const double *v, size_t n, const char *color,
                     const char *title) {
  size_t k = stride(n);
  fprintf(out, "<g><title>");
  prof__html_esc(out, title);
  fprintf(out, "</title><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
  for (size_t i = 0; i < n; i += k) {
    size_t j = i + k >= n ? n - 1 : i;
    if (!isfinite(v[j]) || (a->logy && v[j] <= 0)) continue;
    fprintf(out, "%.1f,%.1f ", px(a, (double)x[j]), py(a, v[j]));
    if (j == n - 1) break;
  }
  fputs("\"/></g>\n", out);
}

/* A band between lo[i] and hi[i]. */
static void band(FILE *out, const axes *a, const uint64_t *x, const double *lo, const double *hi, size_t n,
                 const char *color, double opacity) {
  size_t k = stride(n);
  fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\" points=\"", color, opacity);
  for (size_t i = 0; i < n; i += k) fprintf(out, "%.1f,%.1f ", px(a, (double)x[i]), py(a, hi[i]));
  fprintf(out, "%.1f,%.1f ", px(a, (double)x[n - 1]), py(a, hi[n - 1]));
  fprintf(out, "%.1f,%.1f ", px(a, (double)x[n - 1]), py(a, lo[n - 1]));
  for (size_t i = (n - 1) / k * k + 1; i-- > 0;)
    if (i % k == 0) fprintf(out, "%.1f,%.1f ", px(a, (double)x[i]), py(a, lo[i]));
  fputs("\"/>\n", out);
}

static void extend(axes *a, const uint64_t *x, const double *v, size_t n, int first) {
  for (size_t i = 0; i < n; i++) {
    double y = v ? v[i] : NAN;
    if ((double)x[i] < a->x0 || (first && i == 0)) a->x0 = (double)x[i];
    if ((double)x[i] > a->x1 || (first && i == 0)) a->x1 = (double)x[i];
    if (!v || !isfinite(y) || (a->logy && y <= 0)) continue;
    if (a->logy) y = log10(y);
    if (y < a->y0) a->y0 = y;
    if (y > a->y1) a->y1 = y;
  }
}

static void metric_charts(FILE *out, const prof__mh_metric *m, size_t nm) {
  for (size_t i = 0; i < nm; i++) {
    int seen = 0; /* the metric was charted with an earlier tag */
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(m[k].metric, m[i].metric) == 0;
    if (seen || !m[i].n) continue;
    axes a = {.x0 = INFINITY, .x1 = -INFINITY, .y0 = INFINITY, .y1 = -INFINITY, .logy = 0, .w = W, .h = H};
    const char *names[8], *colors[8];
    size_t ns = 0;
    for (size_t k = i; k < nm; k++)
      if (strcmp(m[k].metric, m[i].metric) == 0 && m[k].n) extend(&a, m[k].step, m[k].v, m[k].n, 0);
    if (!(a.y1 >= a.y0)) continue;
    fputs("<h3>", out);
    prof__html_esc(out, m[i].metric);
    fputs("</h3>\n", out);
    svg_begin(out, m[i].metric, &a);
    for (size_t k = i; k < nm && ns < 8; k++) {
      if (strcmp(m[k].metric, m[i].metric) != 0 || !m[k].n) continue;
      colors[ns] = m[k].val ? palette[1] : ns ? palette[2 + ns] : palette[0];
      names[ns] = m[k].tag;
      polyline(out, &a, m[k].step, m[k].v, m[k].n, colors[ns], m[k].tag);
      ns++;
    }
    svg_end(out, names, colors, ns, "train and validation of one metric share the chart");
  }
}

/* RMS of every tensor of one kind on one log-scale chart. */
static void rms_chart(FILE *out, const prof__mh_tensor *t, size_t nt, const char *kind) {
  axes a = {.x0 = INFINITY, .x1 = -INFINITY, .y0 = INFINITY, .y1 = -INFINITY, .logy = 1, .w = W, .h = H};
  size_t n = 0;
  for (size_t i = 0; i < nt; i++)
    if (strcmp(t[i].kind, kind) == 0 && t[i].n) extend(&a, t[i].step, t[i].rms, t[i].n, 0), n++;
  if (!n || !(a.y1 >= a.y0)) return;
  if (a.y1 == a.y0) a.y0 -= 1, a.y1 += 1;
  fprintf(out, "<h3>RMS of each %s over steps (log scale)</h3>\n", kind);
  char title[64];
  snprintf(title, sizeof title, "RMS of each %s over steps", kind);
  svg_begin(out, title, &a);
  const char *names[10], *colors[10];
  size_t ns = 0;
  for (size_t i = 0; i < nt; i++) {
    if (strcmp(t[i].kind, kind) != 0 || !t[i].n) continue;
    const char *c = palette[ns % 10];
    polyline(out, &a, t[i].step, t[i].rms, t[i].n, c, t[i].tag);
    if (ns < 10) names[ns] = t[i].tag, colors[ns] = c;
    ns++;
  }
  svg_end(out, names, colors, ns < 10 ? ns : 10, ns > 10 ? "the first 10 are named; hover a curve for its name" : NULL);
}

/* Distribution of one tensor over steps. */
static void dist_chart(FILE *out, const prof__mh_tensor *t) {
  if (t->n < 2) return;
  double lo[MAX_PTS + 1], hi[MAX_PTS + 1], mlo[MAX_PTS + 1], mhi[MAX_PTS + 1], mean[MAX_PTS + 1];
  uint64_t x[MAX_PTS + 1];
  size_t k = stride(t->n), n = 0;
  for (size_t i = 0; i < t->n && n <= MAX_PTS; i += k) {
    size_t j = i + k >= t->n ? t->n - 1 : i;
    x[n] = t->step[j];
    lo[n] = t->min[j];
    hi[n] = t->max[j];
    mean[n] = t->mean[j];
    mlo[n] = t->mean[j] - t->std[j];
    mhi[n] = t->mean[j] + t->std[j];
    if (!isfinite(lo[n]) || !isfinite(hi[n]) || !isfinite(mean[n])) lo[n] = hi[n] = mean[n] = mlo[n] = mhi[n] = 0;
    n++;
    if (j == t->n - 1) break;
  }
  axes a = {.x0 = INFINITY, .x1 = -INFINITY, .y0 = INFINITY, .y1 = -INFINITY, .logy = 0, .w = W, .h = H};
  a.w = SW;
  a.h = SH;
  extend(&a, x, lo, n, 0);
  extend(&a, x, hi, n, 0);
  if (!(a.y1 >= a.y0)) return;
  fputs("<div class=\"multiple\"><h4>", out);
  prof__html_esc(out, t->tag);
  fputs("</h4>\n", out);
  svg_begin(out, t->tag, &a);
  band(out, &a, x, lo, hi, n, palette[0], 0.18);
  band(out, &a, x, mlo, mhi, n, palette[0], 0.38);
  polyline(out, &a, x, mean, n, palette[0], "mean");
  static const char *const names[] = {"min .. max", "mean ± std", "mean"};
  static const char *const colors[] = {"#d2e3f0", "#9dc1de", "#1f77b4"};
  svg_end(out, names, colors, 3, NULL);
  fputs("</div>\n", out);
}

void prof__sec_health_html(FILE *out, const prof__mh_metric *m, size_t nm, const prof__mh_tensor *t, size_t nt) {
  if (!nm && !nt) return;
  prof__html_section_begin(out, "model", "Model health");
  if (nm) {
    fputs("<h3 class=\"sub\">Metrics</h3>\n", out);
    metric_charts(out, m, nm);
  }
  if (nt) {
    static const char *const kinds[] = {"gradient", "weight", "activation", "other"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) rms_chart(out, t, nt, kinds[k]);
    fputs("<h3>Distributions over steps</h3>\n<p class=\"note\">Like TensorBoard's distributions: the light band "
          "spans min .. max of the tensor at each step, the darker one mean ± std.</p>\n",
          out);
    fputs("<div class=\"multiples\">\n", out);
    for (size_t i = 0, shown = 0; i < nt && shown < MAX_CHARTS; i++)
      if (t[i].n >= 2) dist_chart(out, &t[i]), shown++;
    fputs("</div>\n", out);
  }
  prof__html_section_end(out);
}
