/* sec_gpu_report.c — the GPU section's text and JSON ("gpu") output.
 * docs/gpu.md lists every JSON key; keep the two in step.
 */
#include <string.h>

#include "mlprof.h"
#include "analyze/sections/gpu/sec_gpu.h"
#include "analyze/util/termsafe.h"

#define TEXT_TOP 10
#define JSON_TOP 50
#define NS(buf, v) prof__an_fmt_ns(buf, sizeof buf, v)

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }
static uint64_t wall_of(const gpu_window *w) { return w->end - w->begin; }

static double gbps(const gpu_copy *c) { return c->ns ? (double)c->bytes / (double)c->ns : 0.0; }

/* ---- text ---------------------------------------------------------------- */

static void text_devices(prof__an *an, const gpu_summary *s, FILE *out) {
  for (size_t i = 0; i < s->ndevices; i++) {
    const gpu_device *d = &s->devices[i];
    char nm[PROF_TERM_NAME];
    fprintf(out, "  device %u: %s, cc %u.%u, %u SMs, %llu MiB, peak allocated %llu MiB\n", d->id,
            prof__term_name(nm, sizeof nm, prof__an_str(an, d->name)), d->cc_major, d->cc_minor, d->sm_count,
            (unsigned long long)(d->mem_bytes >> 20), (unsigned long long)(d->mem_peak >> 20));
  }
}

static void text_totals(const gpu_summary *s, FILE *out) {
  char a[32], b[32], c[32], d[32];
  const gpu_window *t = &s->total;
  uint64_t wall = t->end;
  fprintf(out, "  %s: %s; GPU busy (kernels) %.1f%%, memcpy %s, memset %s, sync %s\n",
          s->whole_trace ? "whole trace (no steps)" : "steps", NS(a, wall), pct(t->busy_ns, wall),
          NS(b, t->memcpy_ns), NS(c, t->memset_ns), NS(d, t->sync_ns));
  fprintf(out, "  GPU idle: %.1f%% waiting for the host, %.1f%% other", pct(t->idle_host_ns, wall),
          pct(t->idle_other_ns, wall));
  if (t->idle_unattributed_ns)
    fprintf(out, ", %.1f%% before kernels without a launch record", pct(t->idle_unattributed_ns, wall));
  fputc('\n', out);
  fputs("  breakdown:", out);
  for (int i = 0; i < GPU_BD_COUNT; i++) fprintf(out, " %s %.1f%%", prof__sec_gpu_bd_name(i), pct(t->bd[i], wall));
  fputc('\n', out);
  if (s->comm_kernels)
    fprintf(out, "  communication kernels %s, %.1f%% overlapped with compute\n", NS(a, t->comm_kernel_ns),
            pct(t->comm_overlap_ns, t->comm_kernel_ns));
}

static void text_steps(const gpu_summary *s, FILE *out) {
  if (s->whole_trace) return;
  size_t n = s->nwindows < 20 ? s->nwindows : 20;
  char a[32];
  fprintf(out, "  per step (%zu of %zu):\n", n, s->nwindows);
  for (size_t i = 0; i < n; i++) {
    const gpu_window *w = &s->windows[i];
    uint64_t wall = wall_of(w);
    fprintf(out, "    step %-6llu %10s busy %5.1f%% copy %5.1f%% idle host %5.1f%% other %5.1f%% kernels %llu\n",
            (unsigned long long)w->number, NS(a, wall), pct(w->busy_ns, wall), pct(w->memcpy_ns, wall),
            pct(w->idle_host_ns, wall), pct(w->idle_other_ns, wall), (unsigned long long)w->kernels);
  }
}

static void text_kernels(prof__an *an, const gpu_summary *s, FILE *out) {
  char t[32], a[32];
  if (!s->nkstats) return;
  fprintf(out, "  top kernels (%zu distinct):\n", s->nkstats);
  for (size_t i = 0; i < s->nkstats && i < TEXT_TOP; i++) {
    const gpu_kstat *k = &s->kstats[i];
    char nm[PROF_TERM_NAME];
    fprintf(out, "    %-40.40s %8llu calls %10s avg %10s %5.1f%%  grid %dx%dx%d block %dx%dx%d regs %u",
            prof__term_name(nm, sizeof nm, prof__an_str(an, k->name)), (unsigned long long)k->calls, NS(t, k->total_ns),
            NS(a, k->calls ? k->total_ns / k->calls : 0), pct(k->total_ns, s->kernel_ns), k->grid[0], k->grid[1],
            k->grid[2], k->block[0], k->block[1], k->block[2], k->regs);
    if (k->occupancy >= 0) fprintf(out, " occ %.0f%%", 100 * k->occupancy);
    fputc('\n', out);
  }
}

static void text_ranges(prof__an *an, const gpu_summary *s, FILE *out) {
  char t[32];
  if (!s->nrstats) return;
  fputs("  GPU time by launching range:\n", out);
  for (size_t i = 0; i < s->nrstats && i < TEXT_TOP; i++) {
    const gpu_rstat *r = &s->rstats[i];
    char nm[PROF_TERM_NAME];
    fprintf(out, "    %-32.32s launched %llu kernels, %s of GPU time (%llu copies)\n",
            prof__term_name(nm, sizeof nm, r->range ? prof__an_str(an, r->range) : "(no range)"), (unsigned long long)r->kernels,
            NS(t, r->kernel_ns + r->copy_ns), (unsigned long long)r->copies);
  }
}

static void text_copies(const gpu_summary *s, FILE *out) {
  char t[32];
  if (!s->copies) return;
  fputs("  copies:\n", out);
  for (int d = 0; d < PROF_GPU_COPY_COUNT; d++) {
    const gpu_copy *c = &s->copy[d];
    if (!c->count) continue;
    fprintf(out, "    %-5s %8llu copies %12llu bytes %10s %7.2f GB/s (pageable %llu, pinned %llu)\n",
            prof__rec_gpu_copy_name(d), (unsigned long long)c->count, (unsigned long long)c->bytes, NS(t, c->ns),
            gbps(c), (unsigned long long)c->pageable, (unsigned long long)c->pinned);
  }
}

void prof__sec_gpu_text(prof__an *an, void *st, FILE *out) {
  (void)st;
  const gpu_summary *s = prof__sec_gpu_summary(an);
  if (!s || !s->have_data) return;
  fputs("GPU\n", out);
  if (!s->records) {
    char a[PROF_TERM_NAME], b[PROF_TERM_NAME];
    fprintf(out, "  no GPU data: %s%s%s\n\n", prof__term_name(a, sizeof a, s->status ? s->status : "?"),
            s->status_detail ? " — " : "", prof__term_name(b, sizeof b, s->status_detail ? s->status_detail : ""));
    return;
  }
  text_devices(an, s, out);
  text_totals(s, out);
  text_steps(s, out);
  text_kernels(an, s, out);
  text_ranges(an, s, out);
  text_copies(s, out);
  if (s->dropped || s->bad_chunks)
    fprintf(out, "  CUPTI dropped %llu records; %llu unreadable GPU chunks\n", (unsigned long long)s->dropped,
            (unsigned long long)s->bad_chunks);
  fputc('\n', out);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_bd(prof__json *j, const uint64_t bd[GPU_BD_COUNT]) {
  prof__json_key(j, "breakdown_ns");
  prof__json_obj_begin(j);
  for (int i = 0; i < GPU_BD_COUNT; i++) prof__json_kuint(j, prof__sec_gpu_bd_name(i), bd[i]);
  prof__json_obj_end(j);
}

static void json_window(prof__json *j, const gpu_window *w, uint64_t wall, int with_number) {
  prof__json_obj_begin(j);
  if (with_number) prof__json_kuint(j, "step", w->number);
  prof__json_kuint(j, "wall_ns", wall);
  prof__json_kuint(j, "busy_ns", w->busy_ns);
  prof__json_knum(j, "busy_pct", pct(w->busy_ns, wall));
  prof__json_kuint(j, "memcpy_ns", w->memcpy_ns);
  prof__json_kuint(j, "memset_ns", w->memset_ns);
  prof__json_kuint(j, "idle_host_wait_ns", w->idle_host_ns);
  prof__json_kuint(j, "idle_other_ns", w->idle_other_ns);
  prof__json_kuint(j, "idle_unattributed_ns", w->idle_unattributed_ns);
  prof__json_kuint(j, "sync_ns", w->sync_ns);
  prof__json_kuint(j, "kernels", w->kernels);
  prof__json_kuint(j, "comm_kernel_ns", w->comm_kernel_ns);
  prof__json_kuint(j, "comm_overlap_ns", w->comm_overlap_ns);
  json_bd(j, w->bd);
  prof__json_obj_end(j);
}

static void json_ints(prof__json *j, const char *key, const int32_t v[3]) {
  prof__json_key(j, key);
  prof__json_arr_begin(j);
  for (int i = 0; i < 3; i++) prof__json_int(j, v[i]);
  prof__json_arr_end(j);
}

static void json_kernels(prof__an *an, const gpu_summary *s, prof__json *j) {
  prof__json_key(j, "top_kernels");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nkstats && i < JSON_TOP; i++) {
    const gpu_kstat *k = &s->kstats[i];
    prof__json_obj_begin(j);
    prof__json_kstr(j, "name", prof__an_str(an, k->name));
    prof__json_kuint(j, "calls", k->calls);
    prof__json_kuint(j, "total_ns", k->total_ns);
    prof__json_kuint(j, "avg_ns", k->calls ? k->total_ns / k->calls : 0);
    prof__json_kuint(j, "min_ns", k->min_ns);
    prof__json_kuint(j, "max_ns", k->max_ns);
    json_ints(j, "grid", k->grid);
    json_ints(j, "block", k->block);
    prof__json_kuint(j, "registers", k->regs);
    prof__json_kuint(j, "shared_memory", k->smem);
    prof__json_key(j, "occupancy");
    if (k->occupancy >= 0) prof__json_num(j, k->occupancy);
    else prof__json_null(j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_ranges(prof__an *an, const gpu_summary *s, prof__json *j) {
  prof__json_key(j, "top_ranges");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nrstats && i < JSON_TOP; i++) {
    const gpu_rstat *r = &s->rstats[i];
    prof__json_obj_begin(j);
    prof__json_key(j, "range");
    if (r->range) prof__json_str(j, prof__an_str(an, r->range));
    else prof__json_null(j);
    prof__json_kuint(j, "kernels", r->kernels);
    prof__json_kuint(j, "kernel_ns", r->kernel_ns);
    prof__json_kuint(j, "copies", r->copies);
    prof__json_kuint(j, "copy_ns", r->copy_ns);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_copies(const gpu_summary *s, prof__json *j) {
  uint64_t all = 0;
  for (int d = 0; d < PROF_GPU_COPY_COUNT; d++) all += s->copy[d].ns;
  prof__json_key(j, "copies");
  prof__json_obj_begin(j);
  for (int d = 0; d < PROF_GPU_COPY_COUNT; d++) {
    const gpu_copy *c = &s->copy[d];
    prof__json_key(j, prof__rec_gpu_copy_name(d));
    prof__json_obj_begin(j);
    prof__json_kuint(j, "count", c->count);
    prof__json_kuint(j, "bytes", c->bytes);
    prof__json_kuint(j, "ns", c->ns);
    prof__json_knum(j, "gb_per_s", gbps(c));
    prof__json_kuint(j, "pageable", c->pageable);
    prof__json_kuint(j, "pinned", c->pinned);
    prof__json_obj_end(j);
  }
  prof__json_knum(j, "h2d_share", all ? (double)s->copy[PROF_GPU_COPY_H2D].ns / (double)all : 0.0);
  prof__json_knum(j, "d2h_share", all ? (double)s->copy[PROF_GPU_COPY_D2H].ns / (double)all : 0.0);
  prof__json_obj_end(j);
}

static void json_devices(prof__an *an, const gpu_summary *s, prof__json *j) {
  prof__json_key(j, "devices");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->ndevices; i++) {
    const gpu_device *d = &s->devices[i];
    prof__json_obj_begin(j);
    prof__json_kuint(j, "id", d->id);
    prof__json_kstr(j, "name", prof__an_str(an, d->name));
    char cc[24];
    snprintf(cc, sizeof cc, "%u.%u", d->cc_major, d->cc_minor);
    prof__json_kstr(j, "compute_capability", cc);
    prof__json_kuint(j, "sm_count", d->sm_count);
    prof__json_kuint(j, "memory_bytes", d->mem_bytes);
    prof__json_kuint(j, "max_threads_per_sm", d->max_threads_per_sm);
    prof__json_kuint(j, "memory_peak_bytes", d->mem_peak);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_counts(const gpu_summary *s, prof__json *j) {
  prof__json_key(j, "records");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "total", s->records);
  prof__json_kuint(j, "kernels", s->kernels);
  prof__json_kuint(j, "comm_kernels", s->comm_kernels);
  prof__json_kuint(j, "memcpy", s->copies);
  prof__json_kuint(j, "memset", s->sets);
  prof__json_kuint(j, "sync", s->syncs);
  prof__json_kuint(j, "api_calls", s->api_calls);
  prof__json_kuint(j, "overhead", s->overheads);
  prof__json_kuint(j, "dropped", s->dropped);
  prof__json_kuint(j, "bad_chunks", s->bad_chunks);
  prof__json_kuint(j, "kernels_unattributed", s->kernels_unattributed);
  prof__json_obj_end(j);
  prof__json_kuint(j, "kernel_ns", s->kernel_ns);
  prof__json_kuint(j, "api_ns", s->api_ns);
  prof__json_kuint(j, "overhead_ns", s->overhead_ns);
  prof__json_knum(j, "fp32_matmul_share", s->fp32_share);
}

void prof__sec_gpu_json(prof__an *an, void *st, prof__json *j) {
  (void)st;
  const gpu_summary *s = prof__sec_gpu_summary(an);
  if (!s || !s->have_data) return;
  prof__json_key(j, "gpu");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "status", s->status ? s->status : (s->records ? "ok" : "unknown"));
  prof__json_kstr(j, "status_detail", s->status_detail);
  json_counts(s, j);
  json_devices(an, s, j);
  prof__json_kbool(j, "whole_trace", s->whole_trace);
  prof__json_key(j, "total");
  json_window(j, &s->total, s->total.end, 0);
  prof__json_key(j, "busy_by_device"); /* each device's own busy time: one device idle is not hidden */
  prof__json_arr_begin(j);
  for (size_t d = 0; d < s->nbusy_devices; d++) {
    prof__json_obj_begin(j);
    prof__json_kuint(j, "device", s->busy_devices[d]);
    prof__json_kuint(j, "busy_ns", s->total.busy_ns_dev[d]);
    prof__json_knum(j, "busy_pct", pct(s->total.busy_ns_dev[d], s->total.end));
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_key(j, "steps");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nwindows && !s->whole_trace; i++)
    json_window(j, &s->windows[i], wall_of(&s->windows[i]), 1);
  prof__json_arr_end(j);
  json_kernels(an, s, j);
  json_ranges(an, s, j);
  json_copies(s, j);
  prof__json_key(j, "sync_ns_by_type");
  prof__json_obj_begin(j);
  static const char *const st_names[5] = {"unknown", "event_synchronize", "stream_wait_event",
                                          "stream_synchronize", "context_synchronize"};
  for (int i = 0; i < 5; i++) prof__json_kuint(j, st_names[i], s->sync_by_type[i]);
  prof__json_obj_end(j);
  prof__json_obj_end(j);
}
