/* report_json.c — the machine-readable report ("mlprof.report/1").
 * docs/report-schema.md documents every key; keep the two in step.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"

static void json_kv_object(prof__json *j, const char *key, const prof__kv *kv, size_t n) {
  prof__json_key(j, key);
  prof__json_obj_begin(j);
  for (size_t i = 0; i < n; i++) prof__json_kstr(j, kv[i].key, kv[i].value);
  prof__json_obj_end(j);
}


/* "bound": what a trace written with MLPROF_MAX_MB kept and dropped; null
 * for a trace without bound. */
static void json_bound(prof__json *j, const prof__an *an) {
  prof__json_key(j, "bound");
  char note[768];
  if (!prof__an_bound_note(an, note, sizeof note)) {
    prof__json_null(j);
    return;
  }
  prof__json_obj_begin(j);
  prof__json_kuint(j, "max_bytes", an->bound_max_bytes);
  prof__json_kuint(j, "steps", prof__an_nall(an));
  prof__json_kuint(j, "steps_in_detail", an->nsteps);
  prof__json_kuint(j, "steps_summary_only", an->summary_only_steps);
  prof__json_key(j, "window_first_step");
  if (an->nsteps) prof__json_uint(j, an->steps[0].number);
  else prof__json_null(j);
  prof__json_kuint(j, "dropped_bytes", an->bound_dropped_bytes);
  prof__json_kuint(j, "dropped_chunks", an->bound_dropped_chunks);
  prof__json_kuint(j, "rewrites", an->bound_compactions);
  prof__json_kuint(j, "summary_level", an->summary_level);
  prof__json_kuint(j, "bad_summary_chunks", an->summary_bad_chunks);
  prof__json_kstr(j, "note", note);
  prof__json_obj_end(j);
}

static void json_trace(prof__an *an, prof__json *j) {
  prof__json_key(j, "trace");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "path", an->path);
  prof__json_kstr(j, "program", prof__an_header(an, "program"));
  long long pid = prof__an_pid(an);
  prof__json_key(j, "pid");
  if (pid >= 0) prof__json_int(j, pid);
  else prof__json_null(j);
  prof__json_kstr(j, "hostname", prof__an_header(an, "hostname"));
  prof__json_kstr(j, "cmdline", prof__an_header(an, "cmdline"));
  prof__json_kstr(j, "previous_trace", prof__an_header(an, "previous_trace")); /* an earlier image's */
  prof__json_kstr(j, "clock", prof__an_header(an, "clock"));
  prof__json_kstr(j, "version", prof__an_header(an, "version"));
  prof__json_kuint(j, "events", an->events);
  uint64_t recorded, own;
  if (prof__an_events_split(an, &recorded, &own)) {
    prof__json_kuint(j, "events_recorded", recorded);
    prof__json_kuint(j, "events_profiler", own);
  }
  prof__json_kuint(j, "lost_events", an->lost_events);
  prof__json_kuint(j, "chunks", an->chunks);
  prof__json_kuint(j, "threads", an->nthreads);
  prof__json_kuint(j, "first_ns", an->first_ns);
  prof__json_kuint(j, "last_ns", an->last_ns);
  prof__json_kuint(j, "duration_ns", an->last_ns - an->first_ns);
  prof__json_kbool(j, "complete", an->has_footer);
  prof__json_kbool(j, "truncated", an->truncated);
  prof__json_key(j, "truncation");
  if (an->truncated) prof__json_str(j, an->trunc_msg);
  else prof__json_null(j);
  prof__json_kuint(j, "misuse", an->misuse);
  json_bound(j, an);
  prof__json_key(j, "crash_signal"); /* "SIGABRT" etc. when the program crashed */
  if (prof__an_footer(an, "crash.signal")) prof__json_str(j, prof__an_footer(an, "crash.signal"));
  else prof__json_null(j);
  json_kv_object(j, "header", an->header, an->header_count);
  json_kv_object(j, "meta", an->meta, an->meta_count);
  json_kv_object(j, "footer", an->footer, an->footer_count);
  prof__json_obj_end(j);
}

static void json_threads(prof__an *an, prof__json *j) {
  prof__json_key(j, "threads");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < an->nthreads; i++) {
    const prof__thread_info *t = &an->threads[i];
    prof__json_obj_begin(j);
    prof__json_kuint(j, "tid", t->tid);
    prof__json_kstr(j, "name", t->name);
    prof__json_kuint(j, "events", t->events);
    prof__json_kuint(j, "lost_events", t->lost);
    prof__json_kbool(j, "exited", t->exited);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

/* Bucket values keyed by name; "other" includes "untracked". */
static void json_buckets(prof__json *j, const uint64_t bd[PROF_BD_COUNT]) {
  prof__json_obj_begin(j);
  for (int b = 0; b < PROF_BD_OTHER_RANGE; b++) prof__json_kuint(j, prof__an_bucket_name(b), bd[b]);
  prof__json_kuint(j, "other", bd[PROF_BD_OTHER_RANGE] + bd[PROF_BD_UNTRACKED]);
  prof__json_kuint(j, "untracked", bd[PROF_BD_UNTRACKED]);
  prof__json_obj_end(j);
}

static void json_stats(prof__json *j, const prof__step_stats *st) {
  prof__json_kuint(j, "count", st->count);
  prof__json_kuint(j, "total_ns", st->total_ns);
  prof__json_kuint(j, "mean_ns", st->mean_ns);
  prof__json_kuint(j, "median_ns", st->median_ns);
  prof__json_kuint(j, "p95_ns", st->p95_ns);
  prof__json_kuint(j, "min_ns", st->min_ns);
  prof__json_kuint(j, "max_ns", st->max_ns);
}

/* "cpu" and "memory" of the steps object, when any step knows them. */
static void json_step_res(prof__an *an, prof__json *j) {
  prof__step_res r;
  prof__an_step_res(an, &r);
  if (r.cpu_steps) {
    prof__json_key(j, "cpu");
    prof__json_obj_begin(j);
    prof__json_kuint(j, "steps", r.cpu_steps);
    prof__json_kuint(j, "cpu_ns", r.cpu_ns);
    prof__json_kuint(j, "wall_ns", r.cpu_wall_ns);
    prof__json_knum(j, "share", r.cpu_wall_ns ? (double)r.cpu_ns / (double)r.cpu_wall_ns : 0.0);
    prof__json_obj_end(j);
  }
  if (r.rss_steps || r.live_steps) {
    prof__json_key(j, "memory");
    prof__json_obj_begin(j);
    prof__json_kuint(j, "rss_steps", r.rss_steps);
    if (r.rss_steps) {
      prof__json_kuint(j, "peak_rss_bytes", r.rss_peak_bytes);
      prof__json_kuint(j, "peak_rss_step", r.rss_peak_step);
    }
    prof__json_kuint(j, "live_steps", r.live_steps);
    if (r.live_steps) {
      prof__json_kuint(j, "peak_live_bytes", r.live_peak_bytes);
      prof__json_kuint(j, "peak_live_step", r.live_peak_step);
    }
    prof__json_obj_end(j);
  }
}

static void json_steps(prof__an *an, prof__json *j) {
  prof__json_key(j, "steps");
  prof__json_obj_begin(j);
  json_stats(j, &an->step_stats);
  prof__json_kbool(j, "warmup_outlier", prof__an_nall(an) && prof__an_run_steps(an)[0].warmup_outlier);
  prof__json_key(j, "steady");
  prof__json_obj_begin(j);
  json_stats(j, &an->steady_stats);
  prof__json_obj_end(j);
  prof__json_kuint(j, "unfinished", an->unfinished_steps);
  if (an->unfinished_steps) {
    prof__json_kuint(j, "unfinished_last_step", an->unfinished_last_number);
    prof__json_kuint(j, "unfinished_last_open_ns", an->unfinished_last_open_ns);
  }
  prof__json_key(j, "per_step");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < prof__an_nall(an); i++) {
    const prof__step *s = &prof__an_run_steps(an)[i];
    prof__json_obj_begin(j);
    prof__json_kuint(j, "number", s->number);
    prof__json_kuint(j, "tid", s->tid);
    prof__json_kuint(j, "begin_ns", s->begin_ns);
    prof__json_kuint(j, "end_ns", s->end_ns);
    prof__json_kuint(j, "duration_ns", s->end_ns - s->begin_ns);
    prof__json_kbool(j, "warmup_outlier", s->warmup_outlier);
    prof__json_key(j, "breakdown");
    json_buckets(j, s->bd_ns);
    if (s->have & PROF_STEP_HAS_CPU) prof__json_kuint(j, "cpu_ns", s->cpu_ns);
    if (s->have & PROF_STEP_HAS_RSS) prof__json_kuint(j, "rss_peak_bytes", s->rss_peak_bytes);
    if (s->have & PROF_STEP_HAS_LIVE) prof__json_kuint(j, "live_peak_bytes", s->live_peak_bytes);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  json_step_res(an, j);
  prof__json_obj_end(j);
}

static void json_breakdown(prof__an *an, prof__json *j) {
  uint64_t bd[PROF_BD_COUNT];
  prof__an_bd_total(an, bd);
  prof__json_key(j, "breakdown");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "total_ns", an->step_stats.total_ns);
  prof__json_key(j, "ns");
  json_buckets(j, bd);
  prof__json_key(j, "share");
  prof__json_obj_begin(j);
  for (int b = 0; b < PROF_BD_OTHER_RANGE; b++) prof__json_knum(j, prof__an_bucket_name(b), prof__an_share(an, bd[b]));
  prof__json_knum(j, "other", prof__an_share(an, bd[PROF_BD_OTHER_RANGE] + bd[PROF_BD_UNTRACKED]));
  prof__json_knum(j, "untracked", prof__an_share(an, bd[PROF_BD_UNTRACKED]));
  prof__json_obj_end(j);
  uint64_t lost = prof__an_step_lost(an);
  prof__json_kuint(j, "lost_events", lost); /* on the threads running the steps */
  prof__json_key(j, "withheld");
  prof__json_arr_begin(j);
  static const char *const withheld[] = {PROF_STEP_WITHHELD};
  for (size_t i = 0; lost && i < sizeof withheld / sizeof withheld[0]; i++) prof__json_str(j, withheld[i]);
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void json_range(prof__an *an, prof__json *j, const prof__range_stat *r) {
  prof__json_obj_begin(j);
  prof__json_kstr(j, "name", prof__an_str(an, r->name));
  prof__json_kstr(j, "category", prof__an_cat_name(r->cat));
  prof__json_kuint(j, "count", r->count);
  prof__json_kuint(j, "total_ns", r->total_ns);
  prof__json_kuint(j, "self_ns", r->self_ns);
  prof__json_kuint(j, "avg_ns", r->count ? r->total_ns / r->count : 0);
  prof__json_kuint(j, "min_ns", r->min_ns);
  prof__json_kuint(j, "max_ns", r->max_ns);
  prof__json_kuint(j, "step_self_ns", r->in_step_self_ns);
  prof__json_knum(j, "step_share", prof__an_detail_share(an, r->in_step_self_ns));
  prof__json_obj_end(j);
}

static void json_ranges(prof__an *an, prof__json *j) {
  size_t *idx = prof__ranges_by_self(an);
  prof__json_key(j, "ranges");
  prof__json_arr_begin(j);
  for (size_t i = 0; idx && i < an->nranges; i++) json_range(an, j, &an->ranges[idx[i]]);
  prof__json_arr_end(j);
  free(idx);
}

void prof__json_findings(prof__json *j, const prof__finding *fs, size_t n) {
  prof__json_key(j, "findings");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < n; i++) {
    const prof__finding *f = &fs[i];
    prof__json_obj_begin(j);
    prof__json_kstr(j, "id", f->id);
    prof__json_kstr(j, "severity", f->severity);
    prof__json_kstr(j, "title", f->title);
    prof__json_kstr(j, "measured", f->measured);
    prof__json_kstr(j, "recommendation", f->recommendation);
    prof__json_knum(j, "value", f->value);
    for (int k = 0; k < f->nkeys; k++) {
      if (f->keys[k].is_num) prof__json_knum(j, f->keys[k].key, f->keys[k].num);
      else prof__json_kstr(j, f->keys[k].key, f->keys[k].str);
    }
    if (f->has_saving) { /* performance findings: the predicted saving (docs/report-schema.md) */
      prof__json_kuint(j, "saving_ns", f->saving_ns);
      prof__json_knum(j, "saving_pct", f->saving_pct);
      prof__json_kstr(j, "saving_model", f->saving_model);
      prof__json_kstr(j, "saving_confidence", prof__an_confidence_label(f->saving_conf));
    }
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_anomalies(prof__an *an, prof__json *j) {
  prof__json_key(j, "anomalies");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "misuse", an->misuse);
  prof__json_kuint(j, "unmatched_range_ends", an->unmatched_range_ends);
  prof__json_kuint(j, "unclosed_ranges", an->unclosed_ranges);
  prof__json_kuint(j, "dropped_ranges", an->dropped_ranges);
  prof__json_kuint(j, "unmatched_step_ends", an->unmatched_step_ends);
  prof__json_kuint(j, "unfinished_steps", an->unfinished_steps);
  prof__json_obj_end(j);
}

/* Is the top-level part `name` wanted? (parts NULL: all of them) */
static int wanted(const char *const *parts, const char *name) {
  if (!parts) return 1;
  for (size_t i = 0; parts[i]; i++)
    if (strcmp(parts[i], name) == 0) return 1;
  return 0;
}

int prof__report_json_parts(prof__an *an, FILE *out, const char *const *parts) {
  prof__json j;
  prof__json_init(&j, out, 1);
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "schema", "mlprof.report/1");
  prof__json_key(&j, "generator");
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "name", "mlprof");
  prof__json_kstr(&j, "version", MLPROF_VERSION_STRING);
  prof__json_obj_end(&j);
  if (wanted(parts, "trace")) prof__json_kstr(&j, "written_by", an->written_by);
  if (wanted(parts, "trace")) json_trace(an, &j);
  if (wanted(parts, "threads")) json_threads(an, &j);
  if (wanted(parts, "steps")) json_steps(an, &j);
  if (wanted(parts, "breakdown")) json_breakdown(an, &j);
  if (wanted(parts, "ranges")) json_ranges(an, &j);
  if (wanted(parts, "findings")) prof__json_findings(&j, an->findings, an->nfindings);
  if (wanted(parts, "anomalies")) json_anomalies(an, &j);
  for (size_t i = 0; i < prof__nsections; i++)
    if (prof__sections[i]->json && wanted(parts, prof__sections[i]->name))
      prof__sections[i]->json(an, an->section_state[i], &j);
  prof__json_obj_end(&j);
  return ferror(out) ? PROF_EIO : 0;
}

int prof__report_json(prof__an *an, FILE *out) { return prof__report_json_parts(an, out, NULL); }
