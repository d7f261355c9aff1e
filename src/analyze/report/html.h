/* html.h — building blocks of the HTML report, for the report writer and
 * for the sections' html hooks: escaping, section frames, sortable tables,
 * and inline SVG charts drawn by mlprof itself (bars, stacked bars, a line
 * with its peak marked, flame-graph rectangles).
 *
 * Conventions a section's html hook follows (the page's style sheet and
 * script rely on them): write one `<section class="sec" id="NAME">` with
 * prof__html_section_begin/end, numbers in `<td class="num" data-v="RAW">`
 * (prof__html_td_num) so tables sort by value, and nothing that loads from
 * the network. Every chart and table bounds its own size.
 */
#ifndef PROF_HTML_H
#define PROF_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"

/* Text and attribute escaping (& < > " '). NULL writes nothing. */
void prof__html_esc(FILE *out, const char *s);
/* One "<tr><th>key</th><td>value</td></tr>" row of a facts table, escaped. */
void prof__html_fact(FILE *out, const char *key, const char *value);

/* <section class="sec" id="ID"><h2>TITLE</h2> ... </section> */
void prof__html_section_begin(FILE *out, const char *id, const char *title);
/* The nav bar: a link to every section (prof__html_section_begin) in the
 * page text body[0..len), in order, at most 48. */
void prof__html_nav(FILE *out, const char *body, size_t len);
void prof__html_section_end(FILE *out);

/* A sortable table (click a heading): headers[0..n). Numeric columns are
 * those whose cells use prof__html_td_num. */
void prof__html_table_begin(FILE *out, const char *const *headers, size_t n);
void prof__html_table_end(FILE *out);
/* A text cell; text longer than PROF_HTML_LONG_NAME characters is shown
 * ellipsized, with the full text on hover (title). */
#define PROF_HTML_LONG_NAME 48
void prof__html_td(FILE *out, const char *text);
/* A right-aligned cell showing `text`, sorted by `v`. */
void prof__html_td_num(FILE *out, double v, const char *text);

/* A chart. Values are row-major: v[i * nseries + s] for point i, layer s. */
typedef struct prof__chart {
  const char *title;          /* accessible name of the figure */
  const char *unit;           /* axis unit shown on the ticks ("ms", "MiB", "%") */
  size_t n;                   /* bars or points */
  size_t nseries;             /* stacked layers (bars); 1 for a line */
  const double *v;
  const char *const *series;  /* legend names, nseries (NULL: no legend) */
  const char *const *colors;  /* nseries CSS colours (NULL: a default palette) */
  const uint64_t *ids;        /* bars: id shown on hover (e.g. step numbers), NULL: index */
  const char *id_fmt;         /* printf format for an id, e.g. "step %llu" */
  const unsigned char *mark;  /* bars: 1 = drawn in mark_color (e.g. warm-up) */
  const char *mark_label;     /* legend text of marked bars */
  const double *x;            /* line: x of each point (seconds), ascending */
  long peak;                  /* line: index of the point to mark, -1: none */
} prof__chart;

/* Bar chart; stacked when nseries > 1. At most 2000 bars are drawn: more
 * points are averaged in equal groups (the caption says so). */
void prof__svg_bars(FILE *out, const prof__chart *c);
/* Line chart of v[0..n) against x[0..n); at most 2000 points are drawn (the
 * maximum of each group is kept, so a peak never disappears). */
void prof__svg_line(FILE *out, const prof__chart *c);

/* One rectangle of a flame graph: x and width as fractions (0..1) of the
 * whole, depth 0 at the bottom (the root). */
typedef struct prof__flame_node {
  const char *name;
  int depth;
  double x, w;
  double value;               /* shown on hover, in `unit` */
} prof__flame_node;

/* Flame graph (click a frame to zoom, click the root to reset; readable as
 * a still picture without script). Frames narrower than 0.05% are not drawn;
 * at most 4000 frames. */
void prof__svg_flame(FILE *out, const prof__flame_node *nodes, size_t n, const char *unit);

/* A short human number: 1.5k, 2.3M ... into buf. */
const char *prof__html_num(char *buf, size_t n, double v);

/* The HTML report (report_html.c). */
int prof__report_html(prof__an *an, FILE *out);

#endif
