/* html_axis.h — nice axis ticks for the report's SVG charts: linear axes
 * stepping by 1, 2 or 5 times a power of ten, log axes at powers of ten,
 * and labels with the decimals the step needs (html_axis.c). */
#ifndef PROF_HTML_AXIS_H
#define PROF_HTML_AXIS_H

#include <stddef.h>

#define PROF_AXIS_MAX_TICKS 16

typedef struct prof__axis {
  double lo, hi;                   /* the axis range (log axes: exponents) */
  double step;                     /* between ticks (log axes: decades) */
  double v[PROF_AXIS_MAX_TICKS];   /* tick values (log axes: exponents) */
  size_t n;
  int log;
} prof__axis;

/* About `want` ticks over [lo, hi]; the range grows to the first and last
 * tick (a y axis). A flat range (lo == hi) becomes one around the value. */
size_t prof__axis_linear(prof__axis *a, double lo, double hi, int want);
/* About `want` ticks inside [lo, hi]; the range stays the data's (an x axis
 * of steps: no tick past the last step). */
size_t prof__axis_within(prof__axis *a, double lo, double hi, int want);
/* A log axis over the exponents [lo_exp, hi_exp] (log10 of the values):
 * ticks at powers of ten, every k-th decade for at most `want` ticks. */
size_t prof__axis_log(prof__axis *a, double lo_exp, double hi_exp, int want);
/* The label of tick value v (log axes: an exponent). Returns buf. */
const char *prof__axis_label(const prof__axis *a, double v, char *buf, size_t n);

#endif
