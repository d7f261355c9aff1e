/* chrome.c — export a trace as Chrome Trace Event JSON, the format that
 * Perfetto and chrome://tracing open.
 *
 * Ranges become complete events ("ph":"X") on their thread (zero-length
 * ones a begin/end pair, ranges closed at one instant 1 ns apart: the rules
 * of chrome_range.h), marks instant events, counters "C" events, and
 * steps complete events on a track of their own. Timestamps are
 * microseconds since the first event of the trace (written with three
 * decimals, so nanoseconds survive). The trace is read again from the
 * start; only open ranges are held in memory.
 *
 * Tracks are ordered: the step track first, then the thread that ran the
 * steps, then the other threads by id. Sections add their own events
 * (GPU streams, flow arrows, ...) through their `chrome` hook. Big traces
 * stay loadable with a cap on the number of timed events and/or a time
 * window (prof__chrome_opts); what was left out is counted in otherData.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "trace/ev_cpuctr.h"
#include "analyze/export/chrome_range.h"

struct cx;

typedef struct cx_thread {
  struct cx *c;
  prof__exp_crange_stack open;
  uint32_t tid;
  uint64_t last_ts;
} cx_thread;

typedef struct cx {
  prof__an *an;
  prof__json j;
  uint64_t base;
  long long pid;
  cx_thread *th; /* parallel to an->threads */
  prof__chrome_opts o;
  uint64_t written, dropped;
  int capped;    /* the event cap was reached */
} cx;

/* The export in progress on `an`, for the section hooks (kept in the
 * analysis itself, so exports of different traces may run at once). */
static cx *cur_of(const prof__an *an) {
  cx *c = an ? an->chrome_export : NULL;
  return c && c->an == an ? c : NULL;
}

static int keep(cx *c, uint64_t b, uint64_t e) {
  uint64_t rb = b > c->base ? b - c->base : 0, re = e > c->base ? e - c->base : 0;
  if (re < c->o.window_begin_ns || (c->o.window_end_ns && rb >= c->o.window_end_ns)) return 0;
  if (c->o.max_events && c->written >= c->o.max_events) {
    c->capped = 1;
    c->dropped++;
    return 0;
  }
  c->written++;
  return 1;
}

uint64_t prof__chrome_base_ns(const prof__an *an) {
  cx *c = cur_of(an);
  return c ? c->base : an ? an->first_ns : 0;
}

long long prof__chrome_pid(const prof__an *an) {
  cx *c = cur_of(an);
  if (c) return c->pid;
  long long pid = an ? prof__an_pid(an) : -1;
  return pid < 0 ? 1 : pid;
}

int prof__chrome_keep(prof__an *an, uint64_t begin_ns, uint64_t end_ns) {
  cx *c = cur_of(an);
  return c ? keep(c, begin_ns, end_ns) : 1;
}

static void put_us(cx *c, const char *key, uint64_t ns) {
  char buf[40];
  snprintf(buf, sizeof buf, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  prof__json_key(&c->j, key);
  prof__json_raw(&c->j, buf);
}

static void ev_head(cx *c, const char *name, const char *ph, uint64_t tid) {
  prof__json_obj_begin(&c->j);
  prof__json_kstr(&c->j, "name", name);
  prof__json_kstr(&c->j, "ph", ph);
  prof__json_kint(&c->j, "pid", c->pid);
  prof__json_kuint(&c->j, "tid", tid);
}

static void meta_event(cx *c, const char *what, uint64_t tid, const char *key, const char *sval, long long ival) {
  ev_head(c, what, "M", tid);
  prof__json_key(&c->j, "args");
  prof__json_obj_begin(&c->j);
  if (sval) prof__json_kstr(&c->j, key, sval);
  else prof__json_kint(&c->j, key, ival);
  prof__json_obj_end(&c->j);
  prof__json_obj_end(&c->j);
}

/* A range (zero-length or not: chrome_range.h) if the window and cap keep it. */
static void complete_event(cx *c, const char *name, const char *cat, uint64_t tid, uint64_t b, uint64_t e) {
  if (keep(c, b, e)) prof__exp_crange_write(&c->j, c->pid, tid, name, cat, b - c->base, e - c->base, NULL, NULL);
}

/* A track id for steps that no real thread uses. */
/* Steps are slices on the thread that ran them (as torch.profiler's
 * ProfilerStep#N), enclosing that thread's ranges. */
static uint64_t step_track(const prof__an *an) { return an->nsteps ? an->steps[0].tid : 0; }

/* Sort position of thread i: the step thread first, then by thread id. */
static long long thread_rank(const prof__an *an, size_t i) {
  uint32_t step_tid = an->nsteps ? an->steps[0].tid : UINT32_MAX, tid = an->threads[i].tid;
  if (tid == step_tid) return 0;
  long long r = 1;
  for (size_t k = 0; k < an->nthreads; k++)
    if (an->threads[k].tid != step_tid && an->threads[k].tid < tid) r++;
  return r;
}

static void write_metadata(cx *c, uint64_t steps_tid) {
  prof__an *an = c->an;
  const char *prog = prof__an_header(an, "program");
  meta_event(c, "process_name", 0, "name", prog && *prog ? prog : "mlprof trace", 0);
  meta_event(c, "process_sort_index", 0, "sort_index", NULL, 0);
  for (size_t i = 0; i < an->nthreads; i++) {
    if (an->nthreads <= 4096) meta_event(c, "thread_sort_index", an->threads[i].tid, "sort_index", NULL, thread_rank(an, i));
    char buf[64];
    const char *name = an->threads[i].name;
    if (!name) {
      snprintf(buf, sizeof buf, "thread %u", an->threads[i].tid);
      name = buf;
    }
    meta_event(c, "thread_name", an->threads[i].tid, "name", name, 0);
  }
  (void)steps_tid; /* the step thread is a named thread already, sorted first */
}

static void write_steps(cx *c, uint64_t steps_tid) {
  prof__exp_crange_track track = {0}; /* steps back to back: chrome_range.h */
  for (size_t i = 0; i < c->an->nsteps; i++) {
    const prof__step *s = &c->an->steps[i];
    char name[48];
    snprintf(name, sizeof name, "step %llu", (unsigned long long)s->number);
    uint64_t b = prof__exp_crange_track_begin(&track, s->begin_ns), e = s->end_ns > b ? s->end_ns : b;
    complete_event(c, name, "step", steps_tid, b, e);
    prof__exp_crange_track_end(&track, b, e);
  }
}

/* A range of thread `ctx` closed at `end`. */
static void frame_out(void *ctx, const prof__exp_crange *r, uint64_t end) {
  const cx_thread *t = ctx;
  cx *c = t->c;
  complete_event(c, prof__an_str(c->an, r->name), prof__an_cat_name(r->cat), t->tid, r->begin, end);
}

static void instant(cx *c, uint32_t tid, const prof__event *ev, uint64_t ts) {
  if (!keep(c, ts, ts)) return;
  ev_head(c, prof__an_str(c->an, ev->name), "i", tid);
  prof__json_kstr(&c->j, "s", "t");
  put_us(c, "ts", ts - c->base);
  prof__json_obj_end(&c->j);
}

/* Chrome and Perfetto keep one counter track per process and name, whatever
 * the tid. Per-thread counters ("cpuctr/...", one cumulative series per
 * thread) would merge into one sawtooth: their track is named per thread,
 * "cpuctr/cycles [main 7]". */
static void counter_name(cx *c, uint32_t tid, const char *name, char *buf, size_t len) {
  if (strncmp(name, PROF_CPUCTR_PREFIX, strlen(PROF_CPUCTR_PREFIX)) != 0) {
    snprintf(buf, len, "%s", name);
    return;
  }
  size_t ti = prof__an_thread_index(c->an, tid);
  const char *tn = ti != SIZE_MAX ? c->an->threads[ti].name : NULL;
  if (tn && *tn) snprintf(buf, len, "%s [%s %u]", name, tn, tid);
  else snprintf(buf, len, "%s [thread %u]", name, tid);
}

static void counter(cx *c, uint32_t tid, const prof__event *ev, uint64_t ts) {
  double v = prof__bits_f64(ev->a);
  if (v != v || v - v != 0) return; /* viewers reject NaN and infinities */
  if (!keep(c, ts, ts)) return;
  char name[512];
  counter_name(c, tid, prof__an_str(c->an, ev->name), name, sizeof name);
  ev_head(c, name, "C", tid);
  put_us(c, "ts", ts - c->base);
  prof__json_key(&c->j, "args");
  prof__json_obj_begin(&c->j);
  prof__json_knum(&c->j, "value", v);
  prof__json_obj_end(&c->j);
  prof__json_obj_end(&c->j);
}

static void on_event(cx *c, uint32_t tid, const prof__event *ev) {
  size_t ti = prof__an_thread_index(c->an, tid);
  if (ti == SIZE_MAX) return;
  cx_thread *t = &c->th[ti];
  uint64_t ts = prof__an_event_time(&t->last_ts, ev);
  if (ts < c->base) ts = c->base;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN: prof__exp_crange_begin(&t->open, ev->name, ev->cat, ts); break;
  case PROF_EV_RANGE_END: prof__exp_crange_end(&t->open, ev->name, ts, frame_out, t); break;
  case PROF_EV_MARK: instant(c, tid, ev, ts); break;
  case PROF_EV_COUNTER: counter(c, tid, ev, ts); break;
  default: break;
  }
}

static int stream_events(cx *c) {
  prof__rec rec;
  int rc;
  while (!c->capped && (rc = prof__reader_next(c->an->reader, &rec)) == 1)
    if (rec.kind == PROF_REC_EVENT) on_event(c, rec.tid, &rec.ev);
  if (c->capped) rc = 0; /* stopped early on purpose */
  for (size_t i = 0; i < c->an->nthreads; i++) /* close what never ended */
    prof__exp_crange_close_all(&c->th[i].open, c->th[i].last_ts, frame_out, &c->th[i]);
  return rc == PROF_ETRUNC ? 0 : rc;
}

static void write_other_data(cx *c) {
  prof__json_key(&c->j, "otherData");
  prof__json_obj_begin(&c->j);
  prof__json_kstr(&c->j, "generator", "mlprof " MLPROF_VERSION_STRING);
  prof__json_kstr(&c->j, "trace", c->an->path);
  prof__json_kstr(&c->j, "program", prof__an_header(c->an, "program"));
  prof__json_kuint(&c->j, "ts_base_ns", c->base);
  prof__json_kuint(&c->j, "lost_events", c->an->lost_events);
  prof__json_kbool(&c->j, "truncated", c->an->truncated);
  prof__json_kuint(&c->j, "events_written", c->written);
  prof__json_kbool(&c->j, "capped", c->capped);
  prof__json_kuint(&c->j, "max_events", c->o.max_events);
  prof__json_kuint(&c->j, "window_begin_ns", c->o.window_begin_ns);
  prof__json_kuint(&c->j, "window_end_ns", c->o.window_end_ns);
  prof__json_obj_end(&c->j);
}

/* Let every section add its events; a hook may read the trace again. */
static void section_events(cx *c) {
  for (size_t i = 0; i < prof__nsections; i++)
    if (prof__sections[i]->chrome) prof__sections[i]->chrome(c->an, c->an->section_state[i], &c->j);
}

int prof__export_chrome(prof__an *an, FILE *out) { return prof__export_chrome_opts(an, out, NULL); }

int prof__export_chrome_opts(prof__an *an, FILE *out, const prof__chrome_opts *o) {
  if (!an || !out) return PROF_EINVAL;
  int rc = prof__reader_rewind(an->reader);
  if (rc) return rc;
  cx c = {.an = an, .base = an->first_ns, .pid = prof__an_pid(an)};
  if (o) c.o = *o;
  if (c.pid < 0) c.pid = 1;
  c.th = calloc(an->nthreads + 1, sizeof *c.th);
  if (!c.th) return PROF_ENOMEM;
  for (size_t i = 0; i < an->nthreads; i++) c.th[i].c = &c, c.th[i].tid = an->threads[i].tid;
  uint64_t steps_tid = step_track(an);
  prof__json_init(&c.j, out, 0);
  prof__json_obj_begin(&c.j);
  prof__json_key(&c.j, "traceEvents");
  prof__json_arr_begin(&c.j);
  write_metadata(&c, steps_tid);
  write_steps(&c, steps_tid);
  an->chrome_export = &c;
  rc = stream_events(&c);
  if (rc == 0) section_events(&c);
  an->chrome_export = NULL;
  prof__json_arr_end(&c.j);
  prof__json_kstr(&c.j, "displayTimeUnit", "ms");
  write_other_data(&c);
  prof__json_obj_end(&c.j);
  fputc('\n', out);
  for (size_t i = 0; i < an->nthreads; i++) prof__exp_crange_stack_free(&c.th[i].open);
  free(c.th);
  if (rc == 0 && (fflush(out) || ferror(out))) rc = PROF_EIO;
  return rc;
}
