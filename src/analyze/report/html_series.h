/* html_series.h — helpers the sections' HTML panels share: a line chart of
 * a time series (reduced to at most PROF_HTML_SERIES_MAX points, keeping
 * the largest value of each group so the peak survives, with the peak
 * marked), a byte unit chosen from the data, and byte / percent formatting
 * for table cells.
 */
#ifndef PROF_HTML_SERIES_H
#define PROF_HTML_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/report/html.h"

#define PROF_HTML_SERIES_MAX 1000

/* Reduce n points (x ascending) to at most max: consecutive equal groups,
 * each represented by its point with the largest v. Writes ox/ov (room for
 * max points) and returns the count. Non-finite values count as 0. */
size_t prof__html_series_reduce(const double *x, const double *v, size_t n, size_t max, double *ox, double *ov);

/* A line chart of v against t (absolute ns; drawn as seconds since t0_ns),
 * each value divided by `scale` and shown in `unit`; the peak is marked.
 * Writes nothing for n == 0. Returns 0 or -1 without memory. */
int prof__html_series_chart(FILE *out, const char *title, const char *unit, double scale, const uint64_t *t,
                            const double *v, size_t n, uint64_t t0_ns);

/* A numeric cell holding bytes, shown as prof__fmt_bytes. */
void prof__html_td_bytes(FILE *out, double bytes);
/* A numeric cell holding a share 0..1, shown as a percentage. */
void prof__html_td_pct(FILE *out, double share);
/* A numeric cell holding a duration in ns. */
void prof__html_td_ns(FILE *out, uint64_t ns);
/* A numeric cell holding a count. */
void prof__html_td_count(FILE *out, double v);

#endif
