/* export_tb.c — TensorBoard export: one events.out.tfevents.* file that
 * TensorBoard's reader loads.
 *
 * The file is a sequence of records: uint64 length (little endian), masked
 * CRC32C of those 8 bytes, the payload, masked CRC32C of the payload. Each
 * payload is a serialized tensorflow.Event, encoded here by hand:
 *   Event   { double wall_time = 1; int64 step = 2; string file_version = 3;
 *             Summary summary = 5; }
 *   Summary { repeated Value value = 1; }
 *   Value   { string tag = 1; float simple_value = 2; HistogramProto histo = 5; }
 *   HistogramProto { double min = 1, max = 2, num = 3, sum = 4,
 *             sum_squares = 5; repeated double bucket_limit = 6 [packed];
 *             repeated double bucket = 7 [packed]; }
 * The first record carries file_version "brain.Event:2". Then one Event per
 * step with the step time, the breakdown, counters (memory peaks, resource
 * and user counters) and GPU utilisation; prof_scalar metrics and tensor
 * histograms follow as they are read. docs/tensorboard.md lists the tags.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/export/pb.h"
#include "analyze/sections/gpu/sec_gpu.h"
#include "trace/outfile.h"
#if __has_include("trace/rec_hist.h") /* the model-health producer may be absent */
#include "trace/rec_hist.h"
#define TB_HAVE_HIST 1
#endif

#define TB_MAX_COUNTERS 64

typedef struct tb_reading {
  uint64_t ts;
  double v;
} tb_reading;

typedef struct tb_counter {
  uint32_t name;
  int peak;      /* memory counters: the step's maximum; others: last value */
  int cum;       /* per-thread cumulative ("cpuctr/..."): the step's increase */
  double *v;     /* per step, NaN: no value */
  tb_reading *r; /* cum: the readings of the thread that ran the steps */
  size_t nr, capr;
} tb_counter;

typedef struct tbw {
  prof__an *an;
  FILE *f;
  prof__buf ev, sum, val; /* scratch: Event, Summary, one Value */
  double rt0;             /* realtime - monotonic, seconds (0 if unknown) */
  tb_counter c[TB_MAX_COUNTERS];
  size_t nc;
  int oom;
} tbw;

/* ---- record framing ----------------------------------------------------- */

static uint32_t masked_crc(const void *p, size_t n) {
  uint32_t c = prof__crc32c(0, p, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int write_record(tbw *w, const prof__buf *payload) {
  uint8_t head[12], tail[4];
  put_le(head, payload->len, 8);
  put_le(head + 8, masked_crc(head, 8), 4);
  put_le(tail, masked_crc(payload->p, payload->len), 4);
  if (fwrite(head, 1, 12, w->f) != 12) return PROF_EIO;
  if (payload->len && fwrite(payload->p, 1, payload->len, w->f) != payload->len) return PROF_EIO;
  return fwrite(tail, 1, 4, w->f) == 4 ? 0 : PROF_EIO;
}

/* ---- events ------------------------------------------------------------- */

static void value_begin(tbw *w, const char *tag) {
  w->val.len = 0;
  prof__exp_pb_bytes(&w->val, 1, tag, strlen(tag));
}

static void value_end(tbw *w) { prof__exp_pb_bytes(&w->sum, 1, w->val.p, w->val.len); }

static void add_scalar(tbw *w, const char *tag, double v) {
  if (!isfinite(v)) return;
  value_begin(w, tag);
  prof__exp_pb_f32(&w->val, 2, (float)v);
  value_end(w);
}

static int flush_event(tbw *w, uint64_t ts_ns, int64_t step) {
  w->ev.len = 0;
  prof__exp_pb_f64(&w->ev, 1, w->rt0 + (double)ts_ns / 1e9);
  prof__exp_pb_tag(&w->ev, 2, 0);
  prof__buf_varint(&w->ev, (uint64_t)step);
  prof__exp_pb_bytes(&w->ev, 5, w->sum.p, w->sum.len);
  w->sum.len = 0;
  if (w->ev.oom || w->sum.oom || w->val.oom) return PROF_ENOMEM;
  return write_record(w, &w->ev);
}

static int version_record(tbw *w, uint64_t ts_ns) {
  w->ev.len = 0;
  prof__exp_pb_f64(&w->ev, 1, w->rt0 + (double)ts_ns / 1e9);
  prof__exp_pb_bytes(&w->ev, 3, "brain.Event:2", 13);
  return w->ev.oom ? PROF_ENOMEM : write_record(w, &w->ev);
}

#if TB_HAVE_HIST
/* A tensor summary as a histogram of magnitudes: bucket e counts |x| in
 * [2^e, 2^(e+1)); exact zeros go in a first bucket with limit 0. */
static void add_histogram(tbw *w, const char *tag, const prof__hsum *s) {
  int lo = -1, hi = -1;
  for (int i = 0; i < PROF_HIST_NB; i++)
    if (s->bucket[i]) {
      if (lo < 0) lo = i;
      hi = i;
    }
  double n = (double)(s->count - s->nan - s->inf);
  prof__buf h = {0};
  prof__exp_pb_f64(&h, 1, s->zeros || lo < 0 ? 0 : ldexp(1, lo + PROF_HIST_EMIN));
  prof__exp_pb_f64(&h, 2, fmax(fabs(s->min), fabs(s->max)));
  prof__exp_pb_f64(&h, 3, n);
  prof__exp_pb_f64(&h, 4, s->mean * n);
  prof__exp_pb_f64(&h, 5, (s->std * s->std + s->mean * s->mean) * n);
  int nb = 1 + (lo >= 0 ? hi - lo + 1 : 0);
  prof__exp_pb_tag(&h, 6, 2);
  prof__buf_varint(&h, (uint64_t)nb * 8);
  double lim[PROF_HIST_NB + 1], cnt[PROF_HIST_NB + 1];
  lim[0] = 0;
  cnt[0] = (double)s->zeros;
  for (int i = 1; i < nb; i++) {
    lim[i] = ldexp(1, lo + i - 1 + PROF_HIST_EMIN + 1);
    cnt[i] = (double)s->bucket[lo + i - 1];
  }
  for (int i = 0; i < nb; i++) {
    uint64_t u;
    memcpy(&u, &lim[i], 8);
    for (int k = 0; k < 8; k++) prof__buf_u8(&h, (uint8_t)(u >> (8 * k)));
  }
  prof__exp_pb_tag(&h, 7, 2);
  prof__buf_varint(&h, (uint64_t)nb * 8);
  for (int i = 0; i < nb; i++) {
    uint64_t u;
    memcpy(&u, &cnt[i], 8);
    for (int k = 0; k < 8; k++) prof__buf_u8(&h, (uint8_t)(u >> (8 * k)));
  }
  value_begin(w, tag);
  prof__exp_pb_bytes(&w->val, 5, h.p, h.len);
  value_end(w);
  if (h.oom) w->oom = 1;
  prof__buf_free(&h);
}

#endif

/* ---- reading the trace -------------------------------------------------- */

static tb_counter *counter_of(tbw *w, uint32_t name) {
  for (size_t i = 0; i < w->nc; i++)
    if (w->c[i].name == name) return &w->c[i];
  if (w->nc == TB_MAX_COUNTERS || !w->an->nsteps) return NULL;
  tb_counter *c = &w->c[w->nc];
  c->v = malloc(w->an->nsteps * sizeof *c->v);
  if (!c->v) {
    w->oom = 1;
    return NULL;
  }
  for (size_t i = 0; i < w->an->nsteps; i++) c->v[i] = NAN;
  c->name = name;
  c->peak = strncmp(prof__an_str(w->an, name), "mem.", 4) == 0;
  c->cum = strncmp(prof__an_str(w->an, name), "cpuctr/", 7) == 0;
  c->r = NULL;
  c->nr = c->capr = 0;
  w->nc++;
  return c;
}

static void add_reading(tbw *w, tb_counter *c, uint64_t ts, double v) {
  if (c->nr == c->capr) {
    size_t cap = c->capr ? c->capr * 2 : 64;
    tb_reading *p = realloc(c->r, cap * sizeof *p);
    if (!p) {
      w->oom = 1;
      return;
    }
    c->r = p;
    c->capr = cap;
  }
  c->r[c->nr++] = (tb_reading){ts, v};
}

/* A cumulative counter at time t, interpolated between the readings around
 * it (readings are in time order); NaN with no reading. */
static double cum_at(const tb_counter *c, uint64_t t) {
  if (!c->nr) return NAN;
  if (t <= c->r[0].ts) return c->r[0].v;
  for (size_t i = 1; i < c->nr; i++) {
    if (c->r[i].ts < t) continue;
    const tb_reading *a = &c->r[i - 1], *b = &c->r[i];
    double f = b->ts > a->ts ? (double)(t - a->ts) / (double)(b->ts - a->ts) : 1;
    return a->v + f * (b->v - a->v);
  }
  return c->r[c->nr - 1].v;
}

static void on_counter(tbw *w, uint32_t tid, const prof__event *ev) {
  double v = prof__bits_f64(ev->a);
  if (!isfinite(v) || !w->an->nsteps) return;
  if (strncmp(prof__an_str(w->an, ev->name), "cpuctr/", 7) == 0) {
    /* Per-thread cumulative: keep the step thread's readings; the value of
     * a step is the increase across it (step_events). */
    if (tid != w->an->steps[0].tid) return;
    tb_counter *c = counter_of(w, ev->name);
    if (c) add_reading(w, c, ev->ts, v);
    return;
  }
  long s = prof__an_step_at(w->an, ev->ts);
  if (s < 0) return;
  tb_counter *c = counter_of(w, ev->name);
  if (!c) return;
  if (!c->peak || isnan(c->v[s]) || v > c->v[s]) c->v[s] = v;
}

/* prof_scalar stores prof_step_count(), the number of steps begun: a value
 * logged in step n (or after it, before step n+1) carries n+1. TensorBoard
 * gets step n, the number every other tag uses for that training step. */
static int on_scalar(tbw *w, const prof__event *ev) {
  char tag[160];
  snprintf(tag, sizeof tag, "metrics/%s", prof__an_str(w->an, ev->name));
  add_scalar(w, tag, prof__bits_f64(ev->a));
  return w->sum.len ? flush_event(w, ev->ts, ev->b ? (int64_t)ev->b - 1 : 0) : 0;
}

#if TB_HAVE_HIST
static int on_hist(tbw *w, const prof__rec *rec) {
  if (!rec->len || rec->data[0] != PROF_HIST_FORMAT) return 0;
  prof__cur c = {rec->data + 1, rec->data + rec->len, 0};
  prof__hrec *r = malloc(sizeof *r);
  if (!r) return PROF_ENOMEM;
  int rc = 0;
  while (rc == 0 && prof__rec_hist_decode(&c, r) == 1 && !c.bad) {
    char tag[160];
    snprintf(tag, sizeof tag, "histograms/%s", prof__an_str(w->an, r->tag));
    add_histogram(w, tag, &r->sum);
    rc = flush_event(w, r->ts_ns, r->step1 ? (int64_t)r->step1 - 1 : 0);
  }
  free(r);
  return rc;
}

#else
static int on_hist(tbw *w, const prof__rec *rec) {
  (void)w, (void)rec;
  return 0;
}
#endif

static int stream(tbw *w) {
  prof__rec rec;
  int rc = prof__reader_rewind(w->an->reader), n;
  if (rc) return rc;
  while (rc == 0 && (n = prof__reader_next(w->an->reader, &rec)) == 1) {
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_COUNTER) on_counter(w, rec.tid, &rec.ev);
    else if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_SCALAR) rc = on_scalar(w, &rec.ev);
    else if (rec.kind == PROF_REC_CHUNK && rec.chunk_type == PROF_CHUNK_HIST) rc = on_hist(w, &rec);
  }
  return rc ? rc : w->oom ? PROF_ENOMEM : 0;
}

/* ---- per-step scalars --------------------------------------------------- */

static void counter_scalars(tbw *w, size_t i) {
  char tag[160];
  for (size_t k = 0; k < w->nc; k++) {
    const char *name = prof__an_str(w->an, w->c[k].name);
    if (w->c[k].peak) snprintf(tag, sizeof tag, "memory/%s_peak", name + 4);
    else snprintf(tag, sizeof tag, "counters/%s", name);
    double v = w->c[k].v[i];
    if (w->c[k].cum) {
      const prof__step *s = &w->an->steps[i];
      v = s->tid == w->an->steps[0].tid ? cum_at(&w->c[k], s->end_ns) - cum_at(&w->c[k], s->begin_ns) : NAN;
    }
    add_scalar(w, tag, v);
  }
}

static void gpu_scalars(tbw *w, size_t i) {
  const gpu_summary *g = prof__sec_gpu_summary(w->an);
  if (!g || g->whole_trace || !g->windows) return;
  const prof__step *s = &w->an->steps[i];
  for (size_t k = 0; k < g->nwindows; k++) {
    const gpu_window *win = &g->windows[k];
    if (win->number != s->number || win->end <= win->begin) continue;
    add_scalar(w, "gpu/utilization_pct", 100.0 * (double)win->busy_ns / (double)(win->end - win->begin));
    add_scalar(w, "gpu/kernels", (double)win->kernels);
    return;
  }
}

static int step_events(tbw *w) {
  char tag[64];
  for (size_t i = 0; i < w->an->nsteps; i++) {
    const prof__step *s = &w->an->steps[i];
    add_scalar(w, "step/time_ms", (double)(s->end_ns - s->begin_ns) / 1e6);
    for (int b = 0; b < PROF_BD_OTHER_RANGE; b++) {
      snprintf(tag, sizeof tag, "breakdown/%s_ms", prof__an_bucket_name(b));
      add_scalar(w, tag, (double)s->bd_ns[b] / 1e6);
    }
    add_scalar(w, "breakdown/other_ms", (double)(s->bd_ns[PROF_BD_OTHER_RANGE] + s->bd_ns[PROF_BD_UNTRACKED]) / 1e6);
    counter_scalars(w, i);
    gpu_scalars(w, i);
    int rc = flush_event(w, s->end_ns, (int64_t)s->number);
    if (rc) return rc;
  }
  return 0;
}

/* ---- entry -------------------------------------------------------------- */

/* Copy a header value into a file-name part: only [A-Za-z0-9._-] survive
 * (a crafted trace could name a host "../../x" to write outside DIR). */
static const char *name_part(char *buf, size_t n, const char *v, const char *dflt) {
  if (!v || !*v) v = dflt;
  size_t i = 0;
  for (; v[i] && i + 1 < n; i++) {
    char c = v[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
             c == '_' || c == '-';
    buf[i] = ok && !(c == '.' && i == 0) ? c : '_';
  }
  buf[i] = 0;
  return buf;
}

static int create_file(prof__an *an, const char *dir, char *path, size_t n, prof__outf *o, char *err) {
  if (prof__mkdirs(dir, err) != 0) return -1; /* and any missing folder above it */
  char host[64], pid[24];
  name_part(host, sizeof host, prof__an_header(an, "hostname"), "localhost");
  name_part(pid, sizeof pid, prof__an_header(an, "pid"), "0");
  snprintf(path, n, "%s/events.out.tfevents.%lld.%s.%s.mlprof", dir, (long long)time(NULL), host, pid);
  return prof__out_fopen(o, path, 0600, err);
}

static double realtime_offset(const prof__an *an) {
  const char *rt = prof__an_header(an, "start_realtime_ns"), *mono = prof__an_header(an, "start_mono_ns");
  if (!rt || !mono) return 0;
  return (strtod(rt, NULL) - strtod(mono, NULL)) / 1e9;
}

int prof__export_tensorboard(prof__an *an, const char *dir, char *path, size_t path_len, char *err) {
  char pbuf[1024];
  err[0] = 0;
  if (!an || !dir || !*dir) return PROF_EINVAL;
  if (!path) {
    path = pbuf;
    path_len = sizeof pbuf;
  }
  tbw w = {.an = an, .rt0 = realtime_offset(an)};
  prof__outf o;
  if (create_file(an, dir, path, path_len, &o, err) != 0) return PROF_EIO;
  w.f = o.f;
  int rc = version_record(&w, an->first_ns);
  if (rc == 0) rc = stream(&w);
  if (rc == 0) rc = step_events(&w);
  if (prof__out_fclose(&o, rc == 0, err) != 0 && rc == 0) rc = PROF_EIO;
  if (rc && !err[0]) snprintf(err, PROF_ERR_MAX, "cannot write '%.180s': %s", path, prof_strerror(rc));
  for (size_t i = 0; i < w.nc; i++) {
    free(w.c[i].v);
    free(w.c[i].r);
  }
  prof__buf_free(&w.ev);
  prof__buf_free(&w.sum);
  prof__buf_free(&w.val);
  return rc;
}
