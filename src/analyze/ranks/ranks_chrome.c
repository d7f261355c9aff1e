/* ranks_chrome.c — Chrome Trace Event JSON for a merged run: one process
 * per rank (pid = rank, named "rank R (host)"), every rank's ranges and
 * steps on the common time axis of the merged analysis (timestamps in µs
 * since the earliest event of any rank). Each trace is streamed again; only
 * its string table and open ranges are held. COMM ranges carry the bytes,
 * communicator size and peer recorded for them as args. */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/ranks/ranks.h"

#define MAX_IDS (1u << 20)
#define MAX_DEPTH 256
#define STEP_TID 4294967295u

typedef struct cf { uint32_t name; uint8_t cat; uint64_t begin, bytes, size_peer; int comm; } cf;
typedef struct ct { uint32_t tid; uint32_t depth; cf f[MAX_DEPTH]; uint64_t over, step_begin, step_no; int step_open; } ct;

typedef struct mx {
  prof__json j;
  int64_t base;
  const prof__rank_sum *r;
  char **str;
  uint32_t nstr;
  ct *th;
  size_t nth;
} mx;

static const char *str_of(mx *m, uint32_t id) { return id < m->nstr && m->str[id] ? m->str[id] : "?"; }

static void put_ts(mx *m, const char *key, int64_t ns) {
  char buf[40];
  if (ns < 0) ns = 0;
  snprintf(buf, sizeof buf, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
  prof__json_key(&m->j, key);
  prof__json_raw(&m->j, buf);
}

static int64_t at(mx *m, uint64_t ts) { return (int64_t)ts + m->r->shift_ns - m->base; }

static void x_event(mx *m, uint32_t tid, const char *name, const char *cat, uint64_t b, uint64_t e, const cf *f) {
  prof__json_obj_begin(&m->j);
  prof__json_kstr(&m->j, "name", name);
  prof__json_kstr(&m->j, "ph", "X");
  prof__json_kstr(&m->j, "cat", cat);
  prof__json_kint(&m->j, "pid", m->r->rank);
  prof__json_kuint(&m->j, "tid", tid);
  put_ts(m, "ts", at(m, b));
  put_ts(m, "dur", at(m, e) - at(m, b));
  if (f && f->comm) {
    prof__json_key(&m->j, "args");
    prof__json_obj_begin(&m->j);
    prof__json_kuint(&m->j, "bytes", f->bytes);
    prof__json_kuint(&m->j, "comm_size", (uint32_t)f->size_peer);
    prof__json_kint(&m->j, "peer", (int64_t)(f->size_peer >> 32) - 1);
    prof__json_obj_end(&m->j);
  }
  prof__json_obj_end(&m->j);
}

static ct *thread_of(mx *m, uint32_t tid) {
  for (size_t i = 0; i < m->nth; i++)
    if (m->th[i].tid == tid) return &m->th[i];
  ct *p = realloc(m->th, (m->nth + 1) * sizeof *p);
  if (!p) return NULL;
  m->th = p;
  memset(&p[m->nth], 0, sizeof *p);
  p[m->nth].tid = tid;
  return &p[m->nth++];
}

static void on_string(mx *m, uint32_t id, const char *s, size_t len) {
  if (id >= MAX_IDS) return;
  if (id >= m->nstr) {
    uint32_t n = m->nstr ? m->nstr : 256;
    while (n <= id) n *= 2;
    char **p = realloc(m->str, n * sizeof *p);
    if (!p) return;
    memset(p + m->nstr, 0, (n - m->nstr) * sizeof *p);
    m->str = p;
    m->nstr = n;
  }
  free(m->str[id]);
  m->str[id] = strndup(s, len);
}

static void frame_out(mx *m, ct *t, uint64_t ts) {
  cf *f = &t->f[--t->depth];
  x_event(m, t->tid, str_of(m, f->name), prof__an_cat_name(f->cat), f->begin, ts, f);
}

static void on_event(mx *m, uint32_t tid, const prof__event *ev) {
  ct *t = thread_of(m, tid);
  if (!t) return;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN:
    if (t->depth == MAX_DEPTH) t->over++;
    else t->f[t->depth++] = (cf){ev->name, ev->cat < PROF_CAT_COUNT ? ev->cat : PROF_CAT_OTHER, ev->ts, 0, 0, 0};
    break;
  case PROF_EV_RANGE_END:
    if (t->over) t->over--;
    else if (t->depth && t->f[t->depth - 1].name == ev->name) frame_out(m, t, ev->ts);
    break;
  case PROF_EV_COMM:
    if (ev->aux == 0 && t->depth) {
      cf *f = &t->f[t->depth - 1];
      f->comm = 1;
      f->bytes = ev->a;
      f->size_peer = ev->b;
    }
    break;
  case PROF_EV_STEP_BEGIN:
    t->step_open = 1, t->step_begin = ev->ts, t->step_no = ev->a;
    break;
  case PROF_EV_STEP_END:
    if (t->step_open) {
      char name[40];
      snprintf(name, sizeof name, "step %llu", (unsigned long long)t->step_no);
      x_event(m, STEP_TID, name, "step", t->step_begin, ev->ts, NULL);
      t->step_open = 0;
    }
    break;
  default: break;
  }
}

static void meta(mx *m, const char *what, uint64_t tid, const char *key, const char *sval, long long ival) {
  prof__json_obj_begin(&m->j);
  prof__json_kstr(&m->j, "name", what);
  prof__json_kstr(&m->j, "ph", "M");
  prof__json_kint(&m->j, "pid", m->r->rank);
  prof__json_kuint(&m->j, "tid", tid);
  prof__json_key(&m->j, "args");
  prof__json_obj_begin(&m->j);
  if (sval) prof__json_kstr(&m->j, key, sval);
  else prof__json_kint(&m->j, key, ival);
  prof__json_obj_end(&m->j);
  prof__json_obj_end(&m->j);
}

static void reset(mx *m) {
  for (uint32_t i = 0; i < m->nstr; i++) free(m->str[i]);
  free(m->str);
  free(m->th);
  m->str = NULL;
  m->th = NULL;
  m->nstr = 0;
  m->nth = 0;
}

static int stream_rank(mx *m) {
  prof__reader *rd;
  char err[256];
  int rc = prof__reader_open(&rd, m->r->path, err);
  if (rc) return rc;
  char pname[128];
  snprintf(pname, sizeof pname, "rank %ld (%s)", m->r->rank, m->r->host);
  meta(m, "process_name", 0, "name", pname, 0);
  meta(m, "process_sort_index", 0, "sort_index", NULL, m->r->rank);
  meta(m, "thread_name", STEP_TID, "name", "steps", 0);
  prof__rec rec;
  while ((rc = prof__reader_next(rd, &rec)) == 1) {
    if (rec.kind == PROF_REC_STRING) on_string(m, rec.id, rec.str, rec.len);
    else if (rec.kind == PROF_REC_EVENT) on_event(m, rec.tid, &rec.ev);
  }
  for (size_t i = 0; i < m->nth; i++)
    while (m->th[i].depth) frame_out(m, &m->th[i], m->r->last_ns);
  prof__reader_close(rd);
  reset(m);
  return rc == PROF_ETRUNC ? 0 : rc;
}

int prof__ranks_export_chrome(prof__ranks *rs, FILE *out) {
  if (!rs || !out) return PROF_EINVAL;
  mx m = {0};
  m.base = INT64_MAX;
  for (size_t i = 0; i < rs->n; i++)
    if ((int64_t)rs->r[i].first_ns + rs->r[i].shift_ns < m.base) m.base = (int64_t)rs->r[i].first_ns + rs->r[i].shift_ns;
  if (!rs->n) m.base = 0;
  prof__json_init(&m.j, out, 0);
  prof__json_obj_begin(&m.j);
  prof__json_key(&m.j, "traceEvents");
  prof__json_arr_begin(&m.j);
  int rc = 0;
  for (size_t i = 0; i < rs->n && !rc; i++) {
    m.r = &rs->r[i];
    rc = stream_rank(&m);
  }
  prof__json_arr_end(&m.j);
  prof__json_kstr(&m.j, "displayTimeUnit", "ms");
  prof__json_key(&m.j, "otherData");
  prof__json_obj_begin(&m.j);
  prof__json_kstr(&m.j, "generator", "mlprof " MLPROF_VERSION_STRING);
  prof__json_kuint(&m.j, "ranks", rs->n);
  prof__json_kstr(&m.j, "clock", rs->clock);
  prof__json_kint(&m.j, "ts_base_ns", m.base);
  prof__json_obj_end(&m.j);
  prof__json_obj_end(&m.j);
  fputc('\n', out);
  if (rc == 0 && (fflush(out) || ferror(out))) rc = PROF_EIO;
  return rc;
}
