/* export_perfetto.c — a trace as a Perfetto protobuf trace (see
 * export_perfetto.h), written packet by packet while the trace is read
 * again once.
 *
 * Tracks: one process track (pid and program of the header), one thread
 * track per thread with its name, a "steps" track under the process, a
 * counter track per counter (under the thread for the per-thread cpuctr/
 * counters, else under the process), and the GPU tracks of
 * export_perfetto_gpu.c. Steps and ranges are TrackEvent slices (a begin and
 * an end event each), marks instant events, counter values counter events,
 * and CPU samples PerfSample packets with interned call stacks
 * (export_perfetto_stacks.c). Timestamps are the trace's own nanoseconds.
 *
 * A slice end ends the innermost open slice of its track, and
 * trace_processor orders events of one timestamp by their place in the
 * file: a range's begin is written when it is read (per thread in time
 * order) and its end when it closes, with the nesting rules of
 * chrome_range.h (ranges left open close 1 ns apart, innermost first; a
 * range never begins before the previous one of its thread ended), so
 * slices nest as recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_perfetto_int.h"
#include "analyze/sections/functions/sec_functions.h"
#include "trace/ev_sample.h"

static const char *const cat_names[PF_NCATS] = {
    "compute", "data", "comm", "io", "other", "step", "mark", "kernel", "gpu_memcpy", "gpu_memset",
    "cuda_runtime", "cuda_driver", "cuda_sync", "gpu_launch"};

/* ---- interning --------------------------------------------------------- */

static uint64_t key_hash(const void *key, size_t n) {
  const uint8_t *s = key;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h >> 2; /* room for probing, never the map's reserved key */
}

uint64_t prof__pf_intern(pf_interner *t, const void *key, size_t n, int *fresh) {
  uint64_t h = key_hash(key, n), probe = 0;
  *fresh = 0;
  for (;; probe++) {
    uint64_t v = prof__u64map_get(&t->map, h + probe);
    if (!v) break;
    if (t->lens[v - 1] == n && memcmp(t->keys[v - 1], key, n) == 0) return v;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    char **k = realloc(t->keys, cap * sizeof *k);
    if (!k) return 0;
    t->keys = k;
    size_t *l = realloc(t->lens, cap * sizeof *l);
    if (!l) return 0;
    t->lens = l;
    t->cap = cap;
  }
  char *copy = malloc(n + 1);
  if (!copy) return 0;
  memcpy(copy, key, n);
  copy[n] = 0;
  if (prof__u64map_add(&t->map, h + probe, t->n + 1)) {
    free(copy);
    return 0;
  }
  t->keys[t->n] = copy;
  t->lens[t->n] = n;
  *fresh = 1;
  return ++t->n;
}

void prof__pf_interner_free(pf_interner *t) {
  for (size_t i = 0; i < t->n; i++) free(t->keys[i]);
  free(t->keys);
  free(t->lens);
  prof__u64map_free(&t->map);
  *t = (pf_interner){0};
}

void prof__pf_interned_str(pf *p, unsigned field, uint64_t iid, const void *s, size_t n) {
  p->tmp.len = 0;
  prof__exp_pb_varint(&p->tmp, PF_IID, iid);
  prof__exp_pb_bytes(&p->tmp, PF_IID_NAME, s, n);
  prof__exp_pb_bytes(&p->intern, field, p->tmp.p, p->tmp.len);
}

/* The EventName iid of trace string `sid` (its id), interned on first use. */
static uint64_t name_iid(pf *p, uint32_t sid) {
  if (prof__u64map_get(&p->names_sent, sid)) return sid;
  const char *s = prof__an_str(p->an, sid);
  prof__pf_interned_str(p, PF_IN_EVENT_NAMES, sid, s, strlen(s));
  prof__u64map_add(&p->names_sent, sid, 1);
  return sid;
}

static uint64_t dyn_iid(pf *p, const char *s) {
  int fresh;
  uint64_t i = prof__pf_intern(&p->dyn_names, s, strlen(s), &fresh);
  if (!i) {
    p->err = PROF_ENOMEM;
    return 0;
  }
  if (fresh) prof__pf_interned_str(p, PF_IN_EVENT_NAMES, PF_DYN_IID + i, s, strlen(s));
  return PF_DYN_IID + i;
}

/* ---- packets ----------------------------------------------------------- */

/* A packet without a timestamp (track descriptors, the first packet). */
static void pkt_begin_untimed(pf *p) {
  p->pkt.len = p->intern.len = 0;
  p->needs_state = 0;
}

void prof__pf_pkt_begin(pf *p, uint64_t ts) {
  pkt_begin_untimed(p);
  prof__exp_pb_varint(&p->pkt, PF_PKT_TIMESTAMP, ts);
}

static void pkt_write(pf *p, unsigned flags) {
  if (p->intern.len) prof__exp_pb_bytes(&p->pkt, PF_PKT_INTERNED, p->intern.p, p->intern.len);
  prof__exp_pb_varint(&p->pkt, PF_PKT_SEQ_ID, PF_SEQ);
  if (flags) prof__exp_pb_varint(&p->pkt, PF_PKT_SEQ_FLAGS, flags);
  if (p->pkt.oom || p->intern.oom || p->ev.oom || p->msg.oom || p->tmp.oom) p->err = PROF_ENOMEM;
  if (p->err) return;
  uint8_t hdr[11];
  size_t n = 0;
  uint64_t len = p->pkt.len;
  hdr[n++] = PF_TRACE_PACKET << 3 | PROF_PB_LEN;
  do {
    hdr[n++] = (uint8_t)(len & 0x7f) | (len > 0x7f ? 0x80 : 0);
    len >>= 7;
  } while (len);
  if (fwrite(hdr, 1, n, p->out) != n || fwrite(p->pkt.p, 1, p->pkt.len, p->out) != p->pkt.len) p->err = PROF_EIO;
  p->st.packets++;
  p->st.bytes += n + p->pkt.len;
}

void prof__pf_pkt_end(pf *p) { pkt_write(p, p->needs_state || p->intern.len ? PF_SEQ_NEEDS_STATE : 0); }

void prof__pf_track_event(pf *p, uint64_t ts, const pf_te *e) {
  prof__pf_pkt_begin(p, ts);
  prof__buf *ev = &p->ev;
  ev->len = 0;
  if (e->cat >= PF_CAT_FIRST && e->cat < PF_NCATS) {
    prof__exp_pb_varint(ev, PF_TE_CATEGORY_IIDS, (uint64_t)e->cat + 1);
    p->needs_state = 1;
  }
  prof__exp_pb_varint(ev, PF_TE_TYPE, (uint64_t)e->type);
  prof__exp_pb_varint(ev, PF_TE_TRACK, e->track);
  uint64_t iid = e->sid ? name_iid(p, e->sid) : e->dyn ? dyn_iid(p, e->dyn) : 0;
  if (iid) {
    prof__exp_pb_varint(ev, PF_TE_NAME_IID, iid);
    p->needs_state = 1;
  } else if (e->lit) {
    prof__exp_pb_bytes(ev, PF_TE_NAME, e->lit, strlen(e->lit));
  }
  if (e->has_value) prof__exp_pb_f64(ev, PF_TE_DOUBLE_VALUE, e->value);
  if (e->flow_out) prof__exp_pb_fixed64(ev, PF_TE_FLOW_IDS, e->flow_out);
  if (e->flow_in) prof__exp_pb_fixed64(ev, PF_TE_TERMINATING_FLOW_IDS, e->flow_in);
  prof__exp_pb_bytes(&p->pkt, PF_PKT_TRACK_EVENT, ev->p, ev->len);
  prof__pf_pkt_end(p);
  if (e->type == PF_SLICE_BEGIN) p->st.slices++;
  if (e->type == PF_COUNTER) p->st.counters++;
  if (e->flow_out) p->st.flows++;
}

static void track_desc_write(pf *p) {
  prof__exp_pb_bytes(&p->pkt, PF_PKT_TRACK_DESC, p->msg.p, p->msg.len);
  prof__pf_pkt_end(p);
  p->st.tracks++;
}

void prof__pf_track(pf *p, uint64_t uuid, uint64_t parent, const char *name, int counter, int bytes) {
  pkt_begin_untimed(p);
  p->msg.len = 0;
  prof__exp_pb_varint(&p->msg, PF_TD_UUID, uuid);
  if (parent) prof__exp_pb_varint(&p->msg, PF_TD_PARENT, parent);
  if (name) prof__exp_pb_bytes(&p->msg, PF_TD_NAME, name, strlen(name));
  if (counter) {
    p->tmp.len = 0;
    if (bytes) prof__exp_pb_varint(&p->tmp, PF_CD_UNIT, PF_UNIT_SIZE_BYTES);
    prof__exp_pb_bytes(&p->msg, PF_TD_COUNTER, p->tmp.p, p->tmp.len);
  }
  track_desc_write(p);
}

void prof__pf_process_track(pf *p, uint64_t uuid, long long pid, const char *name) {
  pkt_begin_untimed(p);
  p->msg.len = p->tmp.len = 0;
  prof__exp_pb_varint(&p->msg, PF_TD_UUID, uuid);
  prof__exp_pb_varint(&p->tmp, PF_PD_PID, (uint64_t)pid);
  if (name) prof__exp_pb_bytes(&p->tmp, PF_PD_NAME, name, strlen(name));
  prof__exp_pb_bytes(&p->msg, PF_TD_PROCESS, p->tmp.p, p->tmp.len);
  track_desc_write(p);
}

static void thread_track(pf *p, uint64_t uuid, uint32_t tid, const char *name) {
  pkt_begin_untimed(p);
  p->msg.len = p->tmp.len = 0;
  prof__exp_pb_varint(&p->msg, PF_TD_UUID, uuid);
  prof__exp_pb_varint(&p->tmp, PF_THD_PID, (uint64_t)p->pid);
  prof__exp_pb_varint(&p->tmp, PF_THD_TID, tid);
  if (name) prof__exp_pb_bytes(&p->tmp, PF_THD_NAME, name, strlen(name));
  prof__exp_pb_bytes(&p->msg, PF_TD_THREAD, p->tmp.p, p->tmp.len);
  track_desc_write(p);
}

uint64_t prof__pf_new_uuid(pf *p) { return p->next_uuid++; }

/* ---- the fixed part: categories, process, threads, steps ---------------- */

static void first_packet(pf *p) {
  pkt_begin_untimed(p);
  for (int i = 0; i < PF_NCATS; i++) prof__pf_interned_str(p, PF_IN_CATEGORIES, (uint64_t)i + 1, cat_names[i], strlen(cat_names[i]));
  pkt_write(p, PF_SEQ_CLEARED);
}

static void tracks(pf *p) {
  prof__an *an = p->an;
  const char *prog = prof__an_header(an, "program");
  p->proc_uuid = prof__pf_new_uuid(p);
  prof__pf_process_track(p, p->proc_uuid, p->pid, prog && *prog ? prog : "mlprof trace");
  for (size_t i = 0; i < an->nthreads; i++) {
    char buf[64];
    const char *name = an->threads[i].name;
    if (!name) {
      snprintf(buf, sizeof buf, "thread %u", an->threads[i].tid);
      name = buf;
    }
    p->th[i].uuid = prof__pf_new_uuid(p);
    thread_track(p, p->th[i].uuid, an->threads[i].tid, name);
  }
  if (!an->nsteps) return;
  p->steps_uuid = prof__pf_new_uuid(p);
  prof__pf_track(p, p->steps_uuid, p->proc_uuid, "steps", 0, 0);
}

/* Steps back to back on their track: a step never begins before the previous ended. */
static void steps(pf *p) {
  prof__exp_crange_track track = {0};
  for (size_t i = 0; i < p->an->nsteps && !p->err; i++) {
    const prof__step *s = &p->an->steps[i];
    char name[48];
    snprintf(name, sizeof name, "step %llu", (unsigned long long)s->number);
    uint64_t b = prof__exp_crange_track_begin(&track, s->begin_ns), e = s->end_ns > b ? s->end_ns : b;
    pf_te te = {.type = PF_SLICE_BEGIN, .track = p->steps_uuid, .lit = name, .cat = PF_CAT_STEP};
    prof__pf_track_event(p, b, &te);
    te = (pf_te){.type = PF_SLICE_END, .track = p->steps_uuid, .cat = PF_CAT_NONE};
    prof__pf_track_event(p, e, &te);
    prof__exp_crange_track_end(&track, b, e);
  }
}

/* ---- events ------------------------------------------------------------ */

static void range_out(void *ctx, const prof__exp_crange *r, uint64_t end) {
  pf_thread *t = ctx;
  (void)r;
  pf_te te = {.type = PF_SLICE_END, .track = t->uuid, .cat = PF_CAT_NONE};
  prof__pf_track_event(t->p, end, &te);
}

static void range_begin(pf *p, pf_thread *t, const prof__event *ev, uint64_t ts) {
  prof__exp_crange_begin(&t->open, ev->name, ev->cat, ts);
  const prof__exp_crange *r = prof__exp_crange_top(&t->open);
  if (!r) return; /* deeper than kept: its end is skipped too */
  pf_te te = {.type = PF_SLICE_BEGIN, .track = t->uuid, .sid = ev->name, .cat = r->cat};
  if (!te.sid) te.lit = "?";
  prof__pf_track_event(p, r->begin, &te);
}

/* The counter track of `name` (per thread for cpuctr/ counters). */
static uint64_t counter_track(pf *p, size_t ti, uint32_t name) {
  const char *s = prof__an_str(p->an, name);
  int per_thread = strncmp(s, "cpuctr/", 7) == 0;
  uint64_t key = (uint64_t)name << 32 | (per_thread ? ti + 1 : 0);
  uint64_t uuid = prof__u64map_get(&p->counters, key);
  if (uuid) return uuid;
  uuid = prof__pf_new_uuid(p);
  if (prof__u64map_add(&p->counters, key, uuid)) {
    p->err = PROF_ENOMEM;
    return 0;
  }
  size_t n = strlen(s);
  int bytes = n > 6 && strcmp(s + n - 6, "_bytes") == 0;
  prof__pf_track(p, uuid, per_thread ? p->th[ti].uuid : p->proc_uuid, s, 1, bytes);
  return uuid;
}

static void counter(pf *p, size_t ti, const prof__event *ev, uint64_t ts) {
  double v = prof__bits_f64(ev->a);
  if (v != v || v - v != 0) return; /* NaN and infinities: no value to draw */
  uint64_t track = counter_track(p, ti, ev->name);
  if (!track) return;
  pf_te te = {.type = PF_COUNTER, .track = track, .cat = PF_CAT_NONE, .has_value = 1, .value = v};
  prof__pf_track_event(p, ts, &te);
}

static void on_event(pf *p, uint32_t tid, const prof__event *ev) {
  size_t ti = prof__an_thread_index(p->an, tid);
  if (ti == SIZE_MAX) return;
  pf_thread *t = &p->th[ti];
  uint64_t ts = ev->ts;
  /* Ring events of a thread never run backwards; counters and samples keep
   * their own time (the writer thread may stamp them later): as chrome.c. */
  if (ev->type != PROF_EV_COUNTER && ev->type != PROF_EV_SAMPLE) {
    if (ts < t->last_ts) ts = t->last_ts;
    t->last_ts = ts;
  }
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN: range_begin(p, t, ev, ts); break;
  case PROF_EV_RANGE_END: prof__exp_crange_end(&t->open, ev->name, ts, range_out, t); break;
  case PROF_EV_MARK: {
    pf_te te = {.type = PF_INSTANT, .track = t->uuid, .sid = ev->name, .cat = PF_CAT_MARK};
    if (!te.sid) te.lit = "?";
    prof__pf_track_event(p, ts, &te);
    break;
  }
  case PROF_EV_COUNTER: counter(p, ti, ev, ts); break;
  case PROF_EV_SAMPLE:
    if (prof__ev_sample_mode(ev) == p->sample_mode) prof__pf_sample(p, tid, ev);
    break;
  default: break;
  }
}

static int stream(pf *p) {
  prof__rec rec;
  int rc;
  while (!p->err && (rc = prof__reader_next(p->an->reader, &rec)) == 1) {
    if (rec.kind == PROF_REC_EVENT) on_event(p, rec.tid, &rec.ev);
    else if (rec.kind == PROF_REC_CHUNK && rec.chunk_type == PROF_CHUNK_GPU) prof__pf_gpu_chunk(p, rec.data, rec.len);
  }
  if (p->err) return p->err;
  for (size_t i = 0; i < p->an->nthreads; i++) /* close what never ended */
    prof__exp_crange_close_all(&p->th[i].open, p->th[i].last_ts, range_out, &p->th[i]);
  return rc == PROF_ETRUNC ? 0 : rc;
}

static void pf_free(pf *p) {
  for (size_t i = 0; p->th && i < p->an->nthreads; i++) prof__exp_crange_stack_free(&p->th[i].open);
  free(p->th);
  prof__buf_free(&p->pkt);
  prof__buf_free(&p->ev);
  prof__buf_free(&p->msg);
  prof__buf_free(&p->intern);
  prof__buf_free(&p->tmp);
  prof__u64map_free(&p->names_sent);
  prof__u64map_free(&p->counters);
  prof__pf_interner_free(&p->dyn_names);
  prof__pf_stacks_free(p);
  prof__pf_gpu_free(p);
}

int prof__export_perfetto(prof__an *an, FILE *out, prof__pf_stats *stats) {
  if (!an || !out) return PROF_EINVAL;
  int rc = prof__reader_rewind(an->reader);
  if (rc) return rc;
  pf p = {.an = an, .out = out, .pid = prof__an_pid(an), .next_uuid = 1, .sample_mode = -1};
  if (p.pid < 0) p.pid = 1;
  int mode = 0;
  if (prof__functions_stacks(an, NULL, &mode, NULL)) p.sample_mode = mode;
  p.th = calloc(an->nthreads + 1, sizeof *p.th);
  if (!p.th) return PROF_ENOMEM;
  for (size_t i = 0; i < an->nthreads; i++) p.th[i].p = &p, p.th[i].tid = an->threads[i].tid;
  first_packet(&p);
  tracks(&p);
  steps(&p);
  prof__pf_gpu_init(&p);
  rc = p.err ? p.err : stream(&p);
  if (!rc && (fflush(out) || ferror(out))) rc = PROF_EIO;
  if (stats) *stats = p.st;
  pf_free(&p);
  return rc;
}
