/* sec_operators.c — the operator view of the "functions" section: PyTorch
 * operators (aten::addmm, aten::mm, ...) and autograd nodes (AddmmBackward0)
 * found in the native frames of the CPU samples (op_names.h), with self and
 * total share per operator and the Python line that called it. Built from
 * the samples alone, so it costs nothing at recording time.
 *
 * Per sample: the operators on its stack, each counted once; the innermost
 * one gets the self weight (time in the operator's own code and in what it
 * calls that is not itself an operator, e.g. sgemm_ under aten::addmm), all
 * get total weight. An operator's caller is the innermost Python frame
 * outside it from the user's code (prof__py_user_file), else the innermost
 * Python frame outside it. at::native::<name> frames count only where
 * <name> is an operator seen at the dispatcher somewhere in the trace (so
 * helpers in that namespace never pose as operators). */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html.h"
#include "analyze/report/html_series.h"
#include "analyze/sections/functions/op_names.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/json.h"
#include "analyze/util/termsafe.h"

#define OPS_PER_STACK 32 /* distinct operators kept per sample */
#define JSON_OPS 40      /* operators in the JSON report */
#define TEXT_OPS 12      /* ... in the text report */
#define HTML_OPS 30      /* ... in the HTML report */
#define CALLERS 3        /* caller lines per operator in JSON */
#define OP_NAME 160

typedef struct op {
  char *name;
  int kind;
  uint64_t self, total;
} op;

typedef struct pyline {
  const char *file, *func;
  int line;
} pyline;

struct prof__fn_ops {
  op *v;
  size_t n, cap;
  prof__u64map fop;     /* frame pointer -> op index + 2, or 1: no operator */
  prof__u64map fline;   /* Python frame pointer -> line index + 1 */
  prof__u64map known;   /* name hash of the operators seen at the dispatcher -> 1 */
  pyline *l;
  size_t nl, lcap;
  prof__u64map callers; /* op << 32 | line -> weight */
  uint64_t under_w;     /* weight of the samples inside any operator */
};

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return (h & 0x7fffffffffffffffull) | 1;
}

static long op_index(struct prof__fn_ops *o, const char *name, int kind) {
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->v[i].name, name) == 0) return (long)i;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 64;
    op *p = realloc(o->v, cap * sizeof *p);
    if (!p) return -1;
    o->v = p;
    o->cap = cap;
  }
  char *nm = strdup(name);
  if (!nm) return -1;
  o->v[o->n] = (op){nm, kind == PROF_OP_NATIVE ? PROF_OP_ATEN : kind, 0, 0};
  return (long)o->n++;
}

/* The operator of a frame (index), or -1. Cached per frame. */
static long op_of(struct prof__fn_ops *o, const prof__frame *f) {
  uint64_t key = (uint64_t)(uintptr_t)f, c = prof__u64map_get(&o->fop, key);
  if (c) return (long)c - 2;
  char name[OP_NAME];
  int kind = f->python ? PROF_OP_NONE : prof__op_classify(f->func, name, sizeof name);
  if (kind == PROF_OP_NATIVE && !prof__u64map_get(&o->known, hash_name(name))) kind = PROF_OP_NONE;
  long i = kind == PROF_OP_NONE ? -1 : op_index(o, name, kind);
  prof__u64map_add(&o->fop, key, (uint64_t)(i + 2));
  return i;
}

static long line_of(struct prof__fn_ops *o, const prof__frame *f) {
  uint64_t key = (uint64_t)(uintptr_t)f, c = prof__u64map_get(&o->fline, key);
  if (c) return (long)c - 1;
  size_t i = 0;
  while (i < o->nl && !(o->l[i].line == f->line && strcmp(o->l[i].func ? o->l[i].func : "", f->func ? f->func : "") == 0 &&
                        strcmp(o->l[i].file ? o->l[i].file : "", f->file ? f->file : "") == 0))
    i++;
  if (i == o->nl) {
    if (o->nl == o->lcap) {
      size_t cap = o->lcap ? o->lcap * 2 : 64;
      pyline *p = realloc(o->l, cap * sizeof *p);
      if (!p) return -1;
      o->l = p;
      o->lcap = cap;
    }
    o->l[o->nl++] = (pyline){f->file, f->func, f->line};
  }
  prof__u64map_add(&o->fline, key, i + 1);
  return (long)i;
}

/* The Python line that called the operator whose frame is at `pos`. */
static long caller_of(struct prof__fn_ops *o, const prof__frame *const *fr, int d, int pos) {
  int any = -1;
  for (int i = pos + 1; i < d; i++) {
    if (!fr[i]->python) continue;
    if (any < 0) any = i;
    if (prof__py_user_file(fr[i]->file)) return line_of(o, fr[i]);
  }
  return any < 0 ? -1 : line_of(o, fr[any]);
}

static void add_sample(prof__an *an, struct prof__fn_ops *o, uint32_t stack, uint64_t w) {
  const prof__frame *fr[256];
  int d = prof__an_stack_frames(an, stack, fr, 256, 1);
  if (d <= 0 || fr[0] == &prof__profiler_frame) return;
  long ops[OPS_PER_STACK];
  int pos[OPS_PER_STACK], n = 0;
  for (int i = 0; i < d && n < OPS_PER_STACK; i++) {
    long k = op_of(o, fr[i]);
    int dup = 0;
    for (int j = 0; j < n && !dup; j++) dup = ops[j] == k;
    if (k < 0 || dup) continue;
    ops[n] = k;
    pos[n++] = i;
  }
  if (!n) return;
  o->under_w += w;
  o->v[ops[0]].self += w;
  for (int j = 0; j < n; j++) {
    o->v[ops[j]].total += w;
    long line = caller_of(o, fr, d, pos[j]);
    if (line >= 0) prof__u64map_add(&o->callers, (uint64_t)ops[j] << 32 | (uint64_t)line, w);
  }
}

void prof__fn_ops_finish(prof__an *an, prof__fn_st *s) {
  struct prof__fn_ops *o = calloc(1, sizeof *o);
  if (!o) return;
  s->ops = o;
  char name[OP_NAME];
  for (size_t i = 0; i < s->nf; i++)
    if (!s->f[i].python && prof__op_classify(s->f[i].name, name, sizeof name) == PROF_OP_ATEN)
      prof__u64map_add(&o->known, hash_name(name), 1);
  for (size_t i = 0; i < s->nstacks; i++) add_sample(an, o, s->stacks[i].stack, s->stacks[i].weight);
}

void prof__fn_ops_free(prof__fn_st *s) {
  struct prof__fn_ops *o = s->ops;
  if (!o) return;
  for (size_t i = 0; i < o->n; i++) free(o->v[i].name);
  free(o->v);
  free(o->l);
  prof__u64map_free(&o->fop);
  prof__u64map_free(&o->fline);
  prof__u64map_free(&o->known);
  prof__u64map_free(&o->callers);
  free(o);
  s->ops = NULL;
}

/* ---- ranking ----------------------------------------------------------------- */

static int by_self(const void *a, const void *b, void *arg) {
  const op *v = arg, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
  if (x->self != y->self) return x->self > y->self ? -1 : 1;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return strcmp(x->name, y->name);
}

static size_t *ranked(const struct prof__fn_ops *o) {
  size_t *idx = malloc((o->n ? o->n : 1) * sizeof *idx);
  if (!idx) return NULL;
  for (size_t i = 0; i < o->n; i++) idx[i] = i;
  qsort_r(idx, o->n, sizeof *idx, by_self, o->v);
  return idx;
}

/* The heaviest caller lines of operator k as (line, weight), at most max. */
static size_t callers_of(const struct prof__fn_ops *o, size_t k, prof__kv64 *top, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < o->callers.cap; i++) {
    if (!o->callers.k[i] || ((o->callers.k[i] - 1) >> 32) != k) continue;
    prof__kv64 x = {(o->callers.k[i] - 1) & 0xffffffffu, o->callers.v[i]};
    size_t at;
    if (n < max) at = n++;
    else if (x.v > top[max - 1].v) at = max - 1;
    else continue;
    top[at] = x;
    while (at > 0 && (top[at - 1].v < top[at].v || (top[at - 1].v == top[at].v && top[at - 1].k > top[at].k))) {
      prof__kv64 t = top[at - 1];
      top[at - 1] = top[at];
      top[at] = t;
      at--;
    }
  }
  return n;
}

static const char *kind_name(int kind) { return kind == PROF_OP_AUTOGRAD ? "autograd" : "aten"; }

static const char *base_name(const char *file) {
  const char *b = file ? strrchr(file, '/') : NULL;
  return b ? b + 1 : file ? file : "?";
}

/* ---- reports ----------------------------------------------------------------- */

static void json_line(prof__json *j, const pyline *l, double pct) {
  prof__json_obj_begin(j);
  prof__json_kstr(j, "file", l->file ? l->file : "?");
  prof__json_kint(j, "line", l->line);
  prof__json_kstr(j, "function", l->func ? l->func : "?");
  prof__json_knum(j, "pct_of_operator", pct);
  prof__json_obj_end(j);
}

static void json_op(prof__json *j, const prof__fn_st *s, const struct prof__fn_ops *o, size_t k) {
  const op *p = &o->v[k];
  prof__json_obj_begin(j);
  prof__json_kstr(j, "name", p->name);
  prof__json_kstr(j, "kind", kind_name(p->kind));
  prof__json_kuint(j, "self_samples", p->self);
  prof__json_kuint(j, "total_samples", p->total);
  prof__json_knum(j, "self_pct", 100.0 * (double)p->self / (double)s->total_w);
  prof__json_knum(j, "total_pct", 100.0 * (double)p->total / (double)s->total_w);
  prof__json_knum(j, "self_ms", (double)p->self * s->period_ns / 1e6);
  prof__json_knum(j, "total_ms", (double)p->total * s->period_ns / 1e6);
  prof__kv64 top[CALLERS];
  size_t nc = callers_of(o, k, top, CALLERS);
  if (nc) {
    prof__json_key(j, "python");
    json_line(j, &o->l[top[0].k], 100.0 * (double)top[0].v / (double)p->total);
  }
  if (nc > 1) {
    prof__json_key(j, "callers");
    prof__json_arr_begin(j);
    for (size_t i = 0; i < nc; i++) json_line(j, &o->l[top[i].k], 100.0 * (double)top[i].v / (double)p->total);
    prof__json_arr_end(j);
  }
  prof__json_obj_end(j);
}

void prof__fn_ops_json(prof__json *j, const prof__fn_st *s) {
  const struct prof__fn_ops *o = s->ops;
  if (!o || !o->n || !o->under_w) return;
  size_t *idx = ranked(o);
  if (!idx) return;
  prof__json_knum(j, "operators_pct", 100.0 * (double)o->under_w / (double)s->total_w);
  prof__json_key(j, "operators");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < o->n && i < JSON_OPS && o->v[idx[i]].total; i++) json_op(j, s, o, idx[i]);
  prof__json_arr_end(j);
  free(idx);
}

void prof__fn_ops_text(const prof__fn_st *s, FILE *out) {
  const struct prof__fn_ops *o = s->ops;
  if (!o || !o->n || !o->under_w) return;
  size_t *idx = ranked(o);
  if (!idx) return;
  fprintf(out, "  Operators (PyTorch, from the samples: %.0f%% of the samples ran inside an operator; self = the "
               "innermost operator):\n",
          100.0 * (double)o->under_w / (double)s->total_w);
  fprintf(out, "      self   total  %-28s  called from\n", "operator");
  for (size_t i = 0; i < o->n && i < TEXT_OPS; i++) {
    const op *p = &o->v[idx[i]];
    if (!p->total) break;
    char nm[PROF_TERM_NAME], fl[PROF_TERM_NAME], fn[PROF_TERM_NAME];
    fprintf(out, "    %5.1f%%  %5.1f%%  %-28s", 100.0 * (double)p->self / (double)s->total_w,
            100.0 * (double)p->total / (double)s->total_w, prof__term_name(nm, sizeof nm, p->name));
    prof__kv64 top[1];
    if (callers_of(o, idx[i], top, 1)) {
      const pyline *l = &o->l[top[0].k];
      fprintf(out, "  %s:%d %s", prof__term_name(fl, sizeof fl, base_name(l->file)), l->line,
              prof__term_name(fn, sizeof fn, l->func ? l->func : "?"));
    }
    fputc('\n', out);
  }
  free(idx);
}

void prof__fn_ops_html(const prof__fn_st *s, FILE *out) {
  const struct prof__fn_ops *o = s->ops;
  if (!o || !o->n || !o->under_w) return;
  size_t *idx = ranked(o);
  if (!idx) return;
  fprintf(out, "<h3>Operators</h3>\n<p class=\"note\">PyTorch operators and autograd nodes found in the sampled "
               "call stacks (%.0f%% of the samples ran inside one). Self: samples whose innermost operator it "
               "is (its own code and non-operator code below it, such as BLAS); total: samples with it anywhere "
               "on the stack. The Python line is the user's line that called it (else the innermost Python "
               "frame).</p>\n",
          100.0 * (double)o->under_w / (double)s->total_w);
  static const char *const h[] = {"operator", "kind", "self %", "self (est.)", "total %", "total (est.)", "called from"};
  prof__html_table_begin(out, h, 7);
  for (size_t i = 0; i < o->n && i < HTML_OPS; i++) {
    const op *p = &o->v[idx[i]];
    if (!p->total) break;
    char b[64];
    fputs("<tr>", out);
    prof__html_td(out, p->name);
    prof__html_td(out, kind_name(p->kind));
    prof__html_td_pct(out, (double)p->self / (double)s->total_w);
    snprintf(b, sizeof b, "%.1f ms", (double)p->self * s->period_ns / 1e6);
    prof__html_td_num(out, (double)p->self * s->period_ns / 1e6, b);
    prof__html_td_pct(out, (double)p->total / (double)s->total_w);
    snprintf(b, sizeof b, "%.1f ms", (double)p->total * s->period_ns / 1e6);
    prof__html_td_num(out, (double)p->total * s->period_ns / 1e6, b);
    prof__kv64 top[1];
    char line[600] = "";
    if (callers_of(o, idx[i], top, 1)) {
      const pyline *l = &o->l[top[0].k];
      snprintf(line, sizeof line, "%s:%d %s", base_name(l->file), l->line, l->func ? l->func : "?");
    }
    prof__html_td(out, line);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  free(idx);
}
