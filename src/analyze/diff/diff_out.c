/* diff_out.c — `mlprof diff` output: text for people, JSON
 * ("mlprof.diff/1", docs/diff.md) and a self-contained HTML page.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/diff/diff.h"
#include "analyze/report/html.h"
#include "analyze/util/termsafe.h"

extern const char prof__html_css[];
extern const char prof__html_js[];

static const char *ms(char *b, size_t n, double ns) {
  if (isnan(ns)) snprintf(b, n, "-");
  else if (fabs(ns) >= 1e6) snprintf(b, n, "%.3f ms", ns / 1e6);
  else snprintf(b, n, "%.2f us", ns / 1e3);
  return b;
}

static const char *pct(char *b, size_t n, double p) {
  if (isnan(p)) snprintf(b, n, "n/a");
  else snprintf(b, n, "%+.1f%%", p);
  return b;
}

static const char *mib(char *b, size_t n, double v) {
  if (isnan(v)) snprintf(b, n, "-");
  else snprintf(b, n, "%.1f MiB", v / 1048576.0);
  return b;
}

static const char *verdict(const prof__diff *d) {
  if (isnan(d->median_pct)) return "no steps to compare";
  if (!d->significant) return "within noise";
  return d->median_pct > 0 ? "slower" : "faster";
}

/* ---- text --------------------------------------------------------------- */

/* "input_bound" or "step_wait (publish)" into buf. */
static const char *saving_name(const prof__diff_saving *x, char *b, size_t n) {
  if (x->phase) snprintf(b, n, "%s (%s)", x->id, x->phase);
  else snprintf(b, n, "%s", x->id);
  return b;
}

static void text_savings(const prof__diff *d, FILE *out) {
  if (!d->nsavings) return;
  char a[32], b[32], c[32], nm[200];
  fprintf(out, "\nPredicted savings (BASE) against NEW: mean step %s -> %s, saved %s per step\n",
          ms(a, 32, d->base_mean), ms(b, 32, d->cur_mean), ms(c, 32, d->saved));
  for (size_t i = 0; i < d->nsavings; i++) {
    const prof__diff_saving *x = &d->savings[i];
    fprintf(out, "  %-32.32s predicted %s, saved %s", saving_name(x, nm, sizeof nm), ms(a, 32, x->predicted),
            ms(b, 32, d->saved));
    if (x->gone) fputs(" (gone in NEW)\n", out);
    else fprintf(out, " (still %s in NEW: expected %s)\n", ms(a, 32, x->remaining), ms(c, 32, x->predicted - x->remaining));
  }
  if (d->nsavings > 1)
    fputs("  (saved: the drop of the mean steady step, all changes together; predictions of overlapping causes "
          "do not add up)\n",
          out);
}

static void text_out(const prof__diff *d, size_t top, FILE *out) {
  char a[32], b[32], c[32], e[32], n1[PROF_TERM_NAME], n2[PROF_TERM_NAME];
  fprintf(out, "mlprof diff (mlprof " MLPROF_VERSION_STRING ")\n  base: %s (%zu steps)\n  new:  %s (%zu steps)\n\n",
          prof__term_name(n1, sizeof n1, d->base_path), d->base_steps, prof__term_name(n2, sizeof n2, d->cur_path),
          d->cur_steps);
  fprintf(out, "Step time (steady steps)\n  median %s -> %s  %s  (noise ±%.1f%%: %s)\n", ms(a, 32, d->base_median),
          ms(b, 32, d->cur_median), pct(c, 32, d->median_pct), isnan(d->noise_pct) ? 0 : d->noise_pct, verdict(d));
  fprintf(out, "  p95    %s -> %s  %s\n\n", ms(a, 32, d->base_p95), ms(b, 32, d->cur_p95), pct(c, 32, d->p95_pct));
  fprintf(out, "Largest changes in self time%s\n", d->per_step ? " per step" : "");
  fprintf(out, "  %-9s %-40s %12s %12s %12s\n", "kind", "name", "base", "new", "change");
  for (size_t i = 0; i < d->nitems && i < top; i++) {
    const prof__diff_item *x = &d->items[i];
    fprintf(out, "  %-9s %-40.40s %12s %12s %12s\n", x->kind, prof__term_name(n1, sizeof n1, x->name),
            ms(a, 32, x->base), ms(b, 32, x->cur), ms(e, 32, x->delta));
  }
  if (!isnan(d->base_peak) || !isnan(d->cur_peak) || !isnan(d->base_rss) || !isnan(d->cur_rss)) {
    fprintf(out, "\nMemory\n  peak live %s -> %s\n", mib(a, 32, d->base_peak), mib(b, 32, d->cur_peak));
    fprintf(out, "  peak RSS  %s -> %s\n  leaked    %s -> %s\n", mib(a, 32, d->base_rss), mib(b, 32, d->cur_rss),
            mib(c, 32, d->base_leak), mib(e, 32, d->cur_leak));
  }
  text_savings(d, out);
  fputs("\nFindings\n", out);
  if (!d->nfindings) fputs("  no change\n", out);
  for (size_t i = 0; i < d->nfindings; i++)
    fprintf(out, "  %s [%s] %s: %s\n", d->findings[i].appeared ? "appeared:   " : "disappeared:",
            d->findings[i].severity, d->findings[i].id, prof__term_name(n1, sizeof n1, d->findings[i].title));
}

/* ---- json --------------------------------------------------------------- */

static void knum_or_null(prof__json *j, const char *k, double v) {
  prof__json_key(j, k);
  if (isnan(v)) prof__json_null(j);
  else prof__json_num(j, v);
}

static void json_savings(const prof__diff *d, prof__json *j) {
  prof__json_key(j, "savings");
  prof__json_obj_begin(j);
  knum_or_null(j, "base_mean_ns", d->base_mean);
  knum_or_null(j, "new_mean_ns", d->cur_mean);
  knum_or_null(j, "saved_ns", d->saved);
  prof__json_key(j, "findings");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < d->nsavings; i++) {
    const prof__diff_saving *x = &d->savings[i];
    prof__json_obj_begin(j);
    prof__json_kstr(j, "id", x->id);
    if (x->phase) prof__json_kstr(j, "phase", x->phase);
    prof__json_kstr(j, "title", x->title);
    prof__json_knum(j, "predicted_ns", x->predicted);
    prof__json_knum(j, "remaining_ns", x->remaining);
    prof__json_knum(j, "expected_ns", x->predicted - x->remaining);
    prof__json_kbool(j, "gone", x->gone);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void json_out(const prof__diff *d, size_t top, FILE *out) {
  prof__json j;
  prof__json_init(&j, out, 1);
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "schema", "mlprof.diff/1");
  prof__json_key(&j, "generator");
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "name", "mlprof");
  prof__json_kstr(&j, "version", MLPROF_VERSION_STRING);
  prof__json_obj_end(&j);
  prof__json_kstr(&j, "base", d->base_path);
  prof__json_kstr(&j, "new", d->cur_path);
  prof__json_key(&j, "steps");
  prof__json_obj_begin(&j);
  prof__json_kuint(&j, "base_count", d->base_steps);
  prof__json_kuint(&j, "new_count", d->cur_steps);
  knum_or_null(&j, "base_median_ns", d->base_median);
  knum_or_null(&j, "new_median_ns", d->cur_median);
  knum_or_null(&j, "median_change_pct", d->median_pct);
  knum_or_null(&j, "base_p95_ns", d->base_p95);
  knum_or_null(&j, "new_p95_ns", d->cur_p95);
  knum_or_null(&j, "p95_change_pct", d->p95_pct);
  knum_or_null(&j, "noise_pct", d->noise_pct);
  prof__json_kbool(&j, "significant", d->significant);
  prof__json_kstr(&j, "verdict", verdict(d));
  prof__json_obj_end(&j);
  prof__json_kbool(&j, "per_step", d->per_step);
  prof__json_key(&j, "changes");
  prof__json_arr_begin(&j);
  for (size_t i = 0; i < d->nitems && i < top; i++) {
    const prof__diff_item *x = &d->items[i];
    prof__json_obj_begin(&j);
    prof__json_kstr(&j, "kind", x->kind);
    prof__json_kstr(&j, "name", x->name);
    knum_or_null(&j, "base_ns", x->base);
    knum_or_null(&j, "new_ns", x->cur);
    prof__json_knum(&j, "delta_ns", x->delta);
    prof__json_obj_end(&j);
  }
  prof__json_arr_end(&j);
  prof__json_key(&j, "memory");
  prof__json_obj_begin(&j);
  knum_or_null(&j, "base_peak_live_bytes", d->base_peak);
  knum_or_null(&j, "new_peak_live_bytes", d->cur_peak);
  knum_or_null(&j, "base_rss_peak_bytes", d->base_rss);
  knum_or_null(&j, "new_rss_peak_bytes", d->cur_rss);
  knum_or_null(&j, "base_leaked_bytes", d->base_leak);
  knum_or_null(&j, "new_leaked_bytes", d->cur_leak);
  prof__json_obj_end(&j);
  prof__json_key(&j, "findings");
  prof__json_obj_begin(&j);
  for (int app = 1; app >= 0; app--) {
    prof__json_key(&j, app ? "appeared" : "disappeared");
    prof__json_arr_begin(&j);
    for (size_t i = 0; i < d->nfindings; i++) {
      if (d->findings[i].appeared != app) continue;
      prof__json_obj_begin(&j);
      prof__json_kstr(&j, "id", d->findings[i].id);
      prof__json_kstr(&j, "severity", d->findings[i].severity);
      prof__json_kstr(&j, "title", d->findings[i].title);
      prof__json_obj_end(&j);
    }
    prof__json_arr_end(&j);
  }
  prof__json_obj_end(&j);
  json_savings(d, &j);
  prof__json_obj_end(&j);
  fputc('\n', out);
}

/* ---- html --------------------------------------------------------------- */

static void html_items(const prof__diff *d, size_t top, FILE *out) {
  static const char *const h[] = {"kind", "name", "base", "new", "change"};
  prof__html_table_begin(out, h, 5);
  for (size_t i = 0; i < d->nitems && i < top; i++) {
    const prof__diff_item *x = &d->items[i];
    char a[32], b[32], c[32];
    fputs("<tr>", out);
    prof__html_td(out, x->kind);
    prof__html_td(out, x->name);
    prof__html_td_num(out, isnan(x->base) ? 0 : x->base, ms(a, 32, x->base));
    prof__html_td_num(out, isnan(x->cur) ? 0 : x->cur, ms(b, 32, x->cur));
    prof__html_td_num(out, x->delta, ms(c, 32, x->delta));
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

static void html_savings(const prof__diff *d, FILE *out) {
  if (!d->nsavings) return;
  char a[32], b[32], c[32], nm[200];
  prof__html_section_begin(out, "savings", "Predicted savings against the result");
  fprintf(out, "<p>Mean steady step %s → %s: <b>saved %s per step</b> (all changes together).</p>\n",
          ms(a, 32, d->base_mean), ms(b, 32, d->cur_mean), ms(c, 32, d->saved));
  static const char *const h[] = {"finding (BASE)", "predicted", "in NEW", "expected", "saved"};
  prof__html_table_begin(out, h, 5);
  for (size_t i = 0; i < d->nsavings; i++) {
    const prof__diff_saving *x = &d->savings[i];
    fputs("<tr>", out);
    prof__html_td(out, saving_name(x, nm, sizeof nm));
    prof__html_td_num(out, x->predicted, ms(a, 32, x->predicted));
    if (x->gone) prof__html_td(out, "gone");
    else prof__html_td_num(out, x->remaining, ms(b, 32, x->remaining));
    prof__html_td_num(out, x->predicted - x->remaining, ms(c, 32, x->predicted - x->remaining));
    prof__html_td_num(out, isnan(d->saved) ? 0 : d->saved, ms(a, 32, d->saved));
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
}

static void html_out(const prof__diff *d, size_t top, FILE *out) {
  char a[32], b[32], c[32], e[32];
  fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"generator\" content=\"mlprof " MLPROF_VERSION_STRING "\"><title>mlprof diff</title>"
               "<style>%s</style></head><body>\n<header><h1>mlprof diff</h1><p class=\"sub\">base: ",
          prof__html_css);
  prof__html_esc(out, d->base_path);
  fputs("<br>new: ", out);
  prof__html_esc(out, d->cur_path);
  fputs("</p></header><main>\n", out);
  prof__html_section_begin(out, "steps", "Step time");
  fprintf(out, "<p class=\"verdict\"><b>%s</b>: median %s → %s (<b>%s</b>, noise ±%.1f%%); p95 %s → ",
          verdict(d), ms(a, 32, d->base_median), ms(b, 32, d->cur_median), pct(c, 32, d->median_pct),
          isnan(d->noise_pct) ? 0 : d->noise_pct, ms(e, 32, d->base_p95)); /* a buffer of its own per figure */
  fprintf(out, "%s (%s).</p>\n", ms(b, 32, d->cur_p95), pct(c, 32, d->p95_pct));
  prof__html_section_end(out);
  html_savings(d, out);
  prof__html_section_begin(out, "changes", d->per_step ? "Largest changes in self time per step"
                                                       : "Largest changes in self time");
  html_items(d, top, out);
  prof__html_section_end(out);
  prof__html_section_begin(out, "findings", "Findings that changed");
  if (!d->nfindings) fputs("<p>No finding appeared or disappeared.</p>\n", out);
  for (size_t i = 0; i < d->nfindings; i++) {
    fprintf(out, "<div class=\"finding sev-%s\"><span class=\"sev\">%s</span> ",
            d->findings[i].appeared ? "high" : "low", d->findings[i].appeared ? "appeared" : "gone");
    prof__html_esc(out, d->findings[i].title);
    fputs(" <code>", out);
    prof__html_esc(out, d->findings[i].id);
    fputs("</code></div>\n", out);
  }
  prof__html_section_end(out);
  fprintf(out, "</main><div id=\"tip\" hidden></div><script>%s</script></body></html>\n", prof__html_js);
}

int prof__diff_write(const prof__diff *d, const char *format, size_t top, FILE *out) {
  if (!d || !format || !out) return PROF_EINVAL;
  if (!top) top = 20;
  if (strcmp(format, "text") == 0) {
    FILE *t = prof__term_open(out); /* names from the traces must not drive the terminal */
    if (!t) return PROF_ENOMEM;
    text_out(d, top, t);
    if (prof__term_close(t)) return PROF_EIO;
  }
  else if (strcmp(format, "json") == 0) json_out(d, top, out);
  else if (strcmp(format, "html") == 0) html_out(d, top, out);
  else return PROF_EINVAL;
  return fflush(out) || ferror(out) ? PROF_EIO : 0;
}
