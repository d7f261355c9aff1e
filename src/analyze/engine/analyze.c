/* analyze.c — runs an analysis: reads the trace once (twice when a section
 * asks for a second pass), feeds every record to the core model and to the
 * sections, then derives findings. Also the small accessors of analyze.h.
 */
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"
#include "analyze/engine/an_internal.h"
#include "trace/rec_stepsum.h"
#include "trace/settings.h"

/* Progress is shown only for traces at least this large, on a terminal. */
#define AN_PROGRESS_MIN_BYTES (64ull << 20)

void prof__an_progress_start(prof__an *an, int pass, prof__an_progress *pr) {
  pr->on = !an->quiet && isatty(2) && prof__reader_size(an->reader) >= AN_PROGRESS_MIN_BYTES;
  pr->last_pct = -1;
  pr->pass = pass;
}

void prof__an_progress_show(prof__an *an, prof__an_progress *pr, uint64_t off) {
  uint64_t size = prof__reader_size(an->reader);
  int pct = size ? (int)(off * 100 / size) : 100;
  if (pct == pr->last_pct) return;
  pr->last_pct = pct;
  fprintf(stderr, "\rmlprof: reading trace%s %llu / %llu MiB (%d%%)", pr->pass == 2 ? " (pass 2)" : "",
          (unsigned long long)(off >> 20), (unsigned long long)(size >> 20), pct);
  fflush(stderr);
}

void prof__an_progress_done(prof__an_progress *pr) {
  if (pr->on && pr->last_pct >= 0) fputs("\r\033[K", stderr);
}

void prof__an_dispatch_build(const prof__an *an, int pass, int which, prof__an_dispatch *d) {
  memset(d, 0, sizeof *d);
  size_t nh = 0;
  for (size_t i = 0; i < prof__nsections && nh < 31; i++) {
    const prof__section *s = prof__sections[i];
    prof__an_hook f = pass == 1 ? s->record : s->record2;
    if (f == NULL) continue;
    int detached = pass == 1 && s->detached;
    if ((which == AN_HOOKS_MAIN && detached) || (which == AN_HOOKS_DETACHED && !detached)) continue;
    uint64_t mask = s->event_mask ? s->event_mask : ~0ull;
    if (pass == 1 && s->event_mask_now && !detached) mask &= s->event_mask_now(an, an->section_state[i]);
    d->fn[nh] = f;
    d->st[nh] = an->section_state[i];
    if (which == AN_HOOKS_DETACHED && s->record_events) { /* its events a batch at a time */
      d->batch_fn[d->nbatch] = s->record_events;
      d->batch_st[d->nbatch++] = an->section_state[i];
      mask = 0;
    }
    for (int t = 0; t < 64; t++)
      if (mask & PROF_EVMASK(t)) d->by_type[t].idx[d->by_type[t].n++] = (uint8_t)nh;
    d->per_event |= mask != 0;
    d->other.idx[d->other.n++] = (uint8_t)nh;
    nh++;
  }
}

/* One pass over the records on this thread. Returns the reader's final
 * status (0 at a clean end, negative error). */
static int an_pass_serial(an_priv *p, int pass) {
  prof__an *an = &p->pub;
  prof__an_dispatch d;
  prof__an_dispatch_build(an, pass, AN_HOOKS_ALL, &d);
  prof__an_progress pr;
  prof__an_progress_start(an, pass, &pr);
  prof__rec rec;
  memset(&rec, 0, sizeof rec);
  uint64_t n = 0;
  int rc;
  while ((rc = prof__reader_next(an->reader, &rec)) == 1) {
    if (pass == 1) prof__an_model_record(p, &rec);
    /* Events go only to the sections that asked for their type. */
    prof__an_dispatch_rec(an, &d, &rec);
    if (rec.kind != PROF_REC_EVENT) prof__an_dispatch_check(p, pass, AN_HOOKS_ALL, &d);
    if (pr.on && (++n & 0xffff) == 0) prof__an_progress_show(an, &pr, prof__reader_offset(an->reader));
  }
  prof__an_progress_done(&pr);
  return rc;
}

int prof__an_threads(void) {
  const char *v = prof__env("ANALYZE_THREADS");
  if (v && strcmp(v, "1") == 0) return 1;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < 2) return 1;
  return 2;
}

/* One pass: with a decode thread when two CPUs are there for it, else (or
 * when the thread cannot be started) serially; the same records reach the
 * same hooks in the same order either way. */
static int an_pass(an_priv *p, int pass) {
  if (p->threads > 1) {
    int rc = prof__an_pass_piped(p, pass);
    if (rc != 1) return rc;
    p->threads = 1; /* no thread: serial from now on */
  }
  return an_pass_serial(p, pass);
}

static int sections_init(prof__an *an) {
  an->section_state = calloc(prof__nsections + 1, sizeof *an->section_state);
  if (!an->section_state) return PROF_ENOMEM;
  for (size_t i = 0; i < prof__nsections; i++) {
    size_t sz = prof__sections[i]->state_size;
    an->section_state[i] = calloc(1, sz ? sz : 1);
    if (!an->section_state[i]) return PROF_ENOMEM;
  }
  return 0;
}

static int need_second_pass(void) {
  for (size_t i = 0; i < prof__nsections; i++)
    if (prof__sections[i]->record2) return 1;
  return 0;
}

static void sections_finish(prof__an *an) {
  for (size_t i = 0; i < prof__nsections; i++)
    if (prof__sections[i]->finish) prof__sections[i]->finish(an, an->section_state[i]);
}

/* Read the trace, build the model, derive findings. */
static int an_analyze(an_priv *p, char *err) {
  prof__an *an = &p->pub;
  int rc = an_pass(p, 1);
  if (rc < 0 && rc != PROF_ETRUNC) {
    snprintf(err, PROF_ERR_MAX, "%s", prof__reader_error(an->reader));
    return rc;
  }
  if (rc == PROF_ETRUNC) {
    an->truncated = 1;
    snprintf(an->trunc_msg, sizeof an->trunc_msg, "%s", prof__reader_error(an->reader));
  }
  an->has_footer = prof__reader_has_footer(an->reader);
  an->chunks = prof__reader_chunks(an->reader);
  prof__an_model_finish(p);
  if (need_second_pass()) {
    rc = prof__reader_rewind(an->reader);
    if (rc == 0) rc = an_pass(p, 2);
    if (rc < 0 && rc != PROF_ETRUNC) {
      snprintf(err, PROF_ERR_MAX, "second pass: %s", prof__reader_error(an->reader));
      return rc;
    }
  }
  prof__findings_core(an);
  sections_finish(an);
  prof__findings_sort(an);
  if (p->oom) {
    snprintf(err, PROF_ERR_MAX, "out of memory while analyzing '%s'", an->path);
    return PROF_ENOMEM;
  }
  return 0;
}

int prof__an_run_opts(prof__an **out, const char *path, int quiet, char *err) {
  *out = NULL;
  err[0] = 0;
  an_priv *p = calloc(1, sizeof *p);
  char *copy = path ? strdup(path) : NULL;
  if (!p || !copy) {
    free(p);
    free(copy);
    snprintf(err, PROF_ERR_MAX, path ? "out of memory" : "no trace path given");
    return path ? PROF_ENOMEM : PROF_EINVAL;
  }
  prof__an *an = &p->pub;
  an->path = copy;
  an->quiet = quiet;
  an->first_ns = UINT64_MAX;
  p->last_ti = SIZE_MAX;
  p->threads = prof__an_threads();
  int rc = prof__reader_open(&an->reader, path, err);
  if (rc == 0) {
    an->header = prof__reader_header(an->reader);
    an->header_count = prof__reader_header_count(an->reader);
    rc = sections_init(an);
    if (rc) snprintf(err, PROF_ERR_MAX, "out of memory");
  }
  if (rc == 0) rc = an_analyze(p, err);
  if (rc < 0) {
    prof__an_free(an);
    return rc;
  }
  *out = an;
  return 0;
}

int prof__an_run(prof__an **out, const char *path, char *err) {
  return prof__an_run_opts(out, path, 0, err);
}

void prof__an_free(prof__an *an) {
  if (!an) return;
  an_priv *p = an_priv_of(an);
  if (an->section_state) {
    for (size_t i = 0; i < prof__nsections; i++) {
      if (an->section_state[i] && prof__sections[i]->destroy)
        prof__sections[i]->destroy(an, an->section_state[i]);
      free(an->section_state[i]);
    }
    free(an->section_state);
  }
  for (size_t i = 0; i < an->nfindings; i++) {
    free(an->findings[i].title);
    free(an->findings[i].measured);
    free(an->findings[i].recommendation);
  }
  free(an->findings);
  prof__an_model_free(p);
  if (an->reader) prof__reader_close(an->reader);
  free((char *)an->path);
  free(p);
}

/* ---- accessors ---------------------------------------------------------- */

void prof__an_dispatch_again(prof__an *an) { an_priv_of(an)->redispatch = 1; }

const char *prof__an_header(const prof__an *an, const char *key) {
  for (size_t i = 0; i < an->header_count; i++)
    if (an->header[i].key && strcmp(an->header[i].key, key) == 0) return an->header[i].value;
  return NULL;
}

const char *prof__an_meta(const prof__an *an, const char *key) {
  const char *v = NULL; /* the last pair wins */
  for (size_t i = 0; i < an->meta_count; i++)
    if (an->meta[i].key && strcmp(an->meta[i].key, key) == 0) v = an->meta[i].value;
  return v;
}

double prof__an_rss_peak(const prof__an *an, double sampled) {
  const char *v = prof__an_meta(an, "res.rss_hwm_bytes");
  double hwm = v ? strtod(v, NULL) : 0;
  return hwm > 0 && hwm > sampled ? hwm : sampled;
}

const char *prof__an_footer(const prof__an *an, const char *key) {
  const char *v = NULL; /* the last pair wins */
  for (size_t i = 0; i < an->footer_count; i++)
    if (strcmp(an->footer[i].key, key) == 0) v = an->footer[i].value;
  return v;
}

uint64_t prof__an_footer_u64(const prof__an *an, const char *key) {
  const char *v = prof__an_footer(an, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

long prof__an_step_at(const prof__an *an, uint64_t ts_ns) {
  size_t lo = 0, hi = an->nsteps; /* first step with begin > ts */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (an->steps[mid].begin_ns <= ts_ns) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const prof__step *s = &an->steps[lo - 1];
  return ts_ns < s->end_ns ? (long)(lo - 1) : -1;
}

uint64_t prof__an_step_total_ns(const prof__an *an) {
  uint64_t t = 0;
  for (size_t i = 0; i < an->nsteps; i++) t += an->steps[i].end_ns - an->steps[i].begin_ns;
  return t;
}

void *prof__an_section(const prof__an *an, const char *name) {
  for (size_t i = 0; i < prof__nsections; i++)
    if (strcmp(prof__sections[i]->name, name) == 0) return an->section_state ? an->section_state[i] : NULL;
  return NULL;
}

void prof__an_finding(prof__an *an, const char *id, const char *severity, double value, const char *title,
                      const char *measured, const char *recommendation) {
  an_priv *p = an_priv_of(an);
  if (an->nfindings == p->fcap) {
    size_t cap = p->fcap ? p->fcap * 2 : 8;
    prof__finding *f = realloc(an->findings, cap * sizeof *f);
    if (!f) { p->oom = 1; return; }
    an->findings = f;
    p->fcap = cap;
  }
  prof__finding *f = &an->findings[an->nfindings];
  memset(f, 0, sizeof *f);
  snprintf(f->id, sizeof f->id, "%s", id ? id : "");
  snprintf(f->severity, sizeof f->severity, "%s", severity ? severity : "info");
  f->value = value;
  f->title = strdup(title ? title : "");
  f->measured = strdup(measured ? measured : "");
  f->recommendation = strdup(recommendation ? recommendation : "");
  if (!f->title || !f->measured || !f->recommendation) {
    free(f->title);
    free(f->measured);
    free(f->recommendation);
    p->oom = 1;
    return;
  }
  an->nfindings++;
}

static prof__fkey *finding_key(prof__an *an, const char *key) {
  if (!an->nfindings) return NULL;
  prof__finding *f = &an->findings[an->nfindings - 1];
  if (f->nkeys >= PROF_FINDING_KEYS) return NULL;
  prof__fkey *k = &f->keys[f->nkeys++];
  memset(k, 0, sizeof *k);
  snprintf(k->key, sizeof k->key, "%s", key);
  return k;
}

void prof__an_finding_kstr(prof__an *an, const char *key, const char *v) {
  prof__fkey *k = finding_key(an, key);
  if (k) snprintf(k->str, sizeof k->str, "%s", v ? v : "");
}

void prof__an_finding_knum(prof__an *an, const char *key, double v) {
  prof__fkey *k = finding_key(an, key);
  if (k) k->is_num = 1, k->num = v;
}

/* ---- predicted savings ---------------------------------------------------- */

static void set_saving(prof__an *an, prof__finding *f, double ns, double conf, const char *fmt, va_list ap) {
  uint64_t mean = an->step_stats.mean_ns;
  if (!f || !an->nsteps || !mean) return;
  uint64_t v = prof__an_d2ns(ns);
  f->has_saving = 1;
  f->saving_ns = v < mean ? v : mean;
  f->saving_pct = 100.0 * (double)f->saving_ns / (double)mean;
  f->saving_conf = conf > 0 && conf <= 1 ? conf : conf > 1 ? 1 : 0;
  vsnprintf(f->saving_model, sizeof f->saving_model, fmt ? fmt : "", ap);
}

void prof__an_finding_saving(prof__an *an, double saving_ns, double confidence, const char *model, ...) {
  if (!an->nfindings) return;
  va_list ap;
  va_start(ap, model);
  set_saving(an, &an->findings[an->nfindings - 1], saving_ns, confidence, model, ap);
  va_end(ap);
}

void prof__an_set_saving(prof__an *an, prof__finding *f, double saving_ns, double confidence, const char *model,
                         ...) {
  va_list ap;
  va_start(ap, model);
  set_saving(an, f, saving_ns, confidence, model, ap);
  va_end(ap);
}

prof__finding *prof__an_find(prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return &an->findings[i];
  return NULL;
}

double prof__an_confidence(uint64_t steps, uint64_t samples) {
  uint64_t n = samples && samples < steps ? samples : steps;
  return n ? 1.0 - 1.0 / sqrt((double)n) : 0.0;
}

const char *prof__an_confidence_label(double c) {
  return c >= 0.85 ? "high" : c >= 0.7 ? "medium" : "low";
}

int prof__an_events_split(const prof__an *an, uint64_t *recorded, uint64_t *profiler) {
  if (!prof__an_footer(an, "events_written")) return 0;
  uint64_t w = prof__an_footer_u64(an, "events_written");
  *recorded = w;
  *profiler = an->events > w ? an->events - w : 0;
  return 1;
}

size_t prof__an_finding_details(const prof__finding *f, char *buf, size_t n) {
  size_t k = 0;
  if (n) buf[0] = 0;
  for (int i = 0, shown = 0; i < f->nkeys && k < n; i++) {
    /* the generic advice kind says nothing a reader can use */
    if (!f->keys[i].is_num && !strcmp(f->keys[i].key, "advice") && !strcmp(f->keys[i].str, "generic")) continue;
    int w = f->keys[i].is_num ? snprintf(buf + k, n - k, "%s%s=%.6g", shown ? ", " : "", f->keys[i].key, f->keys[i].num)
                              : snprintf(buf + k, n - k, "%s%s=%s", shown ? ", " : "", f->keys[i].key, f->keys[i].str);
    shown++;
    if (w < 0) break;
    k += (size_t)w;
  }
  return k < n ? k : n ? n - 1 : 0;
}

static const char *const bucket_names[PROF_BD_COUNT] = {"compute", "data", "comm", "io", "other", "untracked"};

const char *prof__an_bucket_name(int bucket) {
  return bucket >= 0 && bucket < PROF_BD_COUNT ? bucket_names[bucket] : "?";
}

const char *prof__an_cat_name(int cat) {
  return cat >= 0 && cat < PROF_CAT_COUNT ? bucket_names[cat] : "other";
}

const char *prof__an_fmt_ns(char *buf, size_t n, uint64_t ns) {
  if (ns < 1000) snprintf(buf, n, "%llu ns", (unsigned long long)ns);
  else if (ns < 1000000) snprintf(buf, n, "%.2f us", ns / 1e3);
  else if (ns < 1000000000) snprintf(buf, n, "%.2f ms", ns / 1e6);
  else snprintf(buf, n, "%.3f s", ns / 1e9);
  return buf;
}

uint64_t prof__an_d2ns(double v) {
  if (!(v > 0)) return 0; /* also NaN */
  if (v >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)v;
}

double prof__an_share(const prof__an *an, uint64_t ns) {
  uint64_t total = an->step_stats.total_ns;
  return total ? (double)ns / (double)total : 0.0;
}

double prof__an_detail_share(const prof__an *an, uint64_t ns) {
  if (!an->summary_only_steps) return prof__an_share(an, ns);
  uint64_t total = prof__an_step_total_ns(an);
  return total ? (double)ns / (double)total : 0.0;
}

void prof__an_bd_total(const prof__an *an, uint64_t bd[PROF_BD_COUNT]) {
  memset(bd, 0, PROF_BD_COUNT * sizeof bd[0]);
  size_t n;
  const prof__step *steps = prof__an_all_steps(an, &n); /* the summaries hold the breakdown too */
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < PROF_BD_COUNT; b++) bd[b] += steps[i].bd_ns[b];
}

/* Relative precision of a summary level in percent (rec_stepsum.h). */
static double level_pct(unsigned level) {
  unsigned sig = prof__ss_level_sig(level);
  return sig ? 100.0 / (double)(1u << sig) : 0.0;
}

const char *prof__an_bound_note(const prof__an *an, char *buf, size_t n) {
  if (!an->bound_max_bytes) return NULL;
  double mib = (double)an->bound_max_bytes / (1 << 20);
  size_t all = prof__an_nall(an);
  if (!an->summary_only_steps && !an->bound_dropped_chunks) {
    snprintf(buf, n, "bounded trace (MLPROF_MAX_MB, %.3g MiB): nothing was dropped, all %zu steps are in detail", mib,
             all);
    return buf;
  }
  char win[160] = "no step";
  if (an->nsteps)
    snprintf(win, sizeof win, "the last %zu %s (%llu to %llu)", an->nsteps, an->nsteps == 1 ? "step" : "steps",
             (unsigned long long)an->steps[0].number, (unsigned long long)an->steps[an->nsteps - 1].number);
  char prec[96] = "";
  if (an->summary_level)
    snprintf(prec, sizeof prec, "; the older steps' times are rounded to within %.2g%%", level_pct(an->summary_level));
  snprintf(buf, n,
           "bounded trace (MLPROF_MAX_MB, %.3g MiB): the step statistics, step chart and breakdown cover all %zu "
           "steps; ranges, functions, samples, memory, GPU and the findings drawn from them cover only the detail "
           "kept, %s; the detail of %zu steps (%llu KiB in %llu chunks) was dropped%s",
           mib, all, win, an->summary_only_steps, (unsigned long long)(an->bound_dropped_bytes >> 10),
           (unsigned long long)an->bound_dropped_chunks, prec);
  return buf;
}
