/* test_analyze_tb.h — a tiny trace builder for the analyzer, exporter and
 * CLI tests: writes hand-made traces with the real trace writer so every
 * expected number is known by construction. Header-only (static functions).
 */
#ifndef TEST_ANALYZE_TB_H
#define TEST_ANALYZE_TB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "mlprof.h"
#include "trace/trace.h"

typedef struct tb {
  prof__tw *w;
  const char *path;
} tb;

/* A trace with the standard header plus `extra` (n entries, up to 8). */
static inline tb tb_open_with(const char *stem, const prof__kv *extra, size_t n) {
  tb t;
  char err[256];
  const char *path = th_tmp_path(stem, ".mlpt"); /* one of 8 rotating buffers */
  prof__kv hdr[14] = {{"program", "unit-train"}, {"pid", "4242"}, {"hostname", "testhost"},
                      {"clock", "CLOCK_MONOTONIC"}, {"cmdline", "unit-train --epochs 1"}, {"version", "0.1.0"}};
  size_t nh = 6;
  for (size_t i = 0; i < n && nh < 14; i++) hdr[nh++] = extra[i];
  t.w = prof__tw_open(path, hdr, nh, err);
  if (!t.w) {
    fprintf(stderr, "tb_open: %s\n", err);
    abort();
  }
  t.path = path;
  return t;
}

static inline tb tb_open(const char *stem) { return tb_open_with(stem, NULL, 0); }

static inline void tb_str(tb *t, uint32_t id, const char *s) {
  if (prof__tw_string(t->w, id, s, strlen(s))) abort();
}

static inline void tb_ev(tb *t, uint32_t tid, uint64_t ts, int type, uint32_t name, int cat, uint64_t a) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = (uint8_t)type;
  e.name = name;
  e.cat = (uint8_t)cat;
  e.a = a;
  if (prof__tw_events(t->w, tid, &e, 1)) abort();
}

/* Shorthands: range begin/end, step begin/end, mark, counter. */
static inline void tb_b(tb *t, uint32_t tid, uint64_t ts, uint32_t name, int cat) {
  tb_ev(t, tid, ts, PROF_EV_RANGE_BEGIN, name, cat, 0);
}
static inline void tb_e(tb *t, uint32_t tid, uint64_t ts, uint32_t name) {
  tb_ev(t, tid, ts, PROF_EV_RANGE_END, name, 0, 0);
}
static inline void tb_sb(tb *t, uint32_t tid, uint64_t ts, uint64_t n) {
  tb_ev(t, tid, ts, PROF_EV_STEP_BEGIN, 0, 0, n);
}
static inline void tb_se(tb *t, uint32_t tid, uint64_t ts, uint64_t n) {
  tb_ev(t, tid, ts, PROF_EV_STEP_END, 0, 0, n);
}
static inline void tb_mark(tb *t, uint32_t tid, uint64_t ts, uint32_t name) {
  tb_ev(t, tid, ts, PROF_EV_MARK, name, 0, 0);
}
static inline void tb_counter(tb *t, uint32_t tid, uint64_t ts, uint32_t name, double v) {
  tb_ev(t, tid, ts, PROF_EV_COUNTER, name, 0, prof__f64_bits(v));
}

static inline void tb_thread_named(tb *t, uint32_t tid, const char *name, uint64_t lost) {
  if (prof__tw_thread(t->w, tid, name, lost, 0)) abort();
}

static inline void tb_flush(tb *t) {
  if (prof__tw_flush(t->w)) abort();
}

/* Close with a footer (misuse count given); returns the path. */
static inline const char *tb_close(tb *t, const char *misuse) {
  prof__kv f[] = {{"events_written", "0"}, {"events_lost", "0"}, {"misuse", misuse}, {"end_ns", "0"}};
  if (prof__tw_close(t->w, f, 4)) abort();
  t->w = NULL;
  return t->path;
}

/* Flush and stop without a footer, as a crash would. */
static inline const char *tb_abort(tb *t) {
  tb_flush(t);
  prof__tw_abort(t->w);
  t->w = NULL;
  return t->path;
}

#endif
