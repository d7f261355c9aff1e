/* sec_marks.c — the "annotations" section: what the program recorded with
 * prof_mark and prof_counter, which otherwise appear only in the exports.
 *
 * Per mark name: how many, the first and the last (time and step). Per user
 * counter: how many values, the first and last value, minimum and maximum,
 * and the last value of each step (JSON, HTML). The profiler's own counters
 * ("cpuctr/..." from the CPU module, "mem.*" from the memory module, and the
 * "gpu/" and "res." families) belong to their sections and are left out.
 * Values are kept in file order per name and placed into steps once the
 * step table is complete (the per-step pass). A long trace's readings go
 * to a temporary file past a memory budget (util/spill.h), so the section
 * stays flat in memory whatever the number of readings.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/util/termsafe.h"
#include "analyze/report/html.h"
#include "analyze/util/spill.h"

#define MAX_NAMES 256    /* distinct marks + counters tracked */
#define TEXT_ROWS 12     /* names listed in the text report */
#define MEM_BUDGET (4u << 20) /* bytes of readings kept in memory before they spill */

typedef struct ann_pt {
  uint64_t ts;
  double v;
} ann_pt;

typedef struct ann_entry {
  uint32_t name;
  int counter;         /* 1: prof_counter, 0: prof_mark */
  prof__spill pts;     /* every reading (ann_pt), in file order */
  ann_pt first, last;
  double min, max;
} ann_entry;

/* Whether a counter name is the profiler's own, cached by name id (the
 * string of an id can change with a later STRING record: those clear it). */
#define OWN_CACHE 64
typedef struct own_slot {
  uint32_t name;
  int8_t own;          /* -1: empty, else profilers_own() of the name */
} own_slot;

typedef struct ann_st {
  ann_entry e[MAX_NAMES];
  size_t ne;
  uint64_t skipped;    /* events of names past MAX_NAMES */
  own_slot own[OWN_CACHE];
  int own_ready;       /* own[] initialised */
  prof__spill_pool pool;
  int per_step_lost;   /* readings could not be read back: per_step left out */
} ann_st;

static int profilers_own(const char *name) {
  static const char *const pre[] = {"cpuctr/", "mem.", "gpu/", "gpu.", "res.", "mlprof."};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (strncmp(name, pre[i], strlen(pre[i])) == 0) return 1;
  return 0;
}

static int counter_is_own(prof__an *an, ann_st *s, uint32_t name) {
  own_slot *o = &s->own[name % OWN_CACHE];
  if (o->own < 0 || o->name != name) {
    o->name = name;
    o->own = (int8_t)profilers_own(prof__an_str(an, name));
  }
  return o->own;
}

static ann_entry *entry_of(ann_st *s, uint32_t name, int counter) {
  for (size_t i = 0; i < s->ne; i++)
    if (s->e[i].name == name && s->e[i].counter == counter) return &s->e[i];
  if (s->ne == MAX_NAMES) return NULL;
  ann_entry *e = &s->e[s->ne++];
  *e = (ann_entry){.name = name, .counter = counter, .pts = PROF_SPILL_INIT(sizeof(ann_pt)), .min = INFINITY, .max = -INFINITY};
  return e;
}

static void ann_record(prof__an *an, void *st, const prof__rec *rec) {
  ann_st *s = st;
  if (!s->own_ready) {
    for (int i = 0; i < OWN_CACHE; i++) s->own[i].own = -1;
    prof__spill_pool_init(&s->pool, MEM_BUDGET);
    s->own_ready = 1;
  }
  if (rec->kind == PROF_REC_STRING && s->own[rec->id % OWN_CACHE].name == rec->id) s->own[rec->id % OWN_CACHE].own = -1;
  if (rec->kind != PROF_REC_EVENT) return;
  int counter = rec->ev.type == PROF_EV_COUNTER;
  if (!counter && rec->ev.type != PROF_EV_MARK) return;
  if (counter && counter_is_own(an, s, rec->ev.name)) return;
  double v = counter ? prof__bits_f64(rec->ev.a) : 1;
  if (counter && !isfinite(v)) return;
  ann_entry *e = entry_of(s, rec->ev.name, counter);
  if (!e) {
    s->skipped++;
    return;
  }
  ann_pt pt = {rec->ev.ts, v};
  if (prof__spill_push(&s->pool, &e->pts, &pt)) return;
  if (e->pts.n == 1) e->first = pt;
  e->last = pt;
  if (v < e->min) e->min = v;
  if (v > e->max) e->max = v;
}

/* The step number at time ts, or -1 outside every step. */
static long long step_no(prof__an *an, uint64_t ts) {
  long k = prof__an_step_at(an, ts);
  return k < 0 ? -1 : (long long)an->steps[k].number;
}

static double secs(const prof__an *an, uint64_t ts) { return ts > an->first_ns ? (double)(ts - an->first_ns) / 1e9 : 0; }

/* ---- JSON ------------------------------------------------------------------ */

static void json_when(prof__an *an, prof__json *j, const char *k_s, const char *k_step, uint64_t ts) {
  prof__json_knum(j, k_s, secs(an, ts));
  long long st = step_no(an, ts);
  if (st >= 0) prof__json_kuint(j, k_step, (uint64_t)st);
}

/* Per step: marks count, counters the last value in the step. Points are in
 * file order, which is time order per thread. */
static void json_per_step(prof__an *an, ann_st *s, prof__json *j, const ann_entry *e) {
  prof__json_key(j, "per_step");
  prof__json_arr_begin(j);
  long long cur = -1;
  double acc = 0;
  prof__spill_iter it;
  prof__spill_iter_begin(&it, &s->pool, &e->pts);
  for (;;) {
    const ann_pt *pt = prof__spill_next(&it);
    long long st = pt ? step_no(an, pt->ts) : -2;
    if (st != cur && cur >= 0) {
      prof__json_obj_begin(j);
      prof__json_kuint(j, "step", (uint64_t)cur);
      prof__json_knum(j, e->counter ? "last" : "count", acc);
      prof__json_obj_end(j);
    }
    if (!pt) break;
    if (st != cur) acc = 0;
    cur = st;
    acc = e->counter ? pt->v : acc + 1;
  }
  if (prof__spill_iter_end(&it)) s->per_step_lost = 1;
  prof__json_arr_end(j);
}

static void ann_json(prof__an *an, void *st, prof__json *j) {
  ann_st *s = st;
  if (!s->ne) return;
  prof__json_key(j, "annotations");
  prof__json_obj_begin(j);
  for (int counter = 0; counter < 2; counter++) {
    prof__json_key(j, counter ? "counters" : "marks");
    prof__json_arr_begin(j);
    for (size_t i = 0; i < s->ne; i++) {
      const ann_entry *e = &s->e[i];
      if (e->counter != counter || !e->pts.n) continue;
      prof__json_obj_begin(j);
      prof__json_kstr(j, "name", prof__an_str(an, e->name));
      prof__json_kuint(j, "count", e->pts.n);
      json_when(an, j, "first_s", "first_step", e->first.ts);
      json_when(an, j, "last_s", "last_step", e->last.ts);
      if (counter) {
        prof__json_knum(j, "first", e->first.v);
        prof__json_knum(j, "last", e->last.v);
        prof__json_knum(j, "min", e->min);
        prof__json_knum(j, "max", e->max);
      }
      json_per_step(an, s, j, e);
      prof__json_obj_end(j);
    }
    prof__json_arr_end(j);
  }
  if (s->skipped) prof__json_kuint(j, "events_of_names_not_tracked", s->skipped);
  /* a reading that could not be read back from the temporary file */
  if (s->per_step_lost) prof__json_kbool(j, "per_step_incomplete", 1);
  prof__json_obj_end(j);
}

/* ---- text ------------------------------------------------------------------ */

static void text_when(prof__an *an, FILE *out, uint64_t ts) {
  long long st = step_no(an, ts);
  if (st >= 0) fprintf(out, "step %lld (%.3f s)", st, secs(an, ts));
  else fprintf(out, "%.3f s, outside steps", secs(an, ts));
}

static void ann_text(prof__an *an, void *st, FILE *out) {
  ann_st *s = st;
  if (!s->ne) return;
  fputs("\nMarks and counters (prof_mark, prof_counter; per step in the JSON and HTML reports)\n", out);
  size_t shown = 0;
  for (int counter = 0; counter < 2; counter++)
    for (size_t i = 0; i < s->ne && shown < TEXT_ROWS; i++) {
      const ann_entry *e = &s->e[i];
      if (e->counter != counter || !e->pts.n) continue;
      shown++;
      char nm[PROF_TERM_NAME];
      fprintf(out, "  %-7s %-28.28s %6zu %s; first ", counter ? "counter" : "mark",
              prof__term_name(nm, sizeof nm, prof__an_str(an, e->name)), e->pts.n,
              counter ? (e->pts.n == 1 ? "value " : "values") : (e->pts.n == 1 ? "time  " : "times "));
      text_when(an, out, e->first.ts);
      if (counter) fprintf(out, " = %.6g", e->first.v);
      if (e->pts.n > 1) {
        fputs(", last ", out);
        text_when(an, out, e->last.ts);
        if (counter) fprintf(out, " = %.6g; range %.6g .. %.6g", e->last.v, e->min, e->max);
      }
      fputc('\n', out);
    }
  if (shown < s->ne) fprintf(out, "  ... %zu more in the JSON report\n", s->ne - shown);
}

/* ---- HTML ------------------------------------------------------------------ */

static void td_when(prof__an *an, FILE *out, uint64_t ts) {
  char b[64];
  long long st = step_no(an, ts);
  if (st >= 0) snprintf(b, sizeof b, "step %lld (%.3f s)", st, secs(an, ts));
  else snprintf(b, sizeof b, "%.3f s", secs(an, ts));
  prof__html_td_num(out, secs(an, ts), b);
}

static void td_val(FILE *out, double v) {
  char b[32];
  snprintf(b, sizeof b, "%.6g", v);
  prof__html_td_num(out, v, b);
}

static void ann_html(prof__an *an, void *st, FILE *out) {
  ann_st *s = st;
  if (!s->ne) return;
  prof__html_section_begin(out, "annotations", "Marks and counters");
  fputs("<p class=\"note\">What the program recorded with <code>prof_mark</code> and <code>prof_counter</code>; "
        "the per-step values are in the JSON report.</p>\n",
        out);
  static const char *const h[] = {"kind", "name", "count", "first", "last", "first value", "last value", "min", "max"};
  prof__html_table_begin(out, h, 9);
  for (size_t i = 0; i < s->ne; i++) {
    const ann_entry *e = &s->e[i];
    if (!e->pts.n) continue;
    char b[32];
    fputs("<tr>", out);
    prof__html_td(out, e->counter ? "counter" : "mark");
    prof__html_td(out, prof__an_str(an, e->name));
    snprintf(b, sizeof b, "%zu", e->pts.n);
    prof__html_td_num(out, (double)e->pts.n, b);
    td_when(an, out, e->first.ts);
    td_when(an, out, e->last.ts);
    if (e->counter) {
      td_val(out, e->first.v);
      td_val(out, e->last.v);
      td_val(out, e->min);
      td_val(out, e->max);
    } else {
      for (int k = 0; k < 4; k++) prof__html_td(out, "");
    }
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
}

static void ann_destroy(prof__an *an, void *st) {
  (void)an;
  ann_st *s = st;
  for (size_t i = 0; i < s->ne; i++) prof__spill_free(&s->pool, &s->e[i].pts);
  prof__spill_pool_free(&s->pool);
}

const prof__section prof__sec_marks = {
    .name = "annotations",
    .state_size = sizeof(ann_st),
    .record = ann_record,
    .text = ann_text,
    .json = ann_json,
    .html = ann_html,
    .destroy = ann_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_MARK) | PROF_EVMASK(PROF_EV_COUNTER),
};
