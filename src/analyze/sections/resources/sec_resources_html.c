/* sec_resources_html.c — the "resources" section's panel of the HTML
 * report: run facts, process CPU (cores), I/O rates and, when NVML was
 * sampled, GPU utilisation over time as line charts (at most
 * PROF_HTML_SERIES_MAX points each, the peak marked), the busiest threads
 * and the per-step table (at most MAX_STEP_ROWS rows). Nothing when the
 * trace has no resource samples.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html_series.h"
#include "analyze/sections/resources/sec_resources.h"
#include "analyze/util/fmt.h"

#define MAX_STEP_ROWS 200

static double rate_mean(const racc *r) { return r->cover_s > 0 ? r->amount / r->cover_s : 0; }
static double cores_of(const step_res *s) { return s->cover_s > 0 ? s->cpu_core_s / s->cover_s : 0; }


static void facts(prof__an *an, const res_st *st, FILE *out) {
  char b[200], x[32];
  const racc *r = st->rate;
  fputs("<table class=\"facts\">", out);
  snprintf(b, sizeof b, "every %.0f ms; %.2f usable cores", st->period_ms, st->cpus);
  prof__html_fact(out, "sampled", b);
  snprintf(b, sizeof b, "%.2f cores mean, %.2f peak; during steps %.2f mean", rate_mean(&r[PROF_RES_CPU]),
           r[PROF_RES_CPU].peak, cores_of(&st->in_steps));
  prof__html_fact(out, "process CPU", b);
  if (st->gauge[PROF_RES_RSS].n) prof__html_fact(out, "RSS peak", prof__fmt_bytes(x, sizeof x, st->gauge[PROF_RES_RSS].peak));
  if (r[PROF_RES_IO_READ].cover_s > 0) {
    char y[32];
    snprintf(b, sizeof b, "read %s, written %s (syscalls)", prof__fmt_bytes(x, sizeof x, r[PROF_RES_IO_READ].amount),
             prof__fmt_bytes(y, sizeof y, r[PROF_RES_IO_WRITE].amount));
    prof__html_fact(out, "I/O", b);
  }
  const char *gpu = prof__an_header(an, "res.gpu");
  if (!st->ngpus) prof__html_fact(out, "GPU", gpu ? gpu : "not sampled");
  fputs("</table>\n", out);
}

/* One chart of slot `slot` of the intervals (only those with GPU samples
 * for S_GPU; rates leave out intervals shorter than half a period, as the
 * peaks do), values divided by scale. */
static void iv_chart(prof__an *an, const res_st *st, FILE *out, int slot, const char *title, const char *unit,
                     double scale) {
  uint64_t *t = malloc((st->nivs + 1) * sizeof *t);
  double *v = malloc((st->nivs + 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; t && v && i < st->nivs; i++) {
    const iv *x = &st->ivs[i];
    if (slot == S_GPU && !x->has_gpu) continue;
    if (slot != S_GPU && (double)x->dur / 1e9 < st->min_peak_s) continue; /* a short last interval: noise */
    t[n] = x->ts + x->dur / 2;
    v[n++] = x->v[slot];
  }
  if (n) {
    fputs("<h3>", out);
    prof__html_esc(out, title);
    fputs("</h3>\n", out);
    prof__html_series_chart(out, title, unit, scale, t, v, n, an->first_ns);
  }
  free(t);
  free(v);
}

/* I/O rate chart in a byte unit fitting the largest rate. */
static void io_chart(prof__an *an, const res_st *st, FILE *out, int slot, int code, const char *title) {
  if (st->rate[code].cover_s <= 0 || st->rate[code].amount <= 0) return;
  double max = 0, scale;
  for (size_t i = 0; i < st->nivs; i++)
    if (st->ivs[i].v[slot] > max) max = st->ivs[i].v[slot];
  char unit[16];
  snprintf(unit, sizeof unit, "%s/s", prof__fmt_byte_unit(max, &scale));
  iv_chart(an, st, out, slot, title, unit, scale);
}

static void threads(const res_st *st, FILE *out) {
  if (!st->nthreads) return;
  fputs("<h3>Busiest threads</h3>\n", out);
  static const char *const h[] = {"thread", "tid", "CPU time", "mean cores", "peak cores"};
  prof__html_table_begin(out, h, 5);
  int used[RES_MAX_THREADS] = {0};
  for (int n = 0; n < st->nthreads; n++) {
    int i = -1; /* busiest first, by CPU seconds */
    for (int k = 0; k < st->nthreads; k++)
      if (!used[k] && (i < 0 || st->threads[k].cpu_s > st->threads[i].cpu_s)) i = k;
    used[i] = 1;
    const thr *t = &st->threads[i];
    char b[32];
    fputs("<tr>", out);
    prof__html_td(out, t->comm);
    prof__html_td_count(out, t->tid);
    prof__html_td_ns(out, prof__an_d2ns(t->cpu_s * 1e9));
    snprintf(b, sizeof b, "%.2f", t->window_s > 0 ? t->cpu_s / t->window_s : 0);
    prof__html_td_num(out, t->window_s > 0 ? t->cpu_s / t->window_s : 0, b);
    snprintf(b, sizeof b, "%.2f", t->peak);
    prof__html_td_num(out, t->peak, b);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

static void rate_cell(FILE *out, double bytes_per_s) {
  char b[40];
  prof__fmt_bytes(b, sizeof b - 2, bytes_per_s);
  strcat(b, "/s");
  prof__html_td_num(out, bytes_per_s, b);
}

static void num_cell(FILE *out, const char *fmt, double v) {
  char b[32];
  snprintf(b, sizeof b, fmt, v);
  prof__html_td_num(out, v, b);
}

static void steps(prof__an *an, const res_st *st, FILE *out) {
  if (!st->nsteps) return;
  fputs("<h3>Per step</h3>\n", out);
  static const char *const h[] = {"step", "duration", "CPU cores mean", "CPU cores peak", "read", "written",
                                  "GPU util mean"};
  size_t nh = st->gpu_seen ? 7 : 6;
  prof__html_table_begin(out, h, nh);
  for (size_t k = 0; k < st->nsteps && k < MAX_STEP_ROWS; k++) {
    const step_res *s = &st->steps[k];
    uint64_t d = an->steps[k].end_ns - an->steps[k].begin_ns;
    double ds = (double)d / 1e9;
    fputs("<tr>", out);
    prof__html_td_count(out, (double)an->steps[k].number);
    prof__html_td_ns(out, d);
    num_cell(out, "%.2f", cores_of(s));
    num_cell(out, "%.2f", s->cpu_peak);
    rate_cell(out, ds > 0 ? s->amount[S_IOR] / ds : 0);
    rate_cell(out, ds > 0 ? s->amount[S_IOW] / ds : 0);
    if (nh == 7 && s->gpu_w > 0) num_cell(out, "%.0f%%", s->gpu_sum / s->gpu_w);
    else if (nh == 7) prof__html_td_num(out, -1, "");
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  if (st->nsteps > MAX_STEP_ROWS)
    fprintf(out, "<p class=\"note\">%zu more steps are in the JSON report.</p>\n", st->nsteps - MAX_STEP_ROWS);
}

void prof__sec_resources_html(prof__an *an, void *vst, FILE *out) {
  res_st *st = vst;
  if (!st->seen) return;
  prof__html_section_begin(out, "resources", "Resources");
  facts(an, st, out);
  iv_chart(an, st, out, S_CPU, "Process CPU over time", "cores", 1);
  io_chart(an, st, out, S_IOR, PROF_RES_IO_READ, "Read rate over time (syscalls)");
  io_chart(an, st, out, S_IOW, PROF_RES_IO_WRITE, "Write rate over time (syscalls)");
  if (st->gpu_seen) iv_chart(an, st, out, S_GPU, "GPU utilisation over time (NVML, mean of the GPUs)", "%", 1);
  threads(st, out);
  steps(an, st, out);
  prof__html_section_end(out);
}
