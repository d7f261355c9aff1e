/* html.c — escaping, frames, tables and inline SVG charts of the HTML report
 * (see html.h). Charts are plain SVG with a <title> per shape, so hovering
 * works without script; sizes are bounded by grouping points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html.h"
#include "analyze/report/html_axis.h"

#define CH_W 960      /* chart width (user units; the SVG scales to the page) */
#define CH_H 220
#define CH_L 64       /* left margin: y ticks */
#define CH_B 22       /* bottom margin */
#define CH_T 10
#define MAX_BARS 2000
#define MAX_POINTS 2000
#define MAX_FRAMES 4000

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                                      "#9c755f", "#76b7b2", "#edc948", "#bab0ac", "#ff9da7"};
#define NPAL (sizeof palette / sizeof palette[0])

void prof__html_esc(FILE *out, const char *s) {
  if (!s) return;
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    default: fputc(*s, out);
    }
  }
}

/* The nav bar links every section written to `body`, in order. It reads
 * the sections back from the page text (the id and heading that
 * prof__html_section_begin wrote, already escaped) rather than keeping a
 * list aside, so reports built at the same time share nothing. */
#define NAV_MAX 48
#define NAV_OPEN "<section class=\"sec\" id=\""
#define NAV_HEAD "\">\n<h2>"

void prof__html_nav(FILE *out, const char *body, size_t len) {
  fputs("<nav>", out);
  const char *p = body, *end = body + len;
  for (size_t n = 0; p && n < NAV_MAX; n++) {
    p = memmem(p, (size_t)(end - p), NAV_OPEN, strlen(NAV_OPEN));
    if (!p) break;
    const char *id = p + strlen(NAV_OPEN);
    const char *head = memmem(id, (size_t)(end - id), NAV_HEAD, strlen(NAV_HEAD));
    const char *title = head ? head + strlen(NAV_HEAD) : NULL;
    const char *close = title ? memmem(title, (size_t)(end - title), "</h2>", 5) : NULL;
    if (!close) break;
    fputs("<a href=\"#", out);
    fwrite(id, 1, (size_t)(head - id), out);
    fputs("\">", out);
    fwrite(title, 1, (size_t)(close - title), out);
    fputs("</a>", out);
    p = close;
  }
  fputs("</nav>\n", out);
}

void prof__html_section_begin(FILE *out, const char *id, const char *title) {
  fputs(NAV_OPEN, out);
  prof__html_esc(out, id);
  fputs(NAV_HEAD, out);
  prof__html_esc(out, title);
  fputs("</h2>\n", out);
}

void prof__html_section_end(FILE *out) { fputs("</section>\n", out); }

void prof__html_table_begin(FILE *out, const char *const *headers, size_t n) {
  fputs("<div class=\"tw\"><table class=\"sortable\"><thead><tr>", out);
  for (size_t i = 0; i < n; i++) {
    fputs("<th>", out);
    prof__html_esc(out, headers[i]);
    fputs("</th>", out);
  }
  fputs("</tr></thead><tbody>\n", out);
}

void prof__html_table_end(FILE *out) { fputs("</tbody></table></div>\n", out); }

void prof__html_td(FILE *out, const char *text) {
  if (text && strlen(text) > PROF_HTML_LONG_NAME) { /* ellipsized by the CSS; the full text on hover */
    fputs("<td class=\"el\" title=\"", out);
    prof__html_esc(out, text);
    fputs("\">", out);
  } else {
    fputs("<td>", out);
  }
  prof__html_esc(out, text);
  fputs("</td>", out);
}

void prof__html_td_num(FILE *out, double v, const char *text) {
  fprintf(out, "<td class=\"num\" data-v=\"%.17g\">", isfinite(v) ? v : 0.0);
  prof__html_esc(out, text);
  fputs("</td>", out);
}

const char *prof__html_num(char *buf, size_t n, double v) {
  static const char *const suf[] = {"", "k", "M", "G", "T", "P"};
  int k = 0;
  double a = fabs(v);
  while (a >= 1000 && k < 5) {
    a /= 1000;
    v /= 1000;
    k++;
  }
  if (k == 0 && a == floor(a)) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, a < 10 ? "%.2f%s" : a < 100 ? "%.1f%s" : "%.0f%s", v, suf[k]);
  return buf;
}


static const char *color_of(const prof__chart *c, size_t s) {
  return c->colors && c->colors[s] ? c->colors[s] : palette[s % NPAL];
}

static void svg_open(FILE *out, const char *title, int h) {
  fprintf(out, "<figure class=\"chart\"><svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", CH_W, h);
  prof__html_esc(out, title);
  fputs("\" xmlns=\"http://www.w3.org/2000/svg\">\n", out);
}

/* The y axis from 0 to a nice value >= ymax (html_axis.h); returns that
 * top value, which the chart scales to. */
static double y_axis(FILE *out, double ymax, const char *unit) {
  char b[32];
  prof__axis a;
  prof__axis_linear(&a, 0, ymax > 0 && isfinite(ymax) ? ymax : 1, 5);
  for (size_t i = 0; i < a.n; i++) {
    double y = CH_T + (CH_H - CH_T - CH_B) * (1 - a.v[i] / a.hi);
    fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", CH_L, CH_W, y, y);
    fprintf(out, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s%s%s</text>\n", CH_L - 4, y + 4,
            prof__axis_label(&a, a.v[i], b, sizeof b), unit && *unit ? " " : "", unit ? unit : "");
  }
  return a.hi;
}

static void legend(FILE *out, const prof__chart *c) {
  fputs("<figcaption>", out);
  for (size_t s = 0; c->series && s < c->nseries; s++) {
    fprintf(out, "<span class=\"key\"><i style=\"background:%s\"></i>", color_of(c, s));
    prof__html_esc(out, c->series[s]);
    fputs("</span>", out);
  }
  int any = 0;
  for (size_t i = 0; c->mark && i < c->n && !any; i++) any = c->mark[i];
  if (any && c->mark_label) {
    fputs("<span class=\"key\"><i style=\"background:#bbb\"></i>", out);
    prof__html_esc(out, c->mark_label);
    fputs("</span>", out);
  }
}

/* Mean of group g (points [g*k, min(n, g*k+k))) of layer s, and its flags. */
static double group_mean(const prof__chart *c, size_t g, size_t k, size_t s, int *marked) {
  double sum = 0;
  size_t i0 = g * k, i1 = i0 + k < c->n ? i0 + k : c->n;
  for (size_t i = i0; i < i1; i++) {
    double v = c->v[i * c->nseries + s];
    sum += isfinite(v) ? v : 0;
    if (c->mark && c->mark[i]) *marked = 1;
  }
  return i1 > i0 ? sum / (double)(i1 - i0) : 0;
}

static void bar_title(FILE *out, const prof__chart *c, size_t g, size_t k, const double *vals) {
  char b[32];
  size_t i0 = g * k, i1 = i0 + k < c->n ? i0 + k : c->n;
  fputs("<title>", out);
  const char *fmt = c->id_fmt ? c->id_fmt : "#%llu";
  unsigned long long a = c->ids ? (unsigned long long)c->ids[i0] : i0, z = c->ids ? c->ids[i1 - 1] : i1 - 1;
  fprintf(out, fmt, a);
  if (k > 1) fprintf(out, " … %llu (mean of %zu)", z, i1 - i0);
  for (size_t s = 0; s < c->nseries; s++) {
    fputs(s ? "; " : ": ", out);
    if (c->series && c->nseries > 1) {
      prof__html_esc(out, c->series[s]);
      fputc(' ', out);
    }
    fprintf(out, "%s %s", prof__html_num(b, sizeof b, vals[s]), c->unit ? c->unit : "");
  }
  fputs("</title>", out);
}

/* The x axis of a bar chart: up to 6 ticks labelled with the bars' ids
 * (step numbers) or indexes, and the axis name ("step" when the ids are
 * step numbers). */
static unsigned long long bar_id(const prof__chart *c, size_t i) {
  return c->ids ? (unsigned long long)c->ids[i] : (unsigned long long)i;
}

static void x_axis_ids(FILE *out, const prof__chart *c, size_t ng, size_t k, double slot) {
  prof__axis a; /* round ids (0, 50, 100, ...) inside the ids shown */
  double first = (double)bar_id(c, 0), last = (double)bar_id(c, c->n - 1);
  prof__axis_within(&a, first, last, 6);
  double step = a.step >= 1 ? a.step : 1, next = ceil(first / step) * step;
  for (size_t g = 0, shown = 0; g < ng && shown < PROF_AXIS_MAX_TICKS; g++) {
    size_t i0 = g * k, i1 = i0 + k < c->n ? i0 + k : c->n;
    if ((double)bar_id(c, i1 - 1) < next) continue; /* the group holding the next round id */
    double x = CH_L + slot * ((double)g + 0.4);
    fprintf(out, "<text class=\"tick xt\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.0f</text>", x, CH_H - CH_B + 15,
            x > CH_W - 24 ? "end" : x < CH_L + 12 ? "start" : "middle", next);
    shown++;
    while (next <= (double)bar_id(c, i1 - 1)) next += step;
  }
  int steps = c->id_fmt && strstr(c->id_fmt, "step") != NULL;
  fprintf(out, "<text class=\"tick xl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", CH_L - 4, CH_H - CH_B + 15,
          steps ? "step" : "#");
}

void prof__svg_bars(FILE *out, const prof__chart *c) {
  if (!c || !c->n || !c->v || !c->nseries || c->nseries > 64) return;
  size_t k = (c->n + MAX_BARS - 1) / MAX_BARS, ng = (c->n + k - 1) / k;
  double vals[64], ymax = 0;
  for (size_t g = 0; g < ng; g++) {
    double tot = 0;
    int m = 0;
    for (size_t s = 0; s < c->nseries; s++) tot += group_mean(c, g, k, s, &m);
    if (tot > ymax) ymax = tot;
  }
  svg_open(out, c->title, CH_H);
  ymax = y_axis(out, ymax, c->unit);
  double slot = (double)(CH_W - CH_L) / (double)ng, bw = slot > 3 ? slot * 0.8 : slot, ph = CH_H - CH_T - CH_B;
  for (size_t g = 0; g < ng; g++) {
    int marked = 0;
    for (size_t s = 0; s < c->nseries; s++) vals[s] = group_mean(c, g, k, s, &marked);
    fputs("<g class=\"bar\">", out);
    bar_title(out, c, g, k, vals);
    double y = CH_H - CH_B, x = CH_L + slot * (double)g;
    for (size_t s = 0; s < c->nseries; s++) {
      double h = vals[s] / ymax * ph;
      if (h <= 0) continue;
      y -= h;
      fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>", x, y, bw, h,
              marked && c->nseries == 1 ? "#bbb" : color_of(c, s));
    }
    fputs("</g>\n", out);
  }
  x_axis_ids(out, c, ng, k, slot);
  fputs("</svg>", out);
  legend(out, c);
  if (k > 1) fprintf(out, " <span class=\"note\">each bar is the mean of %zu consecutive points</span>", k);
  fputs("</figcaption></figure>\n", out);
}

/* Index range [i0, i1) of group g; the point of the group with the largest value. */
static size_t group_max(const prof__chart *c, size_t i0, size_t i1) {
  size_t best = i0;
  for (size_t i = i0 + 1; i < i1; i++)
    if (c->v[i] > c->v[best]) best = i;
  return best;
}

void prof__svg_line(FILE *out, const prof__chart *c) {
  if (!c || c->n < 1 || !c->v || !c->x) return;
  size_t k = (c->n + MAX_POINTS - 1) / MAX_POINTS;
  double ymax = 0, x0 = c->x[0], x1 = c->x[c->n - 1];
  for (size_t i = 0; i < c->n; i++)
    if (isfinite(c->v[i]) && c->v[i] > ymax) ymax = c->v[i];
  double span = x1 > x0 ? x1 - x0 : 1, pw = CH_W - CH_L, ph = CH_H - CH_T - CH_B;
  svg_open(out, c->title, CH_H);
  ymax = y_axis(out, ymax, c->unit);
  fprintf(out, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" points=\"", color_of(c, 0));
  for (size_t i0 = 0; i0 < c->n; i0 += k) {
    size_t i = group_max(c, i0, i0 + k < c->n ? i0 + k : c->n);
    double v = isfinite(c->v[i]) ? c->v[i] : 0;
    fprintf(out, "%.1f,%.1f ", CH_L + (c->x[i] - x0) / span * pw, CH_T + (1 - v / ymax) * ph);
  }
  fputs("\"/>\n", out);
  fprintf(out, "<text class=\"tick\" x=\"%d\" y=\"%d\">%.3g s</text><text class=\"tick\" x=\"%d\" y=\"%d\" "
               "text-anchor=\"end\">%.3g s</text>\n",
          CH_L, CH_H - 6, x0, CH_W, CH_H - 6, x1);
  if (c->peak >= 0 && (size_t)c->peak < c->n) {
    char b[32];
    double px = CH_L + (c->x[c->peak] - x0) / span * pw, py = CH_T + (1 - c->v[c->peak] / ymax) * ph;
    fprintf(out, "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>peak %s %s at %.3f s</title></circle>",
            px, py, prof__html_num(b, sizeof b, c->v[c->peak]), c->unit ? c->unit : "", c->x[c->peak]);
    fprintf(out, "<text class=\"peaklabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak %s %s</text>\n", px,
            py < 24 ? py + 16 : py - 8, px > CH_W - 120 ? "end" : "start", b, c->unit ? c->unit : "");
  }
  fputs("</svg>", out);
  legend(out, c);
  fputs("</figcaption></figure>\n", out);
}

void prof__svg_flame(FILE *out, const prof__flame_node *nodes, size_t n, const char *unit) {
  if (!nodes || !n) return;
  int maxd = 0;
  size_t drawn = 0;
  for (size_t i = 0; i < n; i++)
    if (nodes[i].depth > maxd && nodes[i].depth < 200) maxd = nodes[i].depth;
  int rowh = 18, h = (maxd + 1) * rowh + 4;
  fprintf(out, "<figure class=\"chart\"><svg class=\"flame\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"flame graph\" xmlns=\"http://www.w3.org/2000/svg\">\n", CH_W, h);
  for (size_t i = 0; i < n && drawn < MAX_FRAMES; i++) {
    const prof__flame_node *f = &nodes[i];
    if (f->depth < 0 || f->depth > maxd || !(f->w >= 0.0005) || f->w > 1 || !(f->x >= 0) || f->x > 1) continue;
    char b[32];
    double x = f->x * CH_W, w = f->w * CH_W, y = h - (f->depth + 1) * rowh;
    unsigned hue = 10 + (unsigned)(f->name ? strlen(f->name) * 7 + (unsigned char)f->name[0] : 0) % 40;
    fprintf(out, "<g class=\"fr\" data-x=\"%.6f\" data-w=\"%.6f\" data-d=\"%d\"><title>", f->x, f->w, f->depth);
    prof__html_esc(out, f->name);
    fprintf(out, " — %s %s (%.1f%%)</title>", prof__html_num(b, sizeof b, f->value), unit ? unit : "", f->w * 100);
    fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"hsl(%u,85%%,60%%)\"/>", x, (int)y,
            w, rowh - 1, hue);
    fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, (int)y + 13);
    if (w > 40) { /* the script re-fits labels after a zoom */
      size_t room = (size_t)(w / 7), len = f->name ? strlen(f->name) : 0;
      if (len <= room) prof__html_esc(out, f->name);
      else if (room > 2) {
        char tmp[256];
        size_t m = room - 1 < sizeof tmp - 1 ? room - 1 : sizeof tmp - 1;
        memcpy(tmp, f->name, m);
        tmp[m] = 0;
        prof__html_esc(out, tmp);
        fputs("…", out);
      }
    }
    fputs("</text></g>\n", out);
    drawn++;
  }
  fputs("</svg><figcaption>click a frame to zoom into it; click the bottom frame to zoom out</figcaption></figure>\n",
        out);
}

void prof__html_fact(FILE *out, const char *key, const char *value) {
  fputs("<tr><th>", out);
  prof__html_esc(out, key);
  fputs("</th><td>", out);
  prof__html_esc(out, value);
  fputs("</td></tr>", out);
}
