/* sec_workers.c — forked workers in the "functions" section: the samples
 * the parent took of its forked Python workers (src/cpu/workers.c: thread
 * "forked worker", range "[forked worker]") summed up as their number,
 * their CPU time, their hot Python lines (the innermost Python frame of
 * each sample: a DataLoader's __getitem__ and what it calls), beside the
 * time the program's threads spent waiting in DATA ranges (torch's
 * DataLoader fetch, a record_function block, or mlprof.torch.loader).
 * JSON `functions.workers`, a text paragraph, an HTML table. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html.h"
#include "analyze/report/html_series.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/json.h"
#include "analyze/util/termsafe.h"
#include "trace/ev_sample.h"

#define LINES 10

typedef struct wline {
  const char *file, *func;
  int line;
  uint64_t w;
} wline;

struct prof__fn_workers {
  uint64_t w;          /* weight of the workers' samples */
  size_t processes;
  double data_wait_ns; /* self time of DATA ranges */
  uint64_t seen, refused; /* META: workers seen, reads of their memory refused */
  wline *l;
  size_t nl, lcap;
};

static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static void add_line(struct prof__fn_workers *k, const prof__frame *f, uint64_t w) {
  for (size_t i = 0; i < k->nl; i++)
    if (k->l[i].line == f->line && same(k->l[i].file, f->file) && same(k->l[i].func, f->func)) {
      k->l[i].w += w;
      return;
    }
  if (k->nl == k->lcap) {
    size_t cap = k->lcap ? k->lcap * 2 : 32;
    wline *p = realloc(k->l, cap * sizeof *p);
    if (!p) return;
    k->l = p;
    k->lcap = cap;
  }
  k->l[k->nl++] = (wline){f->file, f->func, f->line, w};
}

static int by_w(const void *a, const void *b) {
  const wline *x = a, *y = b;
  return x->w < y->w ? 1 : x->w > y->w ? -1 : 0;
}

/* A META count (0 when absent or not a number). */
static uint64_t meta_u64(const prof__an *an, const char *key) {
  for (size_t i = 0; i < an->meta_count; i++)
    if (strcmp(an->meta[i].key, key) == 0) return strtoull(an->meta[i].value, NULL, 10);
  return 0;
}

void prof__fn_workers_finish(prof__an *an, prof__fn_st *s) {
  if (s->mode != 0) return; /* workers are sampled on CPU time */
  uint64_t range = 0;
  prof__u64map *m = &s->agg[0];
  for (size_t i = 0; i < m->cap && !range; i++) {
    if (!m->k[i]) continue;
    uint32_t r = (uint32_t)((m->k[i] - 1) >> 32);
    if (r && strcmp(prof__an_str(an, r), PROF_WORKER_RANGE) == 0) range = r;
  }
  uint64_t seen = meta_u64(an, PROF_META_WORKERS), refused = meta_u64(an, PROF_META_WORKER_REFUSED);
  if (!range && !(seen && refused)) return;
  struct prof__fn_workers *k = calloc(1, sizeof *k);
  if (!k) return;
  s->workers = k;
  k->seen = seen;
  k->refused = refused;
  for (size_t i = 0; range && i < m->cap; i++) {
    if (!m->k[i] || ((m->k[i] - 1) >> 32) != range) continue;
    const prof__frame *fr[64];
    int d = prof__an_stack_frames(an, (uint32_t)((m->k[i] - 1) & 0xffffffffu), fr, 64, 0);
    k->w += m->v[i];
    for (int f = 0; f < d; f++)
      if (fr[f]->python && fr[f]->file) {
        add_line(k, fr[f], m->v[i]);
        break;
      }
  }
  if (k->nl) qsort(k->l, k->nl, sizeof *k->l, by_w);
  for (size_t i = 0; i < an->nthreads; i++)
    if (an->threads[i].name && strcmp(an->threads[i].name, PROF_WORKER_THREAD) == 0) k->processes++;
  for (size_t i = 0; i < an->nranges; i++)
    if (an->ranges[i].cat == PROF_CAT_DATA) k->data_wait_ns += (double)an->ranges[i].self_ns;
}

void prof__fn_workers_free(prof__fn_st *s) {
  if (!s->workers) return;
  free(s->workers->l);
  free(s->workers);
  s->workers = NULL;
}

static const char *base_name(const char *file) {
  const char *b = file ? strrchr(file, '/') : NULL;
  return b ? b + 1 : file ? file : "?";
}

/* Why workers seen gave few or no samples: one sentence into buf, or NULL. */
static const char *refused_note(const struct prof__fn_workers *k, char *buf, size_t n) {
  if (!k->refused) return NULL;
  snprintf(buf, n,
           "%llu forked worker%s seen; the kernel refused %llu read%s of their memory (ptrace rules: "
           "kernel.yama.ptrace_scope 2 or 3, or a container without CAP_SYS_PTRACE), so their CPU and hot "
           "lines are %s",
           (unsigned long long)k->seen, k->seen == 1 ? "" : "s", (unsigned long long)k->refused,
           k->refused == 1 ? "" : "s", k->w ? "undercounted" : "not known");
  return buf;
}

void prof__fn_workers_json(prof__json *j, const prof__fn_st *s) {
  const struct prof__fn_workers *k = s->workers;
  if (!k || (!k->w && !k->refused)) return;
  prof__json_key(j, "workers");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "processes", k->processes);
  prof__json_kuint(j, "seen", k->seen);
  prof__json_kuint(j, "reads_refused", k->refused);
  prof__json_kuint(j, "samples", k->w);
  prof__json_knum(j, "pct", s->total_w ? 100.0 * (double)k->w / (double)s->total_w : 0);
  prof__json_knum(j, "cpu_ms", (double)k->w * s->period_ns / 1e6);
  prof__json_knum(j, "data_wait_ms", k->data_wait_ns / 1e6);
  prof__json_key(j, "lines");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < k->nl && i < LINES; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "function", k->l[i].func ? k->l[i].func : "?");
    prof__json_kstr(j, "file", k->l[i].file);
    prof__json_kint(j, "line", k->l[i].line);
    prof__json_knum(j, "pct_of_workers", 100.0 * (double)k->l[i].w / (double)k->w);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

void prof__fn_workers_text(const prof__fn_st *s, FILE *out) {
  const struct prof__fn_workers *k = s->workers;
  char note[400];
  if (k && refused_note(k, note, sizeof note)) fprintf(out, "  Forked workers: %s.\n", note);
  if (!k || !k->w) return;
  fprintf(out, "  Forked workers (DataLoader workers, sampled from this process): %zu processes, ~%.1f ms of CPU "
               "(%.0f%% of the samples); the program waited %.1f ms in data ranges\n",
          k->processes, (double)k->w * s->period_ns / 1e6, 100.0 * (double)k->w / (double)s->total_w,
          k->data_wait_ns / 1e6);
  char fl[PROF_TERM_NAME], fn[PROF_TERM_NAME];
  for (size_t i = 0; i < k->nl && i < 5; i++)
    fprintf(out, "    %5.1f%%  %s:%d %s\n", 100.0 * (double)k->l[i].w / (double)k->w,
            prof__term_name(fl, sizeof fl, base_name(k->l[i].file)), k->l[i].line,
            prof__term_name(fn, sizeof fn, k->l[i].func ? k->l[i].func : "?"));
}

void prof__fn_workers_html(const prof__fn_st *s, FILE *out) {
  const struct prof__fn_workers *k = s->workers;
  char note[400];
  if (!k || (!k->w && !k->refused)) return;
  fputs("<h3>Forked workers</h3>\n", out);
  if (refused_note(k, note, sizeof note)) {
    fputs("<p class=\"note\">", out);
    prof__html_esc(out, note);
    fputs(".</p>\n", out);
  }
  if (!k->w) return;
  fprintf(out, "<p class=\"note\">%zu forked worker processes (DataLoader workers) "
               "sampled from this process: about %.1f ms of CPU, %.0f%% of the samples; the program waited "
               "%.1f ms in data ranges. Their hot Python lines:</p>\n",
          k->processes, (double)k->w * s->period_ns / 1e6, 100.0 * (double)k->w / (double)s->total_w,
          k->data_wait_ns / 1e6);
  static const char *const h[] = {"line", "function", "share of the workers"};
  prof__html_table_begin(out, h, 3);
  for (size_t i = 0; i < k->nl && i < LINES; i++) {
    char b[600];
    snprintf(b, sizeof b, "%s:%d", base_name(k->l[i].file), k->l[i].line);
    fputs("<tr>", out);
    prof__html_td(out, b);
    prof__html_td(out, k->l[i].func ? k->l[i].func : "?");
    prof__html_td_pct(out, (double)k->l[i].w / (double)k->w);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}
