/* sec_functions_html.c — the "functions" section's panel of the HTML
 * report: sampling facts, the top functions by self and by total time (one
 * sortable table), CPU vs wall time per step (stacked bars and a summary of
 * compute-bound / mixed / waiting steps), hot functions per range, and an
 * interactive flame graph of the merged call tree (prof__svg_flame: click
 * a frame to zoom, click the root to zoom out, hover for samples and
 * share), and for Python programs the hot Python lines with the native
 * libraries below them. Nothing when the trace has no samples. The flame graph leaves out
 * frames under FLAME_MIN_SHARE of the samples and keeps at most FLAME_MAX
 * frames, so the page stays bounded on any trace.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html_series.h"
#include "analyze/sections/functions/sec_functions_int.h"

#define TOP_FUNCS 30          /* rows: top by self, plus top by total not already there */
#define TOP_RANGES 15         /* ranges in the per-range table */
#define RANGE_FUNCS 3         /* hot functions shown per range */
#define FLAME_MIN_SHARE 0.001 /* frames under 0.1% of the samples are dropped */
#define FLAME_MAX 3000        /* frames drawn at most */
#define FLAME_DEPTH 128       /* frames deeper than this are dropped */
#define STACK_NAMES 256
#define NAME_MAX_SHOWN 80     /* longer function names are shortened (full name on hover) */

/* ---- facts ------------------------------------------------------------------- */

static void facts(prof__an *an, const prof__fn_st *s, FILE *out) {
  char b[128];
  fputs("<table class=\"facts\">", out);
  prof__html_fact(out, "mode", s->mode ? "wall clock (every thread, running or waiting)" : "CPU time (running threads)");
  snprintf(b, sizeof b, "%.0f Hz (one sample every %.2f ms)", 1e9 / s->period_ns, s->period_ns / 1e6);
  prof__html_fact(out, "rate", b);
  int perf = strcmp(prof__fn_sampler(an, s), "perf") == 0;
  snprintf(b, sizeof b, "%s: %.0f samples a second per %sthread",
           perf ? "perf clock (exact periods of each thread's CPU time)"
                : "POSIX timers (fire at scheduler ticks; missed periods are weights)",
           prof__fn_effective_hz(s), s->mode ? "" : "busy ");
  prof__html_fact(out, "sampler", b);
  snprintf(b, sizeof b, "%llu (%llu without a call stack)", (unsigned long long)s->samples[s->mode],
           (unsigned long long)s->no_stack[s->mode]);
  prof__html_fact(out, "samples", b);
  snprintf(b, sizeof b, "about %.1f ms (%llu sampling periods)", (double)s->total_w * s->period_ns / 1e6,
           (unsigned long long)s->total_w);
  prof__html_fact(out, "sampled time", b);
  snprintf(b, sizeof b, "%zu", s->nf);
  prof__html_fact(out, "distinct functions", b);
  fputs("</table>\n", out);
}

/* ---- top functions -------------------------------------------------------------- */

/* A function name in a cell: long ones (C++ templates) are shortened to
 * their head and tail with the whole name (and the linked name) on hover. */
static void name_cell(FILE *out, const char *name, const char *mangled) {
  size_t n = strlen(name);
  if (n <= NAME_MAX_SHOWN && !mangled) {
    prof__html_esc(out, name);
    return;
  }
  fputs("<span class=\"fname\" title=\"", out);
  prof__html_esc(out, name);
  if (mangled) {
    fputs("\n", out);
    prof__html_esc(out, mangled);
  }
  fputs("\">", out);
  if (n <= NAME_MAX_SHOWN) {
    prof__html_esc(out, name);
  } else {
    size_t head = NAME_MAX_SHOWN * 2 / 3, tail = n - (NAME_MAX_SHOWN - head - 1);
    while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80) head--; /* whole UTF-8 characters */
    while (tail < n && ((unsigned char)name[tail] & 0xc0) == 0x80) tail++;
    char *h = strndup(name, head);
    if (h) prof__html_esc(out, h);
    free(h);
    fputs("&hellip;", out);
    prof__html_esc(out, name + tail);
  }
  fputs("</span>", out);
}

static void td_ms(FILE *out, double ms) {
  char b[32];
  snprintf(b, sizeof b, "%.1f ms", ms);
  prof__html_td_num(out, ms, b);
}

static void func_row(const prof__fn_st *s, const prof__fn_func *f, FILE *out) {
  double tw = (double)s->total_w;
  fputs("<tr><td>", out);
  name_cell(out, f->name, f->mangled);
  if (f->inlined) fputs(" <span class=\"note\">[inlined]</span>", out);
  if (f->file) {
    const char *base = strrchr(f->file, '/');
    fprintf(out, " <span class=\"note\">(");
    prof__html_esc(out, base ? base + 1 : f->file);
    fprintf(out, ":%d)</span>", f->line);
  }
  fputs("</td>", out);
  prof__html_td(out, f->module ? f->module : "?");
  prof__html_td_pct(out, (double)f->self / tw);
  td_ms(out, (double)f->self * s->period_ns / 1e6);
  prof__html_td_pct(out, (double)f->total / tw);
  td_ms(out, (double)f->total * s->period_ns / 1e6);
  fputs("</tr>\n", out);
}

static void top_functions(const prof__fn_st *s, FILE *out) {
  size_t *self = prof__fn_ranked(s, 0), *total = prof__fn_ranked(s, 1);
  unsigned char *shown = calloc(s->nf ? s->nf : 1, 1);
  if (self && total && shown) {
    fputs("<h3>Top functions</h3>\n<p class=\"note\">The top functions by self time (samples where the function "
          "itself was running) and by total time (samples where it was anywhere on the stack); click a heading to "
          "sort. Times are estimated as samples × sampling period.</p>\n",
          out);
    static const char *const h[] = {"function", "module", "self %", "self (est.)", "total %", "total (est.)"};
    prof__html_table_begin(out, h, 6);
    for (int pass = 0; pass < 2; pass++) {
      const size_t *idx = pass ? total : self;
      for (size_t i = 0; i < s->nf && i < TOP_FUNCS; i++) {
        const prof__fn_func *f = &s->f[idx[i]];
        if (shown[idx[i]] || !(pass ? f->total : f->self)) continue;
        shown[idx[i]] = 1;
        func_row(s, f, out);
      }
    }
    prof__html_table_end(out);
  }
  free(self);
  free(total);
  free(shown);
}

/* ---- steps ------------------------------------------------------------------- */

static double step_wall_ms(const prof__an *an, size_t i) {
  return (double)(an->steps[i].end_ns - an->steps[i].begin_ns) / 1e6;
}

static double step_cpu_ms(const prof__fn_st *s, size_t i, double wall_ms) { return prof__fn_step_cpu_ms(s, i, wall_ms); }

static void step_kinds(prof__an *an, const prof__fn_st *s, FILE *out) {
  static const char *const kinds[] = {"compute", "mixed", "waiting"};
  size_t count[3] = {0};
  double wall[3] = {0}, cpu[3] = {0};
  for (size_t i = 0; i < an->nsteps; i++) {
    double w = step_wall_ms(an, i), c = step_cpu_ms(s, i, w);
    const char *k = prof__fn_step_kind(w > 0 ? c / w : 0);
    int x = k[0] == 'c' ? 0 : k[0] == 'm' ? 1 : 2;
    count[x]++;
    wall[x] += w;
    cpu[x] += c;
  }
  static const char *const h[] = {"kind", "steps", "mean wall", "mean CPU", "CPU / wall"};
  prof__html_table_begin(out, h, 5);
  for (int x = 0; x < 3; x++) {
    if (!count[x]) continue;
    char b[32];
    fputs("<tr>", out);
    prof__html_td(out, kinds[x]);
    snprintf(b, sizeof b, "%zu", count[x]);
    prof__html_td_num(out, (double)count[x], b);
    td_ms(out, wall[x] / (double)count[x]);
    td_ms(out, cpu[x] / (double)count[x]);
    prof__html_td_pct(out, wall[x] > 0 ? cpu[x] / wall[x] : 0);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

static void steps(prof__an *an, const prof__fn_st *s, FILE *out) {
  if (!s->steps || s->mode != 0 || !an->nsteps) return;
  size_t n = an->nsteps;
  double *v = malloc(n * 2 * sizeof *v);
  uint64_t *ids = malloc(n * sizeof *ids);
  if (v && ids) {
    for (size_t i = 0; i < n; i++) {
      double w = step_wall_ms(an, i);
      v[2 * i] = step_cpu_ms(s, i, w);
      v[2 * i + 1] = w - v[2 * i];
      ids[i] = an->steps[i].number;
    }
    fprintf(out, "<h3>CPU vs wall time per step</h3>\n<p class=\"note\">CPU time of the step's thread (from its "
                 "samples) against the step's wall time: at least %.0f%% is compute-bound, under %.0f%% waiting "
                 "(input, I/O, locks, GPU).</p>\n",
            100 * PROF_FN_COMPUTE_RATIO, 100 * PROF_FN_WAIT_RATIO);
    static const char *const series[] = {"CPU (sampled)", "not on CPU"};
    static const char *const colors[] = {"#4e79a7", "#d3d3d3"};
    prof__chart c = {.title = "CPU vs wall time per step", .unit = "ms", .n = n, .nseries = 2, .v = v,
                     .series = series, .colors = colors, .ids = ids, .id_fmt = "step %llu", .peak = -1};
    prof__svg_bars(out, &c);
    if ((double)an->step_stats.median_ns < 5 * s->period_ns)
      fputs("<p class=\"note\">The median step is shorter than five sampling periods: per-step CPU time from "
            "samples is coarse here (a step holds zero or one sample). The counters panel has the thread's "
            "measured CPU time per step.</p>\n",
            out);
    step_kinds(an, s, out);
  }
  free(v);
  free(ids);
}

/* ---- ranges ------------------------------------------------------------------ */

static void ranges(prof__an *an, const prof__fn_st *s, FILE *out) {
  size_t n;
  prof__kv64 *r = prof__fn_sorted_map(&s->rangetot, &n);
  if (r && n && !(n == 1 && r[0].k == 0)) {
    fputs("<h3>Hot functions per range</h3>\n", out);
    static const char *const h[] = {"range", "samples", "share", "hottest functions (self, share of the range)"};
    prof__html_table_begin(out, h, 4);
    for (size_t i = 0; i < n && i < TOP_RANGES; i++) {
      char b[32];
      fputs("<tr>", out);
      prof__html_td(out, r[i].k ? prof__an_str(an, (uint32_t)r[i].k) : "(no range)");
      snprintf(b, sizeof b, "%llu", (unsigned long long)r[i].v);
      prof__html_td_num(out, (double)r[i].v, b);
      prof__html_td_pct(out, (double)r[i].v / (double)s->total_w);
      prof__kv64 top[RANGE_FUNCS];
      size_t nt = prof__fn_range_top(s, r[i].k, top, RANGE_FUNCS);
      fputs("<td>", out);
      for (size_t k = 0; k < nt; k++) {
        if (k) fputs(", ", out);
        name_cell(out, s->f[top[k].k].name, NULL);
        fprintf(out, " %.0f%%", 100.0 * (double)top[k].v / (double)r[i].v);
      }
      fputs("</td></tr>\n", out);
    }
    prof__html_table_end(out);
    if (n > TOP_RANGES) fprintf(out, "<p class=\"note\">%zu more ranges are in the JSON report.</p>\n", n - TOP_RANGES);
  }
  free(r);
}

/* ---- Python ------------------------------------------------------------------- */

static void python_view(const prof__fn_st *s, FILE *out) {
  if (!s->py_total) return;
  size_t n;
  prof__kv64 *l = prof__fn_sorted_map(&s->pylines, &n);
  if (!l) return;
  fprintf(out, "<h3>Python</h3>\n<p class=\"note\">%.0f%% of the samples ran under Python code. The hot lines "
               "of Python code (the innermost Python frame of each sample), the share of their time spent in "
               "native code below them, and in which libraries.</p>\n",
          100.0 * (double)s->py_total / (double)s->total_w);
  static const char *const h[] = {"line", "function", "share", "in native code", "native libraries"};
  prof__html_table_begin(out, h, 5);
  for (size_t i = 0; i < n && i < TOP_FUNCS; i++) {
    const prof__fn_func *f = &s->f[l[i].k >> 32];
    const char *base = f->file ? strrchr(f->file, '/') : NULL;
    char b[512];
    snprintf(b, sizeof b, "%s:%llu", base ? base + 1 : f->file ? f->file : "?", (unsigned long long)(l[i].k & 0xfffff));
    fputs("<tr>", out);
    prof__html_td(out, b);
    fputs("<td>", out);
    name_cell(out, f->name, NULL);
    fputs("</td>", out);
    prof__html_td_pct(out, (double)l[i].v / (double)s->total_w);
    prof__html_td_pct(out, (double)prof__u64map_get(&s->pynative, l[i].k) / (double)l[i].v);
    prof__kv64 top[RANGE_FUNCS];
    size_t nt = prof__fn_py_libs(s, l[i].k, top, RANGE_FUNCS);
    fputs("<td>", out);
    for (size_t k = 0; k < nt; k++) {
      if (k) fputs(", ", out);
      prof__html_esc(out, prof__fn_mod_name(s, top[k].k));
      fprintf(out, " %.0f%%", 100.0 * (double)top[k].v / (double)l[i].v);
    }
    fputs("</td></tr>\n", out);
  }
  prof__html_table_end(out);
  free(l);
}

/* ---- flame graph --------------------------------------------------------------- */

typedef struct fnode {
  const char *name;
  uint64_t weight;
  int first_child, next;
} fnode;

typedef struct ftree {
  fnode *v;
  size_t n, cap;
} ftree;

static int fnode_new(ftree *t, const char *name) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    fnode *v = realloc(t->v, cap * sizeof *v);
    if (!v) return -1;
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n] = (fnode){name ? name : "?", 0, -1, -1};
  return (int)t->n++;
}

static int fnode_child(ftree *t, int parent, const char *name) {
  for (int c = t->v[parent].first_child; c >= 0; c = t->v[c].next)
    if (strcmp(t->v[c].name, name ? name : "?") == 0) return c;
  int c = fnode_new(t, name);
  if (c < 0) return -1;
  t->v[c].next = t->v[parent].first_child;
  t->v[parent].first_child = c;
  return c;
}

/* The merged call tree of the sampled stacks, root (node 0) = all samples. */
static int build_tree(prof__an *an, ftree *t) {
  const prof__sampled_stack *st = NULL;
  size_t n = prof__functions_stacks(an, &st, NULL, NULL);
  if (fnode_new(t, "all") < 0) return -1;
  for (size_t i = 0; i < n; i++) {
    const char *names[STACK_NAMES];
    int d = prof__sec_stacks_func_names(an, st[i].stack, names, STACK_NAMES), cur = 0;
    t->v[0].weight += st[i].weight;
    for (int k = 0; k < d && k < FLAME_DEPTH; k++) {
      cur = fnode_child(t, cur, names[k]);
      if (cur < 0) return -1;
      t->v[cur].weight += st[i].weight;
    }
  }
  return 0;
}

typedef struct flame_out {
  const ftree *t;
  prof__flame_node *nodes;
  size_t n;
  uint64_t min_w;
  double total;
} flame_out;

static int by_weight(const void *a, const void *b, void *arg) {
  const ftree *cmp_tree = arg;
  const fnode *x = &cmp_tree->v[*(const int *)a], *y = &cmp_tree->v[*(const int *)b];
  if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Lay out node id at x (fraction) and depth, then its children, heaviest
 * first, left to right. */
static void layout(flame_out *o, int id, double x, int depth) {
  const fnode *nd = &o->t->v[id];
  if (o->n >= FLAME_MAX || nd->weight < o->min_w) return;
  o->nodes[o->n++] = (prof__flame_node){nd->name, depth, x, (double)nd->weight / o->total, (double)nd->weight};
  size_t nk = 0;
  for (int c = nd->first_child; c >= 0; c = o->t->v[c].next) nk += o->t->v[c].weight >= o->min_w;
  int *kids = nk ? malloc(nk * sizeof *kids) : NULL;
  if (!kids) return;
  nk = 0;
  for (int c = nd->first_child; c >= 0; c = o->t->v[c].next)
    if (o->t->v[c].weight >= o->min_w) kids[nk++] = c;
  qsort_r(kids, nk, sizeof *kids, by_weight, (void *)o->t);
  for (size_t k = 0; k < nk; k++) {
    layout(o, kids[k], x, depth + 1);
    x += (double)o->t->v[kids[k]].weight / o->total;
  }
  free(kids);
}

static void flame(prof__an *an, const prof__fn_st *s, FILE *out) {
  ftree t = {0};
  flame_out o = {0};
  if (build_tree(an, &t) == 0 && t.v[0].weight) {
    o.t = &t;
    o.total = (double)t.v[0].weight;
    o.min_w = (uint64_t)(o.total * FLAME_MIN_SHARE);
    if (o.min_w < 1) o.min_w = 1;
    o.nodes = malloc(FLAME_MAX * sizeof *o.nodes);
  }
  if (o.nodes) {
    layout(&o, 0, 0, 0);
    fprintf(out, "<h3>Flame graph (%s samples)</h3>\n<p class=\"note\">The merged call stacks, callers below "
                 "callees; each frame is as wide as its share of the samples. Frames under %.1f%% of the samples "
                 "are left out.</p>\n",
            s->mode ? "wall-clock" : "CPU", 100 * FLAME_MIN_SHARE);
    fputs("<div class=\"flamegraph\">", out);
    prof__svg_flame(out, o.nodes, o.n, "samples");
    fputs("</div>\n", out);
  }
  free(o.nodes);
  free(t.v);
}

/* ---- panel ------------------------------------------------------------------- */

void prof__fn_html(prof__an *an, void *st, FILE *out) {
  const prof__fn_st *s = st;
  if (!s || !s->total_w) return;
  prof__html_section_begin(out, "functions", "Hot functions (CPU sampling)");
  facts(an, s, out);
  top_functions(s, out);
  python_view(s, out);
  prof__fn_ops_html(s, out);
  prof__fn_workers_html(s, out);
  flame(an, s, out);
  steps(an, s, out);
  ranges(an, s, out);
  prof__html_section_end(out);
}
