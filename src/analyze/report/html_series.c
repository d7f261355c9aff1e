/* html_series.c — time-series charts and table cells shared by the
 * sections' HTML panels (see html_series.h).
 */
#include <math.h>
#include <stdlib.h>

#include "analyze/report/html_series.h"
#include "analyze/util/fmt.h"

size_t prof__html_series_reduce(const double *x, const double *v, size_t n, size_t max, double *ox, double *ov) {
  if (!n || !max) return 0;
  size_t k = (n + max - 1) / max, m = 0;
  for (size_t i0 = 0; i0 < n; i0 += k) {
    size_t i1 = i0 + k < n ? i0 + k : n, best = i0;
    for (size_t i = i0; i < i1; i++) {
      double a = isfinite(v[i]) ? v[i] : 0, b = isfinite(v[best]) ? v[best] : 0;
      if (a > b) best = i;
    }
    ox[m] = x[best];
    ov[m++] = isfinite(v[best]) ? v[best] : 0;
  }
  return m;
}

int prof__html_series_chart(FILE *out, const char *title, const char *unit, double scale, const uint64_t *t,
                            const double *v, size_t n, uint64_t t0_ns) {
  if (!n || !t || !v) return 0;
  size_t m = n < PROF_HTML_SERIES_MAX ? n : PROF_HTML_SERIES_MAX;
  double *x = malloc(n * sizeof *x), *ox = malloc(m * sizeof *ox), *ov = malloc(m * sizeof *ov);
  if (!x || !ox || !ov) {
    free(x), free(ox), free(ov);
    return -1;
  }
  double last = 0;
  for (size_t i = 0; i < n; i++) { /* seconds since t0, never going back */
    double s = t[i] > t0_ns ? (double)(t[i] - t0_ns) / 1e9 : 0;
    x[i] = last = s > last ? s : last;
  }
  m = prof__html_series_reduce(x, v, n, m, ox, ov);
  long peak = 0;
  for (size_t i = 0; i < m; i++) {
    ov[i] = scale > 0 ? ov[i] / scale : ov[i];
    if (ov[i] > ov[peak]) peak = (long)i;
  }
  prof__chart c = {.title = title, .unit = unit, .n = m, .nseries = 1, .v = ov, .x = ox, .peak = peak};
  prof__svg_line(out, &c);
  free(x), free(ox), free(ov);
  return 0;
}

void prof__html_td_bytes(FILE *out, double bytes) {
  char b[32];
  prof__html_td_num(out, bytes, prof__fmt_bytes(b, sizeof b, bytes));
}

void prof__html_td_pct(FILE *out, double share) {
  char b[32];
  snprintf(b, sizeof b, "%.1f%%", 100 * share);
  prof__html_td_num(out, share, b);
}

void prof__html_td_ns(FILE *out, uint64_t ns) {
  char b[32];
  prof__html_td_num(out, (double)ns, prof__an_fmt_ns(b, sizeof b, ns));
}

void prof__html_td_count(FILE *out, double v) {
  char b[32];
  snprintf(b, sizeof b, "%.0f", v);
  prof__html_td_num(out, v, b);
}
