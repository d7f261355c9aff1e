/* sec_functions.c — the "functions" section: hot functions from CPU
 * samples (self and total share with estimated time), the call tree
 * (caller -> callee with inclusive share), hot functions per range, CPU vs
 * wall time per step (compute-bound vs waiting), and the `hot_function`
 * finding. Samples carry a weight (sampling periods, see
 * docs/cpu-sampling.md); every share here is a share of weight. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/advice.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/array.h"
#include "analyze/util/termsafe.h"
#include "trace/ev_sample.h"

/* Text from the trace (or from the files it names) as one field of the
 * text report (termsafe.h). */
#define TN(buf, s) prof__term_name(buf, sizeof buf, s)

#define TOP_N 20
#define PROF_STACK_MAX 256
#define HOT_SHARE 0.25      /* hot_function: one function's self share ... */
#define HOT_SHARE_HIGH 0.5  /* ... high severity from here */
#define HOT_MIN_SAMPLES 20
/* Severity follows the evidence: below HOT_FEW_SAMPLES samples a hot function
 * is "low" (the share's 95 % interval is wide), and "high" needs
 * HOT_HIGH_SAMPLES samples. */
#define HOT_FEW_SAMPLES 100
#define HOT_HIGH_SAMPLES 400
/* A family of functions (one name prefix up to '_', e.g. gemm_nn, gemm_nt)
 * holding HOT_SHARE together, with no single member above it, is one hot
 * spot. */
#define HOT_FAMILY_MIN 2

/* ---- state ----------------------------------------------------------------- */

static void fn_record(prof__an *an, void *st, const prof__rec *rec) {
  prof__fn_st *s = st;
  if (rec->kind == PROF_REC_EVENT && rec->ev.type != PROF_EV_SAMPLE) {
    prof__fn_steps_record(an, s, rec);
    return;
  }
  if (rec->kind != PROF_REC_EVENT) return;
  int mode = prof__ev_sample_mode(&rec->ev);
  uint64_t w = prof__ev_sample_weight(&rec->ev);
  uint64_t range = prof__ev_sample_range(&rec->ev);
  s->samples[mode]++;
  s->total[mode] += w;
  if (!rec->ev.name) s->no_stack[mode]++;
  prof__u64map_add(&s->agg[mode], range << 32 | rec->ev.name, w);
  if (s->nts == s->ts_cap) {
    size_t cap = s->ts_cap ? s->ts_cap * 2 : 1024;
    prof__fn_tsample *p = realloc(s->ts, cap * sizeof *p);
    if (!p) return;
    s->ts = p;
    s->ts_cap = cap;
  }
  s->ts[s->nts++] = (prof__fn_tsample){rec->ev.ts, mode == PROF_SAMPLE_CPU ? w : 0, rec->tid};
}

/* ---- functions --------------------------------------------------------------- */

static uint64_t hash_str(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = a; p && *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (const char *p = b; p && *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  return h & 0x7fffffffffffffffull;
}


static int streq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Index of the function of frame f (by name and module), created on first sight. */
static long func_of(prof__fn_st *s, const prof__frame *fr) {
  uint64_t h = hash_str(fr->func, fr->module);
  for (uint64_t probe = 0;; probe++) {
    uint64_t idx = prof__u64map_get(&s->fmap, h + probe);
    if (!idx) break;
    prof__fn_func *f = &s->f[idx - 1];
    if (streq(f->name, fr->func) && streq(f->module, fr->module)) {
      f->inlined |= fr->inlined;
      return (long)idx - 1;
    }
  }
  if (s->nf == s->f_cap) {
    size_t cap = s->f_cap ? s->f_cap * 2 : 256;
    prof__fn_func *p = realloc(s->f, cap * sizeof *p);
    if (!p) return -1;
    s->f = p;
    s->f_cap = cap;
  }
  uint64_t probe = 0;
  while (prof__u64map_get(&s->fmap, h + probe)) probe++;
  if (prof__u64map_add(&s->fmap, h + probe, s->nf + 1) != 0) return -1;
  s->f[s->nf] = (prof__fn_func){fr->func, fr->module, fr->file, fr->line, 0, 0, 0, fr->mangled, fr->inlined, fr->python, 0};
  return (long)s->nf++;
}

static uint64_t mod_of(prof__fn_st *s, const char *name) {
  for (size_t i = 0; i < s->nmods; i++)
    if (streq(s->mods[i], name)) return i;
  if (s->nmods >= 4095) return 4095;
  const char **v = realloc(s->mods, (s->nmods + 1) * sizeof *v);
  if (!v) return 4095;
  s->mods = v;
  s->mods[s->nmods] = name;
  return s->nmods++;
}

/* The Python view: the line of the innermost Python frame, and which
 * native library the sample was in below it. */
static void add_python(prof__fn_st *s, const prof__frame *const *fr, const long *fi, int n, uint64_t w) {
  int p = 0;
  while (p < n && !fr[p]->python) p++;
  if (p == n) return;
  uint64_t line = (uint64_t)(fr[p]->line > 0 ? fr[p]->line : 0) & 0xfffff, k = (uint64_t)fi[p] << 32 | line;
  s->py_total += w;
  prof__u64map_add(&s->pylines, k, w);
  if (p == 0) return;
  prof__u64map_add(&s->pynative, k, w);
  uint64_t m = mod_of(s, fr[0]->module ? fr[0]->module : "?");
  prof__u64map_add(&s->pylib, (uint64_t)fi[p] << 40 | line << 12 | m, w);
}

/* Code of the profiler itself (the prof_ API and its internals, or the
 * libmlprof library) as opposed to the sampler's unwinding frames. */
static int own_code(const prof__frame *f) {
  return f && f->func && (strncmp(f->func, "prof_", 5) == 0 || (f->module && strncmp(f->module, "libmlprof", 9) == 0));
}

static void add_stack(prof__an *an, prof__fn_st *s, uint32_t stack, uint32_t range, uint64_t w, uint64_t stamp) {
  const prof__frame *fr[PROF_STACK_MAX];
  int d = prof__an_stack_frames(an, stack, fr, PROF_STACK_MAX, 1);
  /* A sample inside a profiler call (a tensor summary, a range push: the
   * "[mlprof]" leaf of the folded and pprof exports) is the profiler's cost:
   * counted on its own line and in its callers' totals, as in those
   * exports, never as a function's self time or a user hot spot. */
  int own = 0;
  for (int i = 0; i < d && !own; i++) own = own_code(fr[i]);
  long fi[PROF_STACK_MAX];
  int n = 0;
  for (int i = 0; i < d; i++) {
    if (own_code(fr[i])) continue;
    long f = func_of(s, fr[i]);
    if (f >= 0) {
      fr[n] = fr[i];
      fi[n++] = f;
    }
  }
  if (own) {
    s->own_w += w;
    for (int i = 0; i < n; i++) {
      if (s->f[fi[i]].stamp == stamp) continue;
      s->f[fi[i]].stamp = stamp;
      s->f[fi[i]].total += w;
    }
    return;
  }
  if (!n) return;
  s->f[fi[0]].self += w;
  prof__u64map_add(&s->lines, (uint64_t)fi[0] << 32 | (uint64_t)(fr[0]->line > 0 ? fr[0]->line : 0), w);
  prof__u64map_add(&s->rangefn, (uint64_t)range << 32 | (uint64_t)fi[0], w);
  prof__u64map_add(&s->rangetot, range, w);
  for (int i = 0; i < n; i++) {
    prof__fn_func *f = &s->f[fi[i]];
    /* the line of the heaviest stack through it (ties: the lower line), so
     * the location of a function without self time does not depend on the
     * order the stacks are read in */
    int line = fr[i]->line > 0 ? fr[i]->line : 0;
    if (w > f->line_w || (w == f->line_w && line < f->line)) f->line = line, f->line_w = w;
    if (f->stamp == stamp) continue; /* recursion counts once */
    f->stamp = stamp;
    f->total += w;
  }
  for (int i = 0; i + 1 < n; i++) {
    int dup = 0;
    for (int k = 0; k < i && !dup; k++) dup = fi[k] == fi[i] && fi[k + 1] == fi[i + 1];
    if (!dup) prof__u64map_add(&s->edges, (uint64_t)fi[i + 1] << 32 | (uint64_t)fi[i], w);
  }
  add_python(s, fr, fi, n, w);
}

size_t prof__fn_hot_lines(const prof__fn_st *s, size_t fi, prof__kv64 *top, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < s->lines.cap; i++) {
    if (!s->lines.k[i] || ((s->lines.k[i] - 1) >> 32) != fi || !((s->lines.k[i] - 1) & 0xffffffffu)) continue;
    prof__kv64 x = {(s->lines.k[i] - 1) & 0xffffffffu, s->lines.v[i]};
    size_t k;
    if (n < max) k = n++;
    else if (x.v > top[max - 1].v || (x.v == top[max - 1].v && x.k < top[max - 1].k)) k = max - 1; /* ties: the first line */
    else continue;
    top[k] = x;
    while (k > 0 && (top[k - 1].v < top[k].v || (top[k - 1].v == top[k].v && top[k - 1].k > top[k].k))) {
      prof__kv64 t = top[k - 1];
      top[k - 1] = top[k];
      top[k] = t;
      k--;
    }
  }
  return n;
}

/* A function's location is its hottest line by self time. */
static void hottest_lines(prof__fn_st *s) {
  for (size_t i = 0; i < s->nf; i++) {
    prof__kv64 top[1];
    if (s->f[i].self && s->f[i].file && prof__fn_hot_lines(s, i, top, 1)) s->f[i].line = (int)top[0].k;
  }
}

static double header_hz(prof__an *an) {
  const char *v = prof__an_header(an, "cpu.sample_hz");
  double hz = v ? atof(v) : 0;
  return hz > 0 ? hz : 99;
}

/* Which clock the samples came from (header cpu.sampler; older traces had
 * only the timers) and how many samples a second of a busy thread's time
 * got: the asked rate with exact periods, fewer where timers fire only at
 * scheduler ticks (their overruns are the weight). */
const char *prof__fn_sampler(prof__an *an, const prof__fn_st *s) {
  const char *v = prof__an_header(an, "cpu.sampler");
  return s->mode == 0 && v && strcmp(v, "perf") == 0 ? "perf" : "timer";
}

double prof__fn_effective_hz(const prof__fn_st *s) {
  return s->total_w ? (double)s->samples[s->mode] * 1e9 / s->period_ns / (double)s->total_w : 0;
}

static int cmp_stack(const void *a, const void *b) {
  const prof__sampled_stack *x = a, *y = b;
  return x->weight > y->weight ? -1 : x->weight < y->weight ? 1 : (x->stack > y->stack) - (x->stack < y->stack);
}

static void merge_stacks(prof__fn_st *s) {
  prof__u64map *m = &s->agg[s->mode], by = {0};
  for (size_t i = 0; i < m->cap; i++)
    if (m->k[i]) prof__u64map_add(&by, (m->k[i] - 1) & 0xffffffffu, m->v[i]);
  s->stacks = calloc(by.n ? by.n : 1, sizeof *s->stacks);
  for (size_t i = 0; s->stacks && i < by.cap; i++)
    if (by.k[i]) s->stacks[s->nstacks++] = (prof__sampled_stack){(uint32_t)(by.k[i] - 1), by.v[i]};
  if (s->stacks) qsort(s->stacks, s->nstacks, sizeof *s->stacks, cmp_stack);
  prof__u64map_free(&by);
}

static const char *hot_severity(double share, uint64_t samples) {
  if (samples < HOT_FEW_SAMPLES) return "low";
  return share >= HOT_SHARE_HIGH && samples >= HOT_HIGH_SAMPLES ? "high" : "medium";
}

/* Upper bound of the saving: the function's self time inside steps per
 * step, as if it took no time at all (CPU mode: its samples scaled by the
 * share of samples inside steps; wall mode: all of them). */
static void hot_saving(prof__an *an, const prof__fn_st *s, uint64_t self_w) {
  if (!an->nsteps) return;
  double in = s->mode == 0 && s->total_w > s->outside_w ? (double)(s->total_w - s->outside_w) / (double)s->total_w
              : s->mode == 0                           ? 0
                                                       : 1;
  double ns = (double)self_w * s->period_ns * in / (double)an->nsteps;
  char a[32];
  prof__an_finding_saving(an, ns, prof__an_confidence(an->nsteps, self_w),
                          "upper bound: its self time inside steps per step (%llu sampled periods of %s, %.0f%% of "
                          "them inside steps, over %zu steps), as if it took no time",
                          (unsigned long long)self_w, prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(s->period_ns)),
                          100 * in, an->nsteps);
}

/* Length of a function name's family prefix ("gemm_" of "gemm_nt"), 0 when
 * the name has none. */
static size_t family_len(const char *name) {
  size_t n = 0, k = 0;
  while (isalnum((unsigned char)name[n])) n++; /* a plain C prefix: no "ns::", no "void " */
  if (n < 3 || name[n] != '_') return 0;
  while (isalnum((unsigned char)name[n + 1 + k])) k++;
  /* variants of one kernel (gemm_nn, gemm_nt, conv_f32), not different
   * functions that share a word (dense_forward, dense_backward) */
  return k >= 1 && k <= 4 && !name[n + 1 + k] ? n + 1 : 0;
}

/* Functions of one family that hold more together than the hottest single
 * function: one finding for the family (returns 1), else 0. */
static int add_family_finding(prof__an *an, prof__fn_st *s, double single) {
  size_t best = SIZE_MAX, best_len = 0;
  uint64_t best_self = 0;
  for (size_t i = 0; i < s->nf; i++) {
    size_t len = family_len(s->f[i].name);
    if (!len) continue;
    uint64_t self = 0;
    size_t members = 0;
    for (size_t k = 0; k < s->nf; k++)
      if (family_len(s->f[k].name) == len && strncmp(s->f[k].name, s->f[i].name, len) == 0) self += s->f[k].self, members++;
    if (members >= HOT_FAMILY_MIN && self > best_self) best = i, best_len = len, best_self = self;
  }
  double share = best == SIZE_MAX ? 0 : (double)best_self / (double)s->total_w;
  if (share < HOT_SHARE || share <= single) return 0;
  char names[400] = "";
  size_t used = 0, members = 0;
  const prof__fn_func *top = NULL;
  for (size_t k = 0; k < s->nf; k++) {
    const prof__fn_func *f = &s->f[k];
    if (family_len(f->name) != best_len || strncmp(f->name, s->f[best].name, best_len) != 0) continue;
    if (!top || f->self > top->self) top = f;
    if (used < sizeof names)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s%s %.0f%%", members ? ", " : "", f->name,
                               (double)f->self / (double)s->total_w * 100);
    members++;
  }
  char title[512], measured[1024], rec[1024];
  snprintf(title, sizeof title, "%.*s* (%zu functions) hold %.0f%% of the %s samples together", (int)best_len,
           s->f[best].name, members, share * 100, s->mode ? "wall-clock" : "CPU");
  snprintf(measured, sizeof measured, "self time: %s (of %llu sampled periods)", names, (unsigned long long)s->total_w);
  uint64_t n = s->samples[s->mode];
  prof__an_finding(an, "hot_function", hot_severity(share, n), share, title, measured,
                   prof__advice_text(top->name, top->module, top->file, top->line, rec, sizeof rec));
  prof__an_finding_kstr(an, "advice", prof__advice_name(prof__advice_kind(top->name, top->module)));
  prof__an_finding_knum(an, "samples", (double)n);
  prof__an_finding_knum(an, "functions", (double)members);
  hot_saving(an, s, best_self);
  return 1;
}

static void add_finding(prof__an *an, prof__fn_st *s) {
  if (!s->nf || s->samples[s->mode] < HOT_MIN_SAMPLES || !s->total_w) return;
  size_t best = 0;
  for (size_t i = 1; i < s->nf; i++)
    if (s->f[i].self > s->f[best].self) best = i;
  double share = (double)s->f[best].self / (double)s->total_w;
  if (add_family_finding(an, s, share) || share < HOT_SHARE) return;
  char title[512], measured[512];
  snprintf(title, sizeof title, "%s holds %.0f%% of the %s samples", s->f[best].name, share * 100,
           s->mode ? "wall-clock" : "CPU");
  snprintf(measured, sizeof measured,
           "%s (%s) has %.1f%% of %llu sampled periods as self time (about %.1f ms)%s%s%s", s->f[best].name,
           s->f[best].module ? s->f[best].module : "?", share * 100, (unsigned long long)s->total_w,
           (double)s->f[best].self * s->period_ns / 1e6, s->f[best].file ? ", " : "",
           s->f[best].file ? s->f[best].file : "", s->f[best].file ? "" : "");
  const prof__fn_func *h = &s->f[best];
  char rec[1024];
  uint64_t n = s->samples[s->mode];
  prof__an_finding(an, "hot_function", hot_severity(share, n), share, title, measured,
                   prof__advice_text(h->name, h->module, h->file, h->line, rec, sizeof rec));
  prof__an_finding_kstr(an, "advice", prof__advice_name(prof__advice_kind(h->name, h->module)));
  prof__an_finding_knum(an, "samples", (double)n);
  hot_saving(an, s, h->self);
}

static void fn_finish(prof__an *an, void *st) {
  prof__fn_st *s = st;
  s->mode = s->total[0] ? 0 : 1;
  s->total_w = s->total[s->mode];
  s->period_ns = 1e9 / header_hz(an);
  if (!s->total_w) return;
  merge_stacks(s);
  prof__u64map *m = &s->agg[s->mode];
  uint64_t stamp = 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->k[i]) add_stack(an, s, (uint32_t)((m->k[i] - 1) & 0xffffffffu), (uint32_t)((m->k[i] - 1) >> 32), m->v[i], ++stamp);
  hottest_lines(s);
  prof__fn_ops_finish(an, s);
  prof__fn_workers_finish(an, s);
  prof__fn_steps_finish(an, s);
  add_finding(an, s);
}

size_t prof__functions_stacks(prof__an *an, const prof__sampled_stack **out, int *mode, double *period_ns) {
  prof__fn_st *s = prof__an_section(an, "functions");
  if (!s || !s->nstacks) return 0;
  if (out) *out = s->stacks;
  if (mode) *mode = s->mode;
  if (period_ns) *period_ns = s->period_ns;
  return s->nstacks;
}

int prof__sec_stacks_func_names(prof__an *an, uint32_t stack, const char **names, int max) {
  const prof__frame *fr[PROF_STACK_MAX];
  int d = prof__an_stack_frames(an, stack, fr, PROF_STACK_MAX, 1), n = 0;
  for (int i = d - 1; i >= 0 && n < max; i--) names[n++] = fr[i]->label ? fr[i]->label : fr[i]->func;
  return n;
}

/* ---- ordering ---------------------------------------------------------------- */

static int by_self(const void *a, const void *b, void *arg) {
  const prof__fn_st *sort_st = arg;
  const prof__fn_func *x = &sort_st->f[*(const size_t *)a], *y = &sort_st->f[*(const size_t *)b];
  return x->self > y->self ? -1 : x->self < y->self ? 1 : strcmp(x->name, y->name);
}
static int by_total(const void *a, const void *b, void *arg) {
  const prof__fn_st *sort_st = arg;
  const prof__fn_func *x = &sort_st->f[*(const size_t *)a], *y = &sort_st->f[*(const size_t *)b];
  return x->total > y->total ? -1 : x->total < y->total ? 1 : strcmp(x->name, y->name);
}

size_t *prof__fn_ranked(const prof__fn_st *s, int total) {
  size_t *idx = malloc((s->nf ? s->nf : 1) * sizeof *idx);
  if (!idx) return NULL;
  for (size_t i = 0; i < s->nf; i++) idx[i] = i;
  qsort_r(idx, s->nf, sizeof *idx, total ? by_total : by_self, (void *)s);
  return idx;
}

static int by_v(const void *a, const void *b) {
  const prof__kv64 *x = a, *y = b;
  return x->v > y->v ? -1 : x->v < y->v ? 1 : (x->k > y->k) - (x->k < y->k);
}
prof__kv64 *prof__fn_sorted_map(const prof__u64map *m, size_t *n) {
  prof__kv64 *v = malloc((m->n ? m->n : 1) * sizeof *v);
  *n = 0;
  for (size_t i = 0; v && i < m->cap; i++)
    if (m->k[i]) v[(*n)++] = (prof__kv64){m->k[i] - 1, m->v[i]};
  if (v) qsort(v, *n, sizeof *v, by_v);
  return v;
}

/* ---- reports ------------------------------------------------------------------ */

static void json_func(prof__json *j, const prof__fn_st *s, const prof__fn_func *f) {
  prof__json_obj_begin(j);
  prof__json_kstr(j, "name", f->name);
  if (f->mangled) prof__json_kstr(j, "mangled", f->mangled);
  if (f->module) prof__json_kstr(j, "module", f->module);
  if (f->python) prof__json_kstr(j, "kind", "python");
  if (f->inlined) prof__json_kbool(j, "inlined", 1);
  if (f->file) {
    prof__json_kstr(j, "file", f->file);
    prof__json_kint(j, "line", f->line);
  }
  prof__kv64 hot[5];
  size_t nh = f->self ? prof__fn_hot_lines(s, (size_t)(f - s->f), hot, 5) : 0;
  if (nh) {
    prof__json_key(j, "hot_lines");
    prof__json_arr_begin(j);
    for (size_t i = 0; i < nh; i++) {
      prof__json_obj_begin(j);
      prof__json_kint(j, "line", (int)hot[i].k);
      prof__json_kuint(j, "self_samples", hot[i].v);
      prof__json_knum(j, "pct_of_self", 100.0 * (double)hot[i].v / (double)f->self);
      prof__json_obj_end(j);
    }
    prof__json_arr_end(j);
  }
  prof__json_kuint(j, "self_samples", f->self);
  prof__json_kuint(j, "total_samples", f->total);
  prof__json_knum(j, "self_pct", 100.0 * (double)f->self / (double)s->total_w);
  prof__json_knum(j, "total_pct", 100.0 * (double)f->total / (double)s->total_w);
  prof__json_knum(j, "self_ms", (double)f->self * s->period_ns / 1e6);
  prof__json_knum(j, "total_ms", (double)f->total * s->period_ns / 1e6);
  prof__json_obj_end(j);
}

static void json_ranked(prof__json *j, const prof__fn_st *s, const char *key, int total) {
  size_t *idx = prof__fn_ranked(s, total);
  prof__json_key(j, key);
  prof__json_arr_begin(j);
  for (size_t i = 0; idx && i < s->nf && i < TOP_N; i++) {
    const prof__fn_func *f = &s->f[idx[i]];
    if (!(total ? f->total : f->self)) break;
    json_func(j, s, f);
  }
  prof__json_arr_end(j);
  free(idx);
}

static void json_tree(prof__json *j, const prof__fn_st *s) {
  size_t n;
  prof__kv64 *e = prof__fn_sorted_map(&s->edges, &n);
  prof__json_key(j, "call_tree");
  prof__json_arr_begin(j);
  for (size_t i = 0; e && i < n && i < 2 * TOP_N; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "caller", s->f[e[i].k >> 32].name);
    prof__json_kstr(j, "callee", s->f[e[i].k & 0xffffffffu].name);
    prof__json_kuint(j, "samples", e[i].v);
    prof__json_knum(j, "pct", 100.0 * (double)e[i].v / (double)s->total_w);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  free(e);
}

/* Top self functions of one range, in (func, weight) pairs. */
size_t prof__fn_range_top(const prof__fn_st *s, uint64_t range, prof__kv64 *top, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < s->rangefn.cap; i++) {
    if (!s->rangefn.k[i] || ((s->rangefn.k[i] - 1) >> 32) != range) continue;
    prof__kv64 x = {(s->rangefn.k[i] - 1) & 0xffffffffu, s->rangefn.v[i]};
    size_t k;
    if (n < max) k = n++;
    else if (x.v > top[max - 1].v || (x.v == top[max - 1].v && x.k < top[max - 1].k)) k = max - 1; /* ties: the first line */
    else continue;
    top[k] = x;
    while (k > 0 && top[k - 1].v < top[k].v) {
      prof__kv64 t = top[k - 1];
      top[k - 1] = top[k];
      top[k] = t;
      k--;
    }
  }
  return n;
}

static void json_ranges(prof__an *an, prof__json *j, const prof__fn_st *s) {
  size_t n;
  prof__kv64 *r = prof__fn_sorted_map(&s->rangetot, &n);
  prof__json_key(j, "ranges");
  prof__json_arr_begin(j);
  for (size_t i = 0; r && i < n && i < TOP_N; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "range", r[i].k ? prof__an_str(an, (uint32_t)r[i].k) : "(no range)");
    prof__json_kuint(j, "samples", r[i].v);
    prof__json_knum(j, "pct", 100.0 * (double)r[i].v / (double)s->total_w);
    prof__kv64 top[5];
    size_t nt = prof__fn_range_top(s, r[i].k, top, 5);
    prof__json_key(j, "top_self");
    prof__json_arr_begin(j);
    for (size_t k = 0; k < nt; k++) {
      prof__json_obj_begin(j);
      prof__json_kstr(j, "name", s->f[top[k].k].name);
      prof__json_kuint(j, "samples", top[k].v);
      prof__json_knum(j, "pct_of_range", 100.0 * (double)top[k].v / (double)r[i].v);
      prof__json_obj_end(j);
    }
    prof__json_arr_end(j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  free(r);
}

static void json_python(prof__json *j, const prof__fn_st *s);

static void fn_json(prof__an *an, void *st, prof__json *j) {
  prof__fn_st *s = st;
  if (!s->total_w) return;
  prof__json_key(j, "functions");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "mode", s->mode ? "wall" : "cpu");
  prof__json_knum(j, "sample_hz", 1e9 / s->period_ns);
  prof__json_kstr(j, "sampler", prof__fn_sampler(an, s));
  prof__json_knum(j, "effective_hz", prof__fn_effective_hz(s));
  prof__json_kuint(j, "samples", s->samples[s->mode]);
  prof__json_kuint(j, "weight", s->total_w);
  prof__json_kuint(j, "samples_without_stack", s->no_stack[s->mode]);
  prof__json_knum(j, "sampled_ms", (double)s->total_w * s->period_ns / 1e6);
  prof__json_kuint(j, "profiler_weight", s->own_w);
  prof__json_knum(j, "profiler_pct", 100.0 * (double)s->own_w / (double)s->total_w);
  json_ranked(j, s, "top_self", 0);
  json_ranked(j, s, "top_total", 1);
  json_tree(j, s);
  json_ranges(an, j, s);
  prof__fn_steps_json(an, j, s);
  if (s->steps && s->mode == 0) prof__json_knum(j, "outside_steps_pct", 100.0 * (double)s->outside_w / (double)s->total_w);
  json_python(j, s);
  prof__fn_ops_json(j, s);
  prof__fn_workers_json(j, s);
  prof__json_obj_end(j);
}

const char *prof__fn_display(const prof__fn_func *f, char *buf, size_t n) {
  if (f->python) {
    const char *base = f->file ? strrchr(f->file, '/') : NULL;
    snprintf(buf, n, "%s (%s)", f->name, base ? base + 1 : f->file ? f->file : "?");
  } else if (f->inlined) {
    snprintf(buf, n, "%s [inlined]", f->name);
  } else {
    snprintf(buf, n, "%s", f->name);
  }
  return buf;
}

/* Per-line self time of the top self functions that have line info. */
static void text_lines(const prof__fn_st *s, FILE *out) {
  size_t *idx = prof__fn_ranked(s, 0), shown = 0;
  for (size_t i = 0; idx && i < s->nf && i < 10 && shown < 5; i++) {
    const prof__fn_func *f = &s->f[idx[i]];
    prof__kv64 top[3];
    size_t nt = f->self && f->file ? prof__fn_hot_lines(s, idx[i], top, 3) : 0;
    if (!nt) continue;
    if (!shown++) fprintf(out, "  Hot lines (self time of the top functions by line):\n");
    const char *base = strrchr(f->file, '/');
    char nm[PROF_TERM_NAME], fl[PROF_TERM_NAME];
    fprintf(out, "    %s:", TN(nm, f->name));
    for (size_t k = 0; k < nt; k++)
      fprintf(out, "%s %s:%llu %.0f%%", k ? "," : "", TN(fl, base ? base + 1 : f->file), (unsigned long long)top[k].k,
              100.0 * (double)top[k].v / (double)f->self);
    fputc('\n', out);
  }
  free(idx);
}

/* The Python view: hot lines of Python code (innermost Python frame of a
 * sample) and the native libraries the time under them went to. */
size_t prof__fn_py_libs(const prof__fn_st *s, uint64_t key, prof__kv64 *top, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < s->pylib.cap; i++) {
    if (!s->pylib.k[i]) continue;
    uint64_t k = s->pylib.k[i] - 1;
    if ((k >> 40) != (key >> 32) || ((k >> 12) & 0xfffff) != (key & 0xfffff)) continue;
    prof__kv64 x = {k & 0xfff, s->pylib.v[i]};
    size_t at;
    if (n < max) at = n++;
    else if (x.v > top[max - 1].v) at = max - 1;
    else continue;
    top[at] = x;
    while (at > 0 && top[at - 1].v < top[at].v) {
      prof__kv64 t = top[at - 1];
      top[at - 1] = top[at];
      top[at] = t;
      at--;
    }
  }
  return n;
}

const char *prof__fn_mod_name(const prof__fn_st *s, uint64_t m) { return m < s->nmods ? s->mods[m] : "?"; }

static void text_python(const prof__fn_st *s, FILE *out) {
  if (!s->py_total) return;
  size_t n;
  prof__kv64 *l = prof__fn_sorted_map(&s->pylines, &n);
  fprintf(out, "  Python (%.0f%% of the samples ran under Python code): hot lines, and the native code below them\n",
          100.0 * (double)s->py_total / (double)s->total_w);
  for (size_t i = 0; l && i < n && i < 10; i++) {
    const prof__fn_func *f = &s->f[l[i].k >> 32];
    const char *base = f->file ? strrchr(f->file, '/') : NULL;
    uint64_t nat = prof__u64map_get(&s->pynative, l[i].k);
    char fl[PROF_TERM_NAME], nm[PROF_TERM_NAME];
    fprintf(out, "    %5.1f%%  %s:%llu %s  (native %.0f%%", 100.0 * (double)l[i].v / (double)s->total_w,
            TN(fl, base ? base + 1 : f->file ? f->file : "?"), (unsigned long long)(l[i].k & 0xfffff), TN(nm, f->name),
            100.0 * (double)nat / (double)l[i].v);
    prof__kv64 top[3];
    size_t nt = prof__fn_py_libs(s, l[i].k, top, 3);
    for (size_t k = 0; k < nt; k++)
      fprintf(out, "%s %s %.0f%%", k ? "," : ":", TN(nm, prof__fn_mod_name(s, top[k].k)),
              100.0 * (double)top[k].v / (double)l[i].v);
    fputs(")\n", out);
  }
  free(l);
}

static void json_python(prof__json *j, const prof__fn_st *s) {
  if (!s->py_total) return;
  size_t n;
  prof__kv64 *l = prof__fn_sorted_map(&s->pylines, &n);
  prof__json_key(j, "python");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "samples", s->py_total);
  prof__json_knum(j, "pct", 100.0 * (double)s->py_total / (double)s->total_w);
  prof__json_key(j, "lines");
  prof__json_arr_begin(j);
  for (size_t i = 0; l && i < n && i < TOP_N; i++) {
    const prof__fn_func *f = &s->f[l[i].k >> 32];
    uint64_t nat = prof__u64map_get(&s->pynative, l[i].k);
    prof__json_obj_begin(j);
    prof__json_kstr(j, "function", f->name);
    prof__json_kstr(j, "file", f->file ? f->file : "?");
    prof__json_kint(j, "line", (int64_t)(l[i].k & 0xfffff));
    prof__json_kuint(j, "samples", l[i].v);
    prof__json_knum(j, "pct", 100.0 * (double)l[i].v / (double)s->total_w);
    prof__json_knum(j, "native_pct", 100.0 * (double)nat / (double)l[i].v);
    prof__kv64 top[5];
    size_t nt = prof__fn_py_libs(s, l[i].k, top, 5);
    prof__json_key(j, "native");
    prof__json_arr_begin(j);
    for (size_t k = 0; k < nt; k++) {
      prof__json_obj_begin(j);
      prof__json_kstr(j, "module", prof__fn_mod_name(s, top[k].k));
      prof__json_knum(j, "pct_of_line", 100.0 * (double)top[k].v / (double)l[i].v);
      prof__json_obj_end(j);
    }
    prof__json_arr_end(j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
  free(l);
}

static void fn_text(prof__an *an, void *st, FILE *out) {
  prof__fn_st *s = st;
  if (!s->total_w) return;
  fprintf(out, "\nHot functions (%s samples: %llu, %.0f Hz, ~%.1f ms sampled; %s sampler, %.0f samples/s per %s)\n",
          s->mode ? "wall-clock" : "CPU", (unsigned long long)s->samples[s->mode], 1e9 / s->period_ns,
          (double)s->total_w * s->period_ns / 1e6, prof__fn_sampler(an, s), prof__fn_effective_hz(s),
          s->mode ? "thread" : "busy thread");
  if (s->samples[s->mode] < PROF_FN_FEW_SAMPLES)
    fprintf(out, "  caveat: only %llu samples; shares below are rough (a run with ~%d or more samples is needed to "
                 "trust them)\n",
            (unsigned long long)s->samples[s->mode], PROF_FN_FEW_SAMPLES);
  if (s->own_w)
    fprintf(out, "  profiler's own cost: %.1f%% of the samples (~%.1f ms in mlprof calls), left out of the lists below\n",
            100.0 * (double)s->own_w / (double)s->total_w, (double)s->own_w * s->period_ns / 1e6);
  for (int total = 0; total < 2; total++) {
    size_t *idx = prof__fn_ranked(s, total);
    fprintf(out, "  By %s:\n", total ? "total (inclusive)" : "self");
    for (size_t i = 0; idx && i < s->nf && i < 10; i++) {
      const prof__fn_func *f = &s->f[idx[i]];
      uint64_t w = total ? f->total : f->self;
      if (!w) break;
      char nb[160], nm[PROF_TERM_NAME];
      fprintf(out, "    %5.1f%%  %8.1f ms  %s", 100.0 * (double)w / (double)s->total_w, (double)w * s->period_ns / 1e6,
              TN(nm, prof__fn_display(f, nb, sizeof nb)));
      if (f->file) fprintf(out, "  (%s:%d)", TN(nm, f->file), f->line);
      else if (f->module) fprintf(out, "  [%s]", TN(nm, f->module));
      fputc('\n', out);
    }
    free(idx);
  }
  size_t n;
  prof__kv64 *e = prof__fn_sorted_map(&s->edges, &n);
  if (e && n) fprintf(out, "  Call paths (caller -> callee, inclusive share):\n");
  for (size_t i = 0; e && i < n && i < 8; i++) {
    char a[160], b[160], ta[PROF_TERM_NAME], tb[PROF_TERM_NAME];
    fprintf(out, "    %5.1f%%  %s -> %s\n", 100.0 * (double)e[i].v / (double)s->total_w,
            TN(ta, prof__fn_display(&s->f[e[i].k >> 32], a, sizeof a)),
            TN(tb, prof__fn_display(&s->f[e[i].k & 0xffffffffu], b, sizeof b)));
  }
  free(e);
  text_lines(s, out);
  text_python(s, out);
  prof__fn_ops_text(s, out);
  prof__fn_workers_text(s, out);
  prof__kv64 *r = prof__fn_sorted_map(&s->rangetot, &n);
  for (size_t i = 0; r && i < n && i < 5; i++) {
    prof__kv64 top[3];
    size_t nt = prof__fn_range_top(s, r[i].k, top, 3);
    char nm[PROF_TERM_NAME];
    fprintf(out, "  %s%s (%.0f%%):", r[i].k ? "Range " : "", TN(nm, r[i].k ? prof__an_str(an, (uint32_t)r[i].k) : "Outside every range"),
            100.0 * (double)r[i].v / (double)s->total_w);
    for (size_t k = 0; k < nt; k++)
      fprintf(out, "%s %s %.0f%%", k ? "," : "", TN(nm, s->f[top[k].k].name), 100.0 * (double)top[k].v / (double)r[i].v);
    fputc('\n', out);
  }
  free(r);
  prof__fn_steps_text(an, s, out);
}

static void fn_destroy(prof__an *an, void *st) {
  (void)an;
  prof__fn_st *s = st;
  for (int m = 0; m < 2; m++) prof__u64map_free(&s->agg[m]);
  prof__u64map_free(&s->fmap);
  prof__u64map_free(&s->edges);
  prof__u64map_free(&s->rangefn);
  prof__u64map_free(&s->rangetot);
  prof__u64map_free(&s->lines);
  prof__u64map_free(&s->last_cpu);
  prof__u64map_free(&s->bound_at);
  free(s->rd);
  free(s->bounds);
  prof__u64map_free(&s->pylines);
  prof__u64map_free(&s->pynative);
  prof__u64map_free(&s->pylib);
  free(s->mods);
  free(s->ts);
  free(s->stacks);
  free(s->f);
  free(s->steps);
  prof__fn_ops_free(s);
  prof__fn_workers_free(s);
}

const prof__section prof__sec_functions = {
    .name = "functions",
    .state_size = sizeof(prof__fn_st),
    .record = fn_record,
    .finish = fn_finish,
    .text = fn_text,
    .json = fn_json,
    .html = prof__fn_html,
    .destroy = fn_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_SAMPLE) | PROF_EVMASK(PROF_EV_COUNTER) | PROF_EVMASK(PROF_EV_STEP_BEGIN) |
                  PROF_EVMASK(PROF_EV_STEP_END),
};
