/* report_html.c — the report as one self-contained HTML page: run facts and
 * findings first, step time per step (warm-up marked), the per-step
 * breakdown as stacked bars, a timeline of the median step (ranges per
 * thread, GPU streams when present), the top ranges, then each section's
 * own part (html hooks) and the trace health.
 *
 * No network: styles and the small script are inline, charts are SVG drawn
 * here (html.c). Without script the page still reads fully (native hover
 * titles); the script only sorts tables, shows a hover box on the timeline
 * and zooms flame graphs. The size is bounded: charts group points, the
 * timeline keeps at most TL_MAX_BARS bars, tables are cut.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/report/html.h"
#include "analyze/util/fmt.h"
#include "analyze/sections/graph/sec_graph.h"
#include "trace/rec_gpu.h"

#define TOP_RANGES 50      /* rows of the ranges table */
#define TL_MAX_BARS 3000   /* timeline bars kept */
#define TL_MAX_DEPTH 12    /* nesting rows drawn per thread */
#define TL_MAX_LANES 64    /* threads + GPU streams drawn */
#define TL_MIN_FRAC 2500   /* bars narrower than window / this are skipped */

#define NS(buf, v) prof__an_fmt_ns(buf, sizeof buf, v)

extern const char prof__html_css[];
extern const char prof__html_js[];

static const char *hdr(const prof__an *an, const char *k) {
  const char *v = prof__an_header(an, k);
  return v && *v ? v : "?";
}

static uint64_t step_dur(const prof__an *an, size_t i) { return an->steps[i].end_ns - an->steps[i].begin_ns; }
/* Of every step of the run (bounded traces: also those known from summaries). */
static uint64_t run_dur(const prof__an *an, size_t i) {
  return prof__an_run_steps(an)[i].end_ns - prof__an_run_steps(an)[i].begin_ns;
}

typedef struct dur_idx {
  uint64_t dur;
  size_t i;
} dur_idx;

static int cmp_dur(const void *a, const void *b) {
  const dur_idx *x = a, *y = b;
  if (x->dur != y->dur) return x->dur < y->dur ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

long prof__an_median_step(const prof__an *an) {
  if (!an || !an->nsteps) return -1;
  dur_idx *d = malloc(an->nsteps * sizeof *d);
  if (!d) return 0;
  for (size_t i = 0; i < an->nsteps; i++) d[i] = (dur_idx){step_dur(an, i), i};
  qsort(d, an->nsteps, sizeof *d, cmp_dur);
  long r = (long)d[(an->nsteps - 1) / 2].i;
  free(d);
  return r;
}

/* ---- head, facts, findings ---------------------------------------------- */

static void html_head(prof__an *an, FILE *out) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"mlprof " MLPROF_VERSION_STRING "\">\n<title>mlprof report — ",
        out);
  prof__html_esc(out, hdr(an, "program"));
  fprintf(out, "</title>\n<style>%s</style>\n</head><body>\n<header><h1>mlprof report — ", prof__html_css);
  prof__html_esc(out, hdr(an, "program"));
  fputs("</h1>\n<p class=\"sub\">", out);
  prof__html_esc(out, an->path);
  if (an->written_by) {
    fputs(" · report written by ", out);
    prof__html_esc(out, an->written_by);
  }
  fputs("</p></header>\n", out);
}



static void facts(prof__an *an, FILE *out) {
  char b[64], d[32], e[32];
  fputs("<table class=\"facts\">", out);
  snprintf(b, sizeof b, "%s on %s", hdr(an, "pid"), hdr(an, "hostname"));
  prof__html_fact(out, "process", b);
  const char *cmd = prof__an_header(an, "cmdline");
  if (cmd && *cmd) prof__html_fact(out, "command", cmd);
  const char *prev = prof__an_header(an, "previous_trace");
  if (prev && *prev) prof__html_fact(out, "previous trace", prev);
  snprintf(b, sizeof b, "%s (%llu events, %zu threads)", NS(d, an->last_ns - an->first_ns),
           (unsigned long long)an->events, an->nthreads);
  prof__html_fact(out, "traced", b);
  uint64_t recorded, own;
  if (prof__an_events_split(an, &recorded, &own)) {
    char ev[96];
    snprintf(ev, sizeof ev, "%llu recorded by the program, %llu added by the profiler (samples, counters)",
             (unsigned long long)recorded, (unsigned long long)own);
    prof__html_fact(out, "events", ev);
  }
  if (prof__an_nall(an)) {
    snprintf(b, sizeof b, "%zu; median %s, p95 %s", prof__an_nall(an), NS(d, an->step_stats.median_ns),
             NS(e, an->step_stats.p95_ns));
    prof__html_fact(out, "steps", b);
  }
  snprintf(b, sizeof b, "%llu", (unsigned long long)an->lost_events);
  prof__html_fact(out, "lost events", b);
  fputs("</table>\n", out);
  if (an->truncated) {
    fputs("<p class=\"warn\">The trace is truncated (", out);
    prof__html_esc(out, an->trunc_msg);
    fputs("); this report covers what was read.</p>\n", out);
  }
  char bound[768];
  if (prof__an_bound_note(an, bound, sizeof bound)) {
    fputs("<p class=\"warn bounded\">", out);
    prof__html_esc(out, bound);
    fputs(".</p>\n", out);
  }
}

static void findings(prof__an *an, FILE *out) {
  fprintf(out, "<h3>Findings (%zu)</h3>\n<div id=\"findings\">", an->nfindings);
  if (!an->nfindings) fputs("<p>No findings: nothing stood out.</p>", out);
  for (size_t i = 0; i < an->nfindings; i++) {
    const prof__finding *f = &an->findings[i];
    fputs("<div class=\"finding sev-", out);
    prof__html_esc(out, f->severity);
    fputs("\"><span class=\"sev\">", out);
    prof__html_esc(out, f->severity);
    fputs("</span> <b>", out);
    prof__html_esc(out, f->title);
    fputs("</b> <code>", out);
    prof__html_esc(out, f->id);
    fputs("</code><p><i>Measured:</i> ", out);
    prof__html_esc(out, f->measured);
    if (f->has_saving) {
      char sv[32];
      fprintf(out, "</p><p><i>Saving:</i> %s per step (%.1f%%, %s confidence): ", NS(sv, f->saving_ns), f->saving_pct,
              prof__an_confidence_label(f->saving_conf));
      prof__html_esc(out, f->saving_model);
    }
    char details[PROF_FINDING_KEYS * 160];
    if (prof__an_finding_details(f, details, sizeof details)) {
      fputs("</p><p><i>Details:</i> ", out);
      prof__html_esc(out, details);
    }
    fputs("</p><p><i>Advice:</i> ", out);
    prof__html_esc(out, f->recommendation);
    fputs("</p></div>\n", out);
  }
  fputs("</div>\n", out);
}

/* The headline: findings with a predicted saving, largest first (the
 * findings are sorted that way), before everything else. */
#define HTML_MAX_SAVINGS 5

static void savings(prof__an *an, FILE *out) {
  size_t n = 0;
  for (size_t i = 0; i < an->nfindings; i++) n += an->findings[i].has_saving && an->findings[i].saving_ns;
  if (!n) return;
  char m[32];
  prof__html_section_begin(out, "savings", "What would make steps faster");
  fprintf(out, "<p class=\"note\">Predicted saving per step if the cause were removed, of a mean step of %s; "
               "each fix alone (savings of overlapping causes do not add up). Hover a row for its model.</p>\n",
          NS(m, an->step_stats.mean_ns));
  static const char *const h[] = {"#", "finding", "saving per step", "% of step", "confidence"};
  prof__html_table_begin(out, h, 5);
  for (size_t i = 0, k = 0; i < an->nfindings && k < HTML_MAX_SAVINGS; i++) {
    const prof__finding *f = &an->findings[i];
    if (!f->has_saving || !f->saving_ns) continue;
    char b[32], p[32], r[16];
    fputs("<tr title=\"", out);
    prof__html_esc(out, f->saving_model);
    fputs("\">", out);
    snprintf(r, sizeof r, "%zu", ++k);
    prof__html_td_num(out, (double)k, r);
    fputs("<td>", out);
    prof__html_esc(out, f->title);
    fputs(" <code>", out);
    prof__html_esc(out, f->id);
    fputs("</code></td>", out);
    prof__html_td_num(out, (double)f->saving_ns, NS(b, f->saving_ns));
    snprintf(p, sizeof p, "%.1f%%", f->saving_pct);
    prof__html_td_num(out, f->saving_pct, p);
    prof__html_td(out, prof__an_confidence_label(f->saving_conf));
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
}

static void summary(prof__an *an, FILE *out) {
  prof__html_section_begin(out, "summary", "Summary");
  facts(an, out);
  findings(an, out);
  prof__html_section_end(out);
}

/* ---- steps and breakdown ------------------------------------------------ */

static const char *const bd_names[] = {"compute", "data", "comm", "io", "other"};
static const char *const bd_colors[] = {"#4e79a7", "#f28e2b", "#b07aa1", "#59a14f", "#bab0ac"};

static void stats_row(FILE *out, const char *label, const prof__step_stats *st) {
  char b[6][32];
  fprintf(out, "<tr><td>%s</td>", label);
  prof__html_td_num(out, (double)st->count, (snprintf(b[0], 32, "%zu", st->count), b[0]));
  const uint64_t v[] = {st->mean_ns, st->median_ns, st->p95_ns, st->min_ns, st->max_ns};
  for (int i = 0; i < 5; i++) prof__html_td_num(out, (double)v[i], NS(b[i + 1], v[i]));
  fputs("</tr>\n", out);
}

/* The step thread's CPU time and the memory peaks over the steps. */
static void step_res(prof__an *an, FILE *out) {
  prof__step_res r;
  prof__an_step_res(an, &r);
  size_t n = prof__an_nall(an);
  char a[32], b[32], line[256];
  if (r.cpu_steps) {
    snprintf(line, sizeof line, "Step thread CPU: %s of %s step time (%.1f%%), known for %zu of %zu steps.",
             NS(a, r.cpu_ns), NS(b, r.cpu_wall_ns),
             r.cpu_wall_ns ? 100.0 * (double)r.cpu_ns / (double)r.cpu_wall_ns : 0.0, r.cpu_steps, n);
    fputs("<p class=\"step-cpu\">", out);
    prof__html_esc(out, line);
    fputs("</p>\n", out);
  }
  if (r.rss_steps || r.live_steps) {
    fputs("<p class=\"step-mem\">", out);
    if (r.rss_steps) {
      snprintf(line, sizeof line, "Peak RSS during a step: %s (step %llu), known for %zu of %zu steps. ",
               prof__fmt_bytes(a, sizeof a, (double)r.rss_peak_bytes), (unsigned long long)r.rss_peak_step,
               r.rss_steps, n);
      prof__html_esc(out, line);
    }
    if (r.live_steps) {
      snprintf(line, sizeof line, "Peak live heap during a step: %s (step %llu), known for %zu of %zu steps.",
               prof__fmt_bytes(a, sizeof a, (double)r.live_peak_bytes), (unsigned long long)r.live_peak_step,
               r.live_steps, n);
      prof__html_esc(out, line);
    }
    fputs("</p>\n", out);
  }
}

/* Per step: the step thread's CPU time (bounded traces: every step of the
 * run; else the functions section draws it) and the peak RSS (0 where
 * unknown), drawn into v (room for 5 values a step). */
static void step_res_charts(prof__an *an, FILE *out, double *v, const uint64_t *ids) {
  prof__step_res r;
  prof__an_step_res(an, &r);
  size_t n = prof__an_nall(an);
  const prof__step *steps = prof__an_run_steps(an);
  if (r.cpu_steps && an->summary_only_steps) {
    for (size_t i = 0; i < n; i++) v[i] = (steps[i].have & PROF_STEP_HAS_CPU) ? (double)steps[i].cpu_ns / 1e6 : 0;
    prof__chart c = {.title = "step thread CPU time, every step of the run", .unit = "ms", .n = n, .nseries = 1, .v = v,
                     .ids = ids, .id_fmt = "step %llu", .peak = -1};
    prof__svg_bars(out, &c);
  }
  if (r.rss_steps) {
    for (size_t i = 0; i < n; i++)
      v[i] = (steps[i].have & PROF_STEP_HAS_RSS) ? (double)steps[i].rss_peak_bytes / (1024.0 * 1024.0) : 0;
    prof__chart c = {.title = "peak RSS per step", .unit = "MiB", .n = n, .nseries = 1, .v = v, .ids = ids,
                     .id_fmt = "step %llu", .peak = -1};
    prof__svg_bars(out, &c);
  }
}

static int steps_section(prof__an *an, FILE *out) {
  size_t n = prof__an_nall(an);
  const prof__step *steps = prof__an_run_steps(an);
  double *v = malloc(n * 5 * sizeof *v);
  uint64_t *ids = malloc(n * sizeof *ids);
  unsigned char *mark = calloc(n, 1);
  if (!v || !ids || !mark) {
    free(v), free(ids), free(mark);
    return PROF_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    v[i] = (double)run_dur(an, i) / 1e6;
    ids[i] = steps[i].number;
    mark[i] = (unsigned char)steps[i].warmup_outlier;
  }
  prof__html_section_begin(out, "steps", "Step time per step");
  prof__chart c = {.title = "step time per step", .unit = "ms", .n = n, .nseries = 1, .v = v, .ids = ids,
                   .id_fmt = "step %llu", .mark = mark, .mark_label = "warm-up step", .peak = -1};
  prof__svg_bars(out, &c);
  static const char *const h[] = {"", "steps", "mean", "median", "p95", "min", "max"};
  prof__html_table_begin(out, h, 7);
  stats_row(out, "all", &an->step_stats);
  if (steps[0].warmup_outlier) stats_row(out, "without warm-up", &an->steady_stats);
  prof__html_table_end(out);
  step_res(an, out);
  step_res_charts(an, out, v, ids);
  prof__html_section_end(out);
  /* the breakdown per step, stacked */
  for (size_t i = 0; i < n; i++) {
    const uint64_t *bd = steps[i].bd_ns;
    for (int b = 0; b < 4; b++) v[i * 5 + b] = (double)bd[b] / 1e6;
    v[i * 5 + 4] = (double)(bd[PROF_BD_OTHER_RANGE] + bd[PROF_BD_UNTRACKED]) / 1e6;
  }
  prof__html_section_begin(out, "breakdown", "Step-time breakdown per step");
  if (prof__an_step_lost(an)) {
    char note[512];
    fputs("<p class=\"warn lossy\"><b>Lossy trace.</b> ", out);
    prof__html_esc(out, prof__an_step_loss_note(an, note, sizeof note));
    fputs("</p>\n", out);
  }
  prof__chart s = {.title = "step-time breakdown per step", .unit = "ms", .n = n, .nseries = 5, .v = v,
                   .series = bd_names, .colors = bd_colors, .ids = ids, .id_fmt = "step %llu", .peak = -1};
  prof__svg_bars(out, &s);
  uint64_t tot[PROF_BD_COUNT];
  prof__an_bd_total(an, tot);
  static const char *const hb[] = {"category", "time", "share of step time"};
  prof__html_table_begin(out, hb, 3);
  for (int b = 0; b < 5; b++) {
    uint64_t t = b < 4 ? tot[b] : tot[PROF_BD_OTHER_RANGE] + tot[PROF_BD_UNTRACKED];
    char d[32], p[32];
    snprintf(p, sizeof p, "%.1f%%", 100 * prof__an_share(an, t));
    fprintf(out, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>%s</td>", bd_colors[b], bd_names[b]);
    prof__html_td_num(out, (double)t, NS(d, t));
    prof__html_td_num(out, prof__an_share(an, t), p);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
  free(v), free(ids), free(mark);
  return 0;
}

/* ---- ranges ------------------------------------------------------------- */

static void ranges_section(prof__an *an, FILE *out) {
  size_t *idx = prof__ranges_by_self(an);
  if (!idx) return;
  prof__html_section_begin(out, "ranges", "Top ranges by self time");
  static const char *const h[] = {"name", "category", "calls", "total", "self", "avg", "% of step time"};
  prof__html_table_begin(out, h, 7);
  for (size_t i = 0; i < an->nranges && i < TOP_RANGES; i++) {
    const prof__range_stat *r = &an->ranges[idx[i]];
    char b[4][32];
    uint64_t avg = r->count ? r->total_ns / r->count : 0;
    fputs("<tr data-range=\"", out); /* the graph panel finds a node's row by name */
    prof__html_esc(out, prof__an_str(an, r->name));
    fputs("\">", out);
    prof__html_td(out, prof__an_str(an, r->name));
    prof__html_td(out, prof__an_cat_name(r->cat));
    snprintf(b[0], 32, "%llu", (unsigned long long)r->count);
    prof__html_td_num(out, (double)r->count, b[0]);
    prof__html_td_num(out, (double)r->total_ns, NS(b[1], r->total_ns));
    prof__html_td_num(out, (double)r->self_ns, NS(b[2], r->self_ns));
    prof__html_td_num(out, (double)avg, NS(b[3], avg));
    double sh = prof__an_detail_share(an, r->in_step_self_ns);
    snprintf(b[0], 32, "%.1f%%", 100 * sh);
    prof__html_td_num(out, sh, b[0]);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  if (an->nranges > TOP_RANGES)
    fprintf(out, "<p class=\"note\">%zu more ranges are in the JSON report.</p>\n", an->nranges - TOP_RANGES);
  prof__html_section_end(out);
  free(idx);
}

/* ---- trace health ------------------------------------------------------- */

static void health(prof__an *an, FILE *out) {
  prof__html_section_begin(out, "health", "Trace health");
  fprintf(out, "<p>lost %llu events, misuse %llu, unmatched range ends %llu, unclosed ranges %llu, unfinished "
               "steps %llu%s. Generated by mlprof %s.</p>\n",
          (unsigned long long)an->lost_events, (unsigned long long)an->misuse,
          (unsigned long long)an->unmatched_range_ends, (unsigned long long)an->unclosed_ranges,
          (unsigned long long)an->unfinished_steps, an->truncated ? "; the trace is TRUNCATED" : "",
          MLPROF_VERSION_STRING);
  prof__html_section_end(out);
}

/* The timeline (report_html_tl.c). */
int prof__html_timeline(prof__an *an, FILE *out, long step);

/* The sections are written to a buffer first, so the nav bar above them
 * links every section that was written. */
int prof__report_html(prof__an *an, FILE *page) {
  int rc = 0;
  char *body = NULL;
  size_t body_len = 0;
  FILE *out = open_memstream(&body, &body_len);
  if (!out) return PROF_ENOMEM;
  savings(an, out);
  summary(an, out);
  if (prof__an_nall(an)) {
    rc = steps_section(an, out);
    if (rc == 0) rc = prof__html_timeline(an, out, prof__an_median_step(an));
  }
  if (rc == 0) ranges_section(an, out);
  for (size_t i = 0; rc == 0 && i < prof__nsections; i++)
    if (prof__sections[i]->html) prof__sections[i]->html(an, an->section_state[i], out);
  if (rc == 0) health(an, out);
  if (fclose(out) != 0 && rc == 0) rc = PROF_ENOMEM;
  if (rc == 0) {
    html_head(an, page);
    prof__html_nav(page, body, body_len);
    fputs("<main>\n", page);
    fwrite(body, 1, body_len, page);
    fprintf(page, "</main>\n<div id=\"tip\" hidden></div>\n<script>%s</script>\n</body></html>\n", prof__html_js);
    if (ferror(page)) rc = PROF_EIO;
  }
  free(body);
  return rc;
}
