/* ranks_chrome.c — Chrome Trace Event JSON for a merged run: one process
 * per rank (pid = rank, named "rank R (host)"), every rank's ranges and
 * steps on the common time axis of the merged analysis (timestamps in µs
 * since the earliest event of any rank). Each trace is streamed again; only
 * its string table and open ranges are held. COMM ranges carry the bytes,
 * communicator size and peer recorded for them as args. Ranges are written
 * and closed by the rules of the single-trace export (export/chrome_range.h):
 * zero-length ones as begin/end pairs, those closed at one instant 1 ns
 * apart, innermost first. */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/chrome_range.h"
#include "analyze/ranks/ranks.h"
#include "analyze/util/array.h"
#include "analyze/util/hashmap.h"
#include "trace/ev_comm.h"

#define MAX_IDS (1u << 20)
#define STEP_TID 4294967295u

struct mx;

/* A thread of the rank being streamed; its open ranges carry their COMM
 * record in a (bytes) and b (communicator size, peer + 1 above). */
typedef struct ct {
  struct mx *m;
  uint32_t tid;
  prof__exp_crange_stack open;
  uint64_t step_begin, step_no;
  int step_open;
} ct;

typedef struct mx {
  prof__json j;
  int64_t base;
  const prof__rank_sum *r;
  char **str;
  uint32_t nstr;
  ct *th;
  size_t nth, th_cap;
  prof__map32 th_idx; /* tid -> index in th (this rank) */
  prof__map32 named;  /* tids whose name was written (this rank) */
  prof__exp_crange_track steps; /* the rank's step track */
} mx;

static const char *str_of(mx *m, uint32_t id) { return id < m->nstr && m->str[id] ? m->str[id] : "?"; }

/* ns since the merged time zero, on the common axis. */
static uint64_t at(mx *m, uint64_t ts) {
  int64_t t = (int64_t)ts + m->r->shift_ns - m->base;
  return t < 0 ? 0 : (uint64_t)t;
}

static void comm_args(prof__json *j, const void *ctx) {
  const prof__exp_crange *r = ctx;
  prof__json_kuint(j, "bytes", r->a);
  prof__json_kuint(j, "comm_size", prof__ev_comm_size(r->b));
  prof__json_kint(j, "peer", prof__ev_comm_peer(r->b));
}

static void range_event(mx *m, uint32_t tid, const char *name, const char *cat, uint64_t b, uint64_t e,
                        const prof__exp_crange *r) {
  int comm = r && r->tagged;
  prof__exp_crange_write(&m->j, m->r->rank, tid, name, cat, at(m, b), at(m, e), comm ? comm_args : NULL, r);
}

static ct *thread_of(mx *m, uint32_t tid) {
  uint32_t i = prof__map32_get(&m->th_idx, tid);
  if (i != UINT32_MAX) return &m->th[i];
  if (m->nth >= UINT32_MAX - 1 || prof__arr_grow((void **)&m->th, &m->th_cap, m->nth + 1, sizeof *m->th) ||
      prof__map32_put(&m->th_idx, tid, (uint32_t)m->nth))
    return NULL;
  ct *p = &m->th[m->nth++];
  memset(p, 0, sizeof *p);
  p->m = m;
  p->tid = tid;
  return p;
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

/* A range of thread `ctx` closed at `end`. */
static void frame_out(void *ctx, const prof__exp_crange *r, uint64_t end) {
  const ct *t = ctx;
  range_event(t->m, t->tid, str_of(t->m, r->name), prof__an_cat_name(r->cat), r->begin, end, r);
}

static void on_event(mx *m, uint32_t tid, const prof__event *ev) {
  ct *t = thread_of(m, tid);
  if (!t) return;
  prof__exp_crange *top;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN: prof__exp_crange_begin(&t->open, ev->name, ev->cat, ev->ts); break;
  case PROF_EV_RANGE_END: prof__exp_crange_end(&t->open, ev->name, ev->ts, frame_out, t); break;
  case PROF_EV_COMM:
    if (ev->aux == PROF_COMM_CALL && (top = prof__exp_crange_top(&t->open))) {
      top->tagged = 1;
      top->a = ev->a;
      top->b = ev->b;
    }
    break;
  case PROF_EV_STEP_BEGIN:
    t->step_open = 1, t->step_begin = ev->ts, t->step_no = ev->a;
    break;
  case PROF_EV_STEP_END:
    if (t->step_open) {
      char name[40];
      snprintf(name, sizeof name, "step %llu", (unsigned long long)t->step_no);
      uint64_t b = prof__exp_crange_track_begin(&m->steps, t->step_begin), e = ev->ts > b ? ev->ts : b;
      range_event(m, STEP_TID, name, "step", b, e, NULL); /* steps back to back: chrome_range.h */
      prof__exp_crange_track_end(&m->steps, b, e);
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

/* A thread record: its name as the track's name (once per thread and
 * rank; a thread the trace left unnamed is "thread <tid>"). */
static void thread_name(mx *m, uint32_t tid, const char *str, size_t len) {
  if (prof__map32_get(&m->named, tid) != UINT32_MAX || prof__map32_put(&m->named, tid, 1)) return;
  char name[160];
  if (str && len) snprintf(name, sizeof name, "%.*s", (int)(len < 150 ? len : 150), str);
  else snprintf(name, sizeof name, "thread %u", tid);
  meta(m, "thread_name", tid, "name", name, 0);
}

static void reset(mx *m) {
  for (uint32_t i = 0; i < m->nstr; i++) free(m->str[i]);
  for (size_t i = 0; i < m->nth; i++) prof__exp_crange_stack_free(&m->th[i].open);
  free(m->str);
  free(m->th);
  prof__map32_free(&m->th_idx);
  prof__map32_free(&m->named);
  m->steps = (prof__exp_crange_track){0};
  m->str = NULL;
  m->th = NULL;
  m->nstr = 0;
  m->nth = m->th_cap = 0;
}

static int stream_rank(mx *m) {
  prof__reader *rd;
  char err[PROF_ERR_MAX];
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
    else if (rec.kind == PROF_REC_THREAD) thread_name(m, rec.tid, rec.str, rec.len);
  }
  for (size_t i = 0; i < m->nth; i++) /* close what never ended */
    prof__exp_crange_close_all(&m->th[i].open, m->r->last_ns, frame_out, &m->th[i]);
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
