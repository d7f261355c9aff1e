/* sec_gpu_html.c — the GPU section's panel of the HTML report and its
 * Chrome-export hook.
 *
 * The panel: devices, GPU time per step as stacked bars (kernels running,
 * idle waiting for the host, idle otherwise: together the step's wall
 * time), the idle split with communication kernels and their overlap
 * with compute kernels, and the priority breakdown, the top kernels
 * (calls, total, average, launch configuration, estimated occupancy),
 * copies by direction with bytes and bandwidth, and the ranges that
 * launched the GPU work. Shown only when the trace has GPU records.
 */
#include <stdlib.h>

#include "analyze/report/html_series.h"
#include "mlprof.h"
#include "analyze/sections/gpu/sec_gpu.h"

#define TOP_KERNELS 30
#define TOP_RANGES 15

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static void devices(prof__an *an, const gpu_summary *s, FILE *out) {
  if (!s->ndevices) return;
  static const char *const h[] = {"device", "name", "compute capability", "SMs", "memory", "peak allocated"};
  prof__html_table_begin(out, h, 6);
  for (size_t i = 0; i < s->ndevices; i++) {
    const gpu_device *d = &s->devices[i];
    char cc[24];
    snprintf(cc, sizeof cc, "%u.%u", d->cc_major, d->cc_minor);
    fputs("<tr>", out);
    prof__html_td_count(out, d->id);
    prof__html_td(out, prof__an_str(an, d->name));
    prof__html_td(out, cc);
    prof__html_td_count(out, d->sm_count);
    prof__html_td_bytes(out, (double)d->mem_bytes);
    prof__html_td_bytes(out, (double)d->mem_peak);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

/* Busy / idle-host / idle-other share of each step, in percent. */
static void util_chart(const gpu_summary *s, FILE *out) {
  if (s->whole_trace || !s->nwindows) return;
  size_t n = s->nwindows;
  double *v = malloc(n * 3 * sizeof *v);
  uint64_t *ids = malloc(n * sizeof *ids);
  if (!v || !ids) {
    free(v), free(ids);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const gpu_window *w = &s->windows[i];
    uint64_t wall = w->end - w->begin;
    v[i * 3] = 100 * share(w->busy_ns, wall);
    v[i * 3 + 1] = 100 * share(w->idle_host_ns, wall);
    v[i * 3 + 2] = 100 * share(w->idle_other_ns, wall);
    ids[i] = w->number;
  }
  static const char *const names[] = {"kernels running", "idle: waiting for the host", "idle: other"};
  static const char *const colors[] = {"#76b900", "#f28e2b", "#d5d5d5"};
  fputs("<h3>GPU utilisation per step</h3>\n", out);
  prof__chart c = {.title = "GPU busy and idle share per step", .unit = "%", .n = n, .nseries = 3, .v = v,
                   .series = names, .colors = colors, .ids = ids, .id_fmt = "step %llu", .peak = -1};
  prof__svg_bars(out, &c);
  free(v), free(ids);
}

static void time_row(FILE *out, const char *what, uint64_t ns, uint64_t wall) {
  fputs("<tr>", out);
  prof__html_td(out, what);
  prof__html_td_ns(out, ns);
  prof__html_td_pct(out, share(ns, wall));
  fputs("</tr>\n", out);
}

static void split(const gpu_summary *s, FILE *out) {
  const gpu_window *t = &s->total;
  uint64_t wall = t->end; /* total.end holds the summed wall time */
  fprintf(out, "<h3>Where the GPU time went (%s)</h3>\n", s->whole_trace ? "whole trace, no steps" : "all steps");
  static const char *const h[] = {"", "time", "share of wall time"};
  prof__html_table_begin(out, h, 3);
  time_row(out, "kernels running (busy)", t->busy_ns, wall);
  time_row(out, "idle: waiting for the host to launch", t->idle_host_ns, wall);
  time_row(out, "idle: other", t->idle_other_ns, wall);
  time_row(out, "memcpy (overlap with kernels included)", t->memcpy_ns, wall);
  time_row(out, "memset (overlap with kernels included)", t->memset_ns, wall);
  time_row(out, "synchronisation", t->sync_ns, wall);
  if (s->comm_kernels) {
    time_row(out, "communication kernels (NCCL/RCCL)", t->comm_kernel_ns, wall);
    time_row(out, "communication kernels overlapped with compute kernels", t->comm_overlap_ns, wall);
  }
  prof__html_table_end(out);
  if (s->comm_kernels)
    fprintf(out, "<p>%.1f%% of communication kernel time overlapped with compute kernels.</p>\n",
            100 * share(t->comm_overlap_ns, t->comm_kernel_ns));
  fputs("<h3>Step-time breakdown with GPU categories</h3>\n", out);
  static const char *const hb[] = {"category", "time", "share of wall time"};
  prof__html_table_begin(out, hb, 3);
  for (int b = 0; b < GPU_BD_COUNT; b++) time_row(out, prof__sec_gpu_bd_name(b), t->bd[b], wall);
  prof__html_table_end(out);
}

static void dims(FILE *out, const int32_t v[3]) {
  char b[48];
  snprintf(b, sizeof b, "%dx%dx%d", v[0], v[1], v[2]);
  prof__html_td_num(out, (double)v[0] * v[1] * v[2], b);
}

static void kernels(prof__an *an, const gpu_summary *s, FILE *out) {
  if (!s->nkstats) return;
  fprintf(out, "<h3>Top kernels by total time (%zu distinct)</h3>\n", s->nkstats);
  static const char *const h[] = {"kernel", "calls", "total", "avg", "min", "max", "% of kernel time",
                                  "grid", "block", "registers", "occupancy"};
  prof__html_table_begin(out, h, 11);
  for (size_t i = 0; i < s->nkstats && i < TOP_KERNELS; i++) {
    const gpu_kstat *k = &s->kstats[i];
    fputs("<tr>", out);
    prof__html_td(out, prof__an_str(an, k->name));
    prof__html_td_count(out, (double)k->calls);
    prof__html_td_ns(out, k->total_ns);
    prof__html_td_ns(out, k->calls ? k->total_ns / k->calls : 0);
    prof__html_td_ns(out, k->min_ns);
    prof__html_td_ns(out, k->max_ns);
    prof__html_td_pct(out, share(k->total_ns, s->kernel_ns));
    dims(out, k->grid);
    dims(out, k->block);
    prof__html_td_count(out, k->regs);
    if (k->occupancy >= 0) prof__html_td_pct(out, k->occupancy);
    else prof__html_td_num(out, -1, "?");
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  if (s->nkstats > TOP_KERNELS)
    fprintf(out, "<p class=\"note\">%zu more kernels are in the JSON report.</p>\n", s->nkstats - TOP_KERNELS);
}

static void copies(const gpu_summary *s, FILE *out) {
  if (!s->copies) return;
  fputs("<h3>Copies by direction</h3>\n", out);
  static const char *const h[] = {"direction", "copies", "bytes", "time", "bandwidth", "pageable", "pinned"};
  prof__html_table_begin(out, h, 7);
  for (int d = 0; d < PROF_GPU_COPY_COUNT; d++) {
    const gpu_copy *c = &s->copy[d];
    if (!c->count) continue;
    double gbps = c->ns ? (double)c->bytes / (double)c->ns : 0;
    char b[32];
    snprintf(b, sizeof b, "%.2f GB/s", gbps);
    fputs("<tr>", out);
    prof__html_td(out, prof__rec_gpu_copy_name(d));
    prof__html_td_count(out, (double)c->count);
    prof__html_td_bytes(out, (double)c->bytes);
    prof__html_td_ns(out, c->ns);
    prof__html_td_num(out, gbps, b);
    prof__html_td_count(out, (double)c->pageable);
    prof__html_td_count(out, (double)c->pinned);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

static void ranges(prof__an *an, const gpu_summary *s, FILE *out) {
  if (!s->nrstats) return;
  fputs("<h3>GPU time by launching range</h3>\n", out);
  static const char *const h[] = {"range", "kernels", "kernel time", "copies", "copy time"};
  prof__html_table_begin(out, h, 5);
  for (size_t i = 0; i < s->nrstats && i < TOP_RANGES; i++) {
    const gpu_rstat *r = &s->rstats[i];
    fputs("<tr>", out);
    prof__html_td(out, r->range ? prof__an_str(an, r->range) : "(no range)");
    prof__html_td_count(out, (double)r->kernels);
    prof__html_td_ns(out, r->kernel_ns);
    prof__html_td_count(out, (double)r->copies);
    prof__html_td_ns(out, r->copy_ns);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
}

void prof__sec_gpu_html(prof__an *an, void *st, FILE *out) {
  (void)st;
  const gpu_summary *s = prof__sec_gpu_summary(an);
  if (!s || !s->records) return;
  char a[32], b[32];
  prof__html_section_begin(out, "gpu", "GPU");
  const gpu_window *t = &s->total;
  fprintf(out, "<p>kernels: %llu (%s of kernel time); copies: %llu; sets: %llu. GPU busy %.1f%% of %s, idle "
               "waiting for the host %.1f%%.</p>\n",
          (unsigned long long)s->kernels, prof__an_fmt_ns(a, sizeof a, s->kernel_ns), (unsigned long long)s->copies,
          (unsigned long long)s->sets, 100 * share(t->busy_ns, t->end), prof__an_fmt_ns(b, sizeof b, t->end),
          100 * share(t->idle_host_ns, t->end));
  devices(an, s, out);
  util_chart(s, out);
  split(s, out);
  kernels(an, s, out);
  copies(s, out);
  ranges(an, s, out);
  if (s->dropped || s->bad_chunks)
    fprintf(out, "<p class=\"warn\">CUPTI dropped %llu records; %llu GPU chunks were unreadable.</p>\n",
            (unsigned long long)s->dropped, (unsigned long long)s->bad_chunks);
  prof__html_section_end(out);
}

void prof__sec_gpu_chrome_hook(prof__an *an, void *st, prof__json *j) {
  (void)st;
  const gpu_summary *s = prof__sec_gpu_summary(an);
  if (!s || !s->records) return;
  prof__sec_gpu_chrome(an, j, prof__chrome_base_ns(an), prof__chrome_pid(an));
}
