/* chrome_range.c — ranges in Chrome Trace Event JSON: one range as a
 * complete event or, at zero length, a begin/end pair, and the stack of a
 * thread's open ranges that closes ranges ending at one instant 1 ns apart,
 * innermost first, and begins a range after the thread's last end. chrome_range.h says why. */
#include <stdio.h>
#include <stdlib.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/export/chrome_range.h"

static void put_us(prof__json *j, const char *key, uint64_t ns) {
  char buf[40];
  snprintf(buf, sizeof buf, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  prof__json_key(j, key);
  prof__json_raw(j, buf);
}

/* Plain text (printable ASCII without quote or backslash) needs no
 * escaping: the common case takes one snprintf instead of the JSON writer's
 * calls. */
static int plain(const char *s, size_t max) {
  size_t n = 0;
  for (; *s; s++, n++)
    if (n == max || (unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\') return 0;
  return 1;
}

static void head(prof__json *j, long long pid, uint64_t tid, const char *name, const char *ph) {
  prof__json_obj_begin(j);
  prof__json_kstr(j, "name", name);
  prof__json_kstr(j, "ph", ph);
  prof__json_kint(j, "pid", pid);
  prof__json_kuint(j, "tid", tid);
}

static void tail(prof__json *j, prof__exp_crange_args args, const void *ctx) {
  if (args) {
    prof__json_key(j, "args");
    prof__json_obj_begin(j);
    args(j, ctx);
    prof__json_obj_end(j);
  }
  prof__json_obj_end(j);
}

void prof__exp_crange_write(prof__json *j, long long pid, uint64_t tid, const char *name, const char *cat,
                            uint64_t b, uint64_t e, prof__exp_crange_args args, const void *ctx) {
  if (e < b) e = b;
  if (e == b) {
    head(j, pid, tid, name, "B");
    prof__json_kstr(j, "cat", cat);
    put_us(j, "ts", b);
    tail(j, args, ctx);
    head(j, pid, tid, name, "E");
    put_us(j, "ts", b);
    tail(j, args, ctx);
    return;
  }
  if (!args && plain(name, 400) && plain(cat, 64)) {
    char buf[640];
    uint64_t d = e - b;
    snprintf(buf, sizeof buf,
             "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%lld,\"tid\":%llu,\"cat\":\"%s\",\"ts\":%llu.%03llu,"
             "\"dur\":%llu.%03llu}",
             name, pid, (unsigned long long)tid, cat, (unsigned long long)(b / 1000), (unsigned long long)(b % 1000),
             (unsigned long long)(d / 1000), (unsigned long long)(d % 1000));
    prof__json_raw(j, buf);
    return;
  }
  head(j, pid, tid, name, "X");
  prof__json_kstr(j, "cat", cat);
  put_us(j, "ts", b);
  put_us(j, "dur", e - b);
  tail(j, args, ctx);
}

uint64_t prof__exp_crange_track_begin(const prof__exp_crange_track *t, uint64_t b) {
  return t->any && b <= t->last_end && t->last_end < UINT64_MAX ? t->last_end + 1 : b;
}

void prof__exp_crange_track_end(prof__exp_crange_track *t, uint64_t b, uint64_t e) {
  if (e <= b) return; /* a begin/end pair: its end is exact */
  if (!t->any || e > t->last_end) t->last_end = e;
  t->any = 1;
}

void prof__exp_crange_begin(prof__exp_crange_stack *s, uint32_t name, uint8_t cat, uint64_t ts) {
  ts = prof__exp_crange_track_begin(&s->track, ts);
  if (s->overflow || s->depth == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    prof__exp_crange *f = !s->overflow && cap <= PROF_AN_MAX_DEPTH ? realloc(s->f, cap * sizeof *f) : NULL;
    if (!f) {
      s->overflow++;
      return;
    }
    s->f = f;
    s->cap = cap;
  }
  s->f[s->depth++] = (prof__exp_crange){name, cat < PROF_CAT_COUNT ? cat : PROF_CAT_OTHER, 0, ts, 0, 0};
}

prof__exp_crange *prof__exp_crange_top(prof__exp_crange_stack *s) {
  return s->depth && !s->overflow ? &s->f[s->depth - 1] : NULL;
}

/* Close the ranges above depth `to` at ts, ts + 1, ... innermost first. */
static void close_to(prof__exp_crange_stack *s, uint32_t to, uint64_t ts, prof__exp_crange_out out, void *ctx) {
  for (uint64_t k = 0; s->depth > to; k++) {
    const prof__exp_crange *r = &s->f[--s->depth];
    uint64_t e = ts + k < ts ? UINT64_MAX : ts + k;
    if (e < r->begin) e = r->begin; /* a begin moved past this end: zero length */
    prof__exp_crange_track_end(&s->track, r->begin, e);
    out(ctx, r, e);
  }
}

void prof__exp_crange_end(prof__exp_crange_stack *s, uint32_t name, uint64_t ts, prof__exp_crange_out out, void *ctx) {
  if (s->overflow) {
    s->overflow--;
    return;
  }
  uint32_t k = s->depth, stop = s->depth > 8 ? s->depth - 8 : 0;
  while (k > stop && s->f[k - 1].name != name) k--;
  if (k == stop) return; /* END without BEGIN: nothing to draw */
  close_to(s, k - 1, ts, out, ctx);
}

void prof__exp_crange_close_all(prof__exp_crange_stack *s, uint64_t ts, prof__exp_crange_out out, void *ctx) {
  close_to(s, 0, ts, out, ctx);
}

void prof__exp_crange_stack_free(prof__exp_crange_stack *s) {
  free(s->f);
  *s = (prof__exp_crange_stack){0};
}
