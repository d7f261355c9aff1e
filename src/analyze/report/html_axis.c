/* html_axis.c — nice axis ticks for the report's SVG charts (html_axis.h).
 *
 * Linear axes step by 1, 2 or 5 times a power of ten and start and end on a
 * step; log axes tick at powers of ten (every k-th decade when there are
 * many). A flat series gets a range around its value, so ticks never repeat
 * one label. Labels carry as many decimals as the step needs, SI suffixes
 * for large values and powers of ten for tiny ones.
 */
#include <math.h>
#include <stdio.h>

#include "analyze/report/html_axis.h"

/* The smallest 1, 2 or 5 times a power of ten that is >= v (v > 0). */
static double nice_step(double v) {
  double p = pow(10, floor(log10(v)));
  double m = v / p;
  return (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10) * p;
}

static size_t linear(prof__axis *a, double lo, double hi, int want, int expand) {
  if (!(hi > lo)) { /* flat: a range around the value */
    double d = lo != 0 ? fabs(lo) * 0.1 : 1;
    lo -= d;
    hi += d;
  }
  double step = nice_step((hi - lo) / (want > 1 ? want - 1 : 1));
  double first = ceil(lo / step - 1e-9) * step, last = floor(hi / step + 1e-9) * step;
  if (expand) {
    first = floor(lo / step + 1e-9) * step;
    last = ceil(hi / step - 1e-9) * step;
    lo = first;
    hi = last;
  }
  a->lo = lo;
  a->hi = hi;
  a->step = step;
  a->n = 0;
  for (double v = first; v <= last + step * 1e-6 && a->n < PROF_AXIS_MAX_TICKS; v += step)
    a->v[a->n++] = fabs(v) < step * 1e-9 ? 0 : v;
  return a->n;
}

size_t prof__axis_linear(prof__axis *a, double lo, double hi, int want) {
  a->log = 0;
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  return linear(a, lo, hi, want, 1);
}

size_t prof__axis_within(prof__axis *a, double lo, double hi, int want) {
  a->log = 0;
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) hi = lo;
  double l = lo, h = hi;
  linear(a, lo, hi, want, 0);
  a->lo = l; /* the data's own range: ticks lie inside it */
  a->hi = h > l ? h : l + 1;
  return a->n;
}

size_t prof__axis_log(prof__axis *a, double lo_exp, double hi_exp, int want) {
  a->log = 1;
  if (!isfinite(lo_exp) || !isfinite(hi_exp)) lo_exp = -1, hi_exp = 0;
  double lo = floor(lo_exp), hi = ceil(hi_exp);
  if (hi <= lo) hi = lo + 1;
  int decades = (int)(hi - lo), every = 1;
  while (decades / every > (want > 1 ? want : 2)) every++;
  lo = floor(lo / every) * every;
  hi = ceil(hi / every) * every;
  a->lo = lo;
  a->hi = hi;
  a->step = every;
  a->n = 0;
  for (double e = lo; e <= hi + 1e-9 && a->n < PROF_AXIS_MAX_TICKS; e += every) a->v[a->n++] = e;
  return a->n;
}

const char *prof__axis_label(const prof__axis *a, double v, char *buf, size_t n) {
  if (a->log) {
    int e = (int)lround(v);
    if (e >= -2 && e <= 3) snprintf(buf, n, "%g", pow(10, e));
    else snprintf(buf, n, "1e%d", e);
    return buf;
  }
  static const char *const big[] = {"", "k", "M", "G", "T", "P"};
  double m = fabs(v), step = a->step > 0 ? a->step : 1;
  int k = 0;
  while (m >= 1000 && step >= 1000 && k < 5) m /= 1000, v /= 1000, step /= 1000, k++;
  if (step < 1e-3 && m < 1e-3) { /* tiny values: mantissa and power of ten */
    snprintf(buf, n, "%.3g", v == 0 ? 0.0 : v);
    return buf;
  }
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (dec > 6) dec = 6;
  snprintf(buf, n, "%.*f%s", dec, v, big[k]);
  return buf;
}
