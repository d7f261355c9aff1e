/* sec_memory_html.c — the "memory" section's panel of the HTML report:
 * heap figures, live bytes and RSS over time as line charts with the peak
 * marked, leaks with their call stacks, the top allocation sites (by bytes,
 * by calls, by live bytes at the heap peak) and temporary allocations as
 * sortable tables, and custom pools. Nothing when the trace has no memory
 * data. Charts keep at most PROF_HTML_SERIES_MAX points, tables TOP rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html_series.h"
#include "analyze/sections/memory/sec_memory.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/fmt.h"

#define TOP 15         /* rows of each sites table */
#define TOP_LEAKS 20   /* leak groups shown */
#define SITE_FRAMES 4  /* frames in a sites table cell */
#define LEAK_FRAMES 16 /* frames of a leak's stack */



/* Heap peak (exact from events in full mode, else the live-bytes counter)
 * and its time; -1 when unknown. */
static double heap_peak(const mem_state *s, uint64_t *ts) {
  if (prof__sec_mem_exact(s)) {
    *ts = s->heap_peak_ts;
    return s->heap_peak;
  }
  const mem_series *l = &s->series[MS_LIVE];
  double peak = -1;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i] > peak) peak = l->v[i], *ts = l->ts[i];
  return peak;
}

static void facts(prof__an *an, const mem_state *s, FILE *out) {
  char b[160], x[32], y[32];
  uint64_t ts = 0;
  fputs("<table class=\"facts\">", out);
  snprintf(b, sizeof b, "%s%s", s->mode >= 0 ? prof__ev_mem_mode_name(s->mode) : "unknown",
           s->mode == PROF_MEM_SAMPLED ? " (per-site figures are estimates from byte sampling)" : "");
  prof__html_fact(out, "mode", b);
  double peak = heap_peak(s, &ts);
  if (peak >= 0) {
    long step = prof__an_step_at(an, ts);
    int k = snprintf(b, sizeof b, "%s at %.3f s", prof__fmt_bytes(x, sizeof x, peak),
                     ts > an->first_ns ? (double)(ts - an->first_ns) / 1e9 : 0.0);
    if (step >= 0)
      k += snprintf(b + k, sizeof b - (size_t)k, " (step %llu)", (unsigned long long)an->steps[step].number);
    const char *range = prof__sec_mem_peak_range(an, s);
    if (range && k > 0 && (size_t)k < sizeof b) snprintf(b + k, sizeof b - (size_t)k, ", inside range %.60s", range);
    prof__html_fact(out, prof__sec_mem_exact(s) ? "heap peak (exact)" : "heap peak (sampled counter)", b);
  }
  double rss = prof__an_rss_peak(an, prof__sec_mem_series_max(&s->series[MS_RSS]));
  if (rss >= 0) prof__html_fact(out, "RSS peak", prof__fmt_bytes(x, sizeof x, rss));
  if (prof__sec_mem_from_events(s)) {
    snprintf(b, sizeof b, "%s%.0f allocations, %s", s->lost ? "at least " : "", s->allocs,
             prof__fmt_bytes(x, sizeof x, s->bytes));
    prof__html_fact(out, "allocated", b);
  }
  if (s->nleaks) {
    snprintf(b, sizeof b, "%s in %.0f block%s from %zu call site%s", prof__fmt_bytes(x, sizeof x, s->leaked_bytes),
             s->leaked_count, s->leaked_count == 1 ? "" : "s", s->nleaks, s->nleaks == 1 ? "" : "s");
    prof__html_fact(out, "still allocated at exit", b);
  }
  if (s->growth_steps) {
    snprintf(b, sizeof b, "%s per step over %d steps", prof__fmt_bytes(y, sizeof y, s->growth_per_step),
             s->growth_steps);
    prof__html_fact(out, "live bytes change", b);
  }
  fputs("</table>\n", out);
}

static void chart(prof__an *an, FILE *out, const mem_series *ser, const char *title) {
  if (!ser->n) return;
  double scale;
  const char *unit = prof__fmt_byte_unit(prof__sec_mem_series_max(ser), &scale);
  fprintf(out, "<h3>");
  prof__html_esc(out, title);
  fputs("</h3>\n", out);
  prof__html_series_chart(out, title, unit, scale, ser->ts, ser->v, ser->n, an->first_ns);
}

static void charts(prof__an *an, const mem_state *s, FILE *out) {
  chart(an, out, &s->series[MS_LIVE], "Live heap bytes over time");
  if (s->series[MS_LIVE].n)
    fprintf(out, "<p class=\"note\">Sampled every writer period (%zu samples) as usable block sizes, which "
                 "round the requested sizes up%s.</p>\n",
            s->series[MS_LIVE].n, prof__sec_mem_exact(s) ? ": its peak can differ from the exact heap peak above" : "");
  chart(an, out, &s->series[MS_RSS], "Resident set size (RSS) over time");
}

static void frame_out(FILE *out, const prof__frame *f) {
  prof__html_esc(out, f->func ? f->func : "?");
  if (!f->file || f->line <= 0) return;
  const char *base = strrchr(f->file, '/');
  fputs(" <span class=\"note\">(", out);
  prof__html_esc(out, base ? base + 1 : f->file);
  fprintf(out, ":%d)</span>", f->line);
}

/* The stack, innermost first, without profiler frames: function (file:line)
 * joined by `sep` (raw HTML). */
static void stack_cell(prof__an *an, FILE *out, uint32_t stack, int max, const char *sep) {
  const uintptr_t *pcs = NULL;
  int d = stack ? prof__an_stack(an, stack, &pcs) : 0, n = 0;
  fputs("<td class=\"stack\">", out);
  for (int i = 0; i < d && n < max; i++) {
    const prof__frame *f = prof__an_frame(an, pcs[i]);
    if (!f || prof__an_frame_is_profiler(f)) continue;
    if (n++) fputs(sep, out);
    frame_out(out, f);
  }
  if (!n) fputs("(no stack)", out);
  fputs("</td>", out);
}

static void leaks(prof__an *an, const mem_state *s, FILE *out) {
  if (!s->nleaks) return;
  fprintf(out, "<h3>Still allocated at exit (%zu call site%s)</h3>\n", s->nleaks, s->nleaks == 1 ? "" : "s");
  static const char *const h[] = {"bytes", "blocks", "pool", "allocation stack (innermost first)"};
  prof__html_table_begin(out, h, 4);
  for (size_t i = 0; i < s->nleaks && i < TOP_LEAKS; i++) {
    const mem_site *x = &s->sites[s->leak_order[i]];
    fputs("<tr>", out);
    prof__html_td_bytes(out, x->leak_bytes);
    prof__html_td_count(out, round(x->leak_count));
    prof__html_td(out, prof__sec_mem_pool_name(s, x->pool));
    stack_cell(an, out, x->stack, LEAK_FRAMES, "<br>");
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  if (s->nleaks > TOP_LEAKS)
    fprintf(out, "<p class=\"note\">%zu more in the JSON report.</p>\n", s->nleaks - TOP_LEAKS);
}

static void sites(prof__an *an, const mem_state *s, FILE *out, const char *title, int how) {
  uint32_t idx[TOP];
  size_t n = prof__sec_mem_top_sites(s, how, idx, TOP);
  if (!n) return;
  fputs("<h3>", out);
  prof__html_esc(out, title);
  fputs("</h3>\n", out);
  static const char *const h[] = {"bytes", "calls", "pool", "call stack (innermost first)"};
  prof__html_table_begin(out, h, 4);
  for (size_t i = 0; i < n; i++) {
    const mem_site *x = &s->sites[idx[i]];
    double bytes = how == MEM_RANK_PEAK ? x->at_peak : how == MEM_RANK_TEMP ? x->temp_bytes : x->bytes;
    fputs("<tr>", out);
    prof__html_td_bytes(out, round(bytes));
    prof__html_td_count(out, round(how == MEM_RANK_TEMP ? x->temp_calls : x->calls));
    prof__html_td(out, prof__sec_mem_pool_name(s, x->pool));
    stack_cell(an, out, x->stack, SITE_FRAMES, " &lt; ");
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

static void pools(const mem_state *s, FILE *out) {
  int any = 0;
  for (int i = 1; i < PROF_MEM_POOLS && !any; i++) any = s->pools[i].seen || s->pools[i].allocs > 0;
  if (!any) return;
  fputs("<h3>Custom pools</h3>\n", out);
  static const char *const h[] = {"pool", "peak live", "live at end", "allocations", "bytes allocated"};
  prof__html_table_begin(out, h, 5);
  for (int i = 1; i < 256; i++) {
    const mem_pool *p = &s->pools[i];
    if (!p->seen && !(p->allocs > 0)) continue;
    fputs("<tr>", out);
    prof__html_td(out, p->name[0] ? p->name : "?");
    prof__html_td_bytes(out, p->peak);
    prof__html_td_bytes(out, p->live);
    prof__html_td_count(out, round(p->allocs));
    prof__html_td_bytes(out, p->bytes);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

void prof__sec_mem_html(prof__an *an, void *stp, FILE *out) {
  mem_state *s = stp;
  if (!s->init || !s->any) return;
  prof__html_section_begin(out, "memory", "Memory");
  if (s->lost) { /* next to the numbers: before them */
    char note[512];
    fputs("<p class=\"warn lossy\"><b>Lossy trace.</b> ", out);
    prof__html_esc(out, prof__sec_mem_loss_note(s, note, sizeof note));
    fputs("</p>\n", out);
  }
  facts(an, s, out);
  charts(an, s, out);
  leaks(an, s, out);
  sites(an, s, out, "Top allocation sites by bytes allocated", MEM_RANK_BYTES);
  sites(an, s, out, "Top allocation sites by calls", MEM_RANK_CALLS);
  sites(an, s, out, "Top contributors to the heap peak (live bytes at the peak)", MEM_RANK_PEAK);
  sites(an, s, out, "Temporary allocations (freed before the thread allocates again)", MEM_RANK_TEMP);
  pools(s, out);
  if (s->mode == PROF_MEM_SAMPLED) fputs("<p class=\"note\">Sampled mode: bytes and calls per site are estimates.</p>\n", out);
  prof__html_section_end(out);
}
