/* sec_counters.c — the "counters" section: per-thread cumulative counters
 * recorded by the CPU module (COUNTER events named "cpuctr/<counter>", read
 * by the writer thread once per flush period) turned into per-step values
 * on the step's thread: CPU time, page faults, context switches and, with
 * PAPI, cycles, instructions, IPC and last-level cache misses per thousand
 * instructions. A step boundary falls between two readings; the value there
 * is interpolated linearly in time (docs/cpu-sampling.md). The HTML panel
 * shows the per-step values as a table (at most MAX_ROWS steps) and one of
 * them (IPC with PAPI, else CPU time) as a line chart across steps. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/util/termsafe.h"
#include "analyze/report/html_series.h"
#include "analyze/util/hashmap.h"

#define PREFIX "cpuctr/"
#define MAXC 12
#define MAX_ROWS 200 /* steps in the HTML table */

typedef struct reading {
  uint64_t ts;
  double v;
} reading;

typedef struct series {
  uint32_t name;
  reading *r;
  size_t n, cap;
} series;

typedef struct ctr_st {
  series *s;
  size_t ns, cap;
  prof__u64map idx;   /* thread index << 32 | counter name -> index in s + 1 */
  uint32_t names[MAXC];
  int nnames;
} ctr_st;

static int is_ctr(prof__an *an, uint32_t name) {
  return strncmp(prof__an_str(an, name), PREFIX, sizeof PREFIX - 1) == 0;
}

static uint64_t series_key(size_t ti, uint32_t name) { return (uint64_t)ti << 32 | name; }

/* The series of counter `name` on thread index `ti` (< UINT32_MAX, so the
 * key is never UINT64_MAX, which the map cannot hold). */
static series *series_of(ctr_st *c, size_t ti, uint32_t name) {
  uint64_t at = prof__u64map_get(&c->idx, series_key(ti, name));
  if (at) return &c->s[at - 1];
  if (c->ns == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    series *p = realloc(c->s, cap * sizeof *p);
    if (!p) return NULL;
    c->s = p;
    c->cap = cap;
  }
  if (prof__u64map_add(&c->idx, series_key(ti, name), c->ns + 1)) return NULL;
  c->s[c->ns] = (series){name, NULL, 0, 0};
  int known = 0;
  for (int i = 0; i < c->nnames; i++) known |= c->names[i] == name;
  if (!known && c->nnames < MAXC) c->names[c->nnames++] = name;
  return &c->s[c->ns++];
}

static void ctr_record(prof__an *an, void *st, const prof__rec *rec) {
  if (rec->kind != PROF_REC_EVENT || rec->ev.type != PROF_EV_COUNTER || !is_ctr(an, rec->ev.name)) return;
  size_t ti = prof__an_thread_index(an, rec->tid);
  series *s = ti < UINT32_MAX ? series_of(st, ti, rec->ev.name) : NULL;
  if (!s) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    reading *p = realloc(s->r, cap * sizeof *p);
    if (!p) return;
    s->r = p;
    s->cap = cap;
  }
  s->r[s->n++] = (reading){rec->ev.ts, prof__bits_f64(rec->ev.a)};
}

static int by_ts(const void *a, const void *b) {
  const reading *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Readings come from the writer (periodic) and from the step thread itself
 * (at step boundaries), so they arrive out of order: sort each series. */
static void ctr_finish(prof__an *an, void *st) {
  (void)an;
  ctr_st *c = st;
  for (size_t i = 0; i < c->ns; i++) qsort(c->s[i].r, c->s[i].n, sizeof *c->s[i].r, by_ts);
}

/* Cumulative value at time t (readings are in time order per thread),
 * found by bisection: steps x readings would be quadratic. */
static double value_at(const series *s, uint64_t t) {
  if (!s->n) return 0;
  if (t <= s->r[0].ts) return s->r[0].v;
  size_t lo = 1, hi = s->n; /* the first reading at or after t */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->r[mid].ts < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == s->n) return s->r[s->n - 1].v;
  const reading *a = &s->r[lo - 1], *b = &s->r[lo];
  double f = b->ts > a->ts ? (double)(t - a->ts) / (double)(b->ts - a->ts) : 1;
  return a->v + f * (b->v - a->v);
}

static const series *find(const prof__an *an, const ctr_st *c, uint32_t tid, uint32_t name) {
  size_t ti = prof__an_thread_index(an, tid);
  uint64_t at = ti < UINT32_MAX ? prof__u64map_get(&c->idx, series_key(ti, name)) : 0;
  return at ? &c->s[at - 1] : NULL;
}

static double step_delta(prof__an *an, const ctr_st *c, size_t k, uint32_t name) {
  const prof__step *st = &an->steps[k];
  const series *s = find(an, c, st->tid, name);
  return s ? value_at(s, st->end_ns) - value_at(s, st->begin_ns) : 0;
}

static uint32_t name_id(prof__an *an, const ctr_st *c, const char *suffix) {
  for (int i = 0; i < c->nnames; i++)
    if (strcmp(prof__an_str(an, c->names[i]) + sizeof PREFIX - 1, suffix) == 0) return c->names[i];
  return 0;
}

static void derived(prof__an *an, const ctr_st *c, size_t k, prof__json *j) {
  uint32_t cyc = name_id(an, c, "PAPI_TOT_CYC"), ins = name_id(an, c, "PAPI_TOT_INS");
  uint32_t llc = name_id(an, c, "PAPI_L3_TCM");
  double vi = ins ? step_delta(an, c, k, ins) : 0;
  if (cyc && ins) {
    double vc = step_delta(an, c, k, cyc);
    if (vc > 0) prof__json_knum(j, "ipc", vi / vc);
  }
  if (llc && vi > 0) prof__json_knum(j, "llc_misses_per_kinst", 1000.0 * step_delta(an, c, k, llc) / vi);
}

static void ctr_json(prof__an *an, void *st, prof__json *j) {
  ctr_st *c = st;
  if (!c->ns) return;
  const char *src = prof__an_meta(an, "counters.source"), *why = prof__an_meta(an, "counters.papi_reason");
  prof__json_key(j, "counters");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "source", src ? src : "software");
  if (why) prof__json_kstr(j, "papi_reason", why);
  prof__json_key(j, "names");
  prof__json_arr_begin(j);
  for (int i = 0; i < c->nnames; i++) prof__json_str(j, prof__an_str(an, c->names[i]) + sizeof PREFIX - 1);
  prof__json_arr_end(j);
  prof__json_key(j, "per_step");
  prof__json_arr_begin(j);
  for (size_t k = 0; k < an->nsteps; k++) {
    prof__json_obj_begin(j);
    prof__json_kuint(j, "step", an->steps[k].number);
    for (int i = 0; i < c->nnames; i++) {
      const char *nm = prof__an_str(an, c->names[i]) + sizeof PREFIX - 1;
      double d = step_delta(an, c, k, c->names[i]);
      if (strcmp(nm, "cpu_ns") == 0) prof__json_knum(j, "cpu_ms", d / 1e6);
      else if (strcmp(nm, "runq_ns") == 0) prof__json_knum(j, "runq_ms", d / 1e6);
      else prof__json_knum(j, nm, d);
    }
    derived(an, c, k, j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void ctr_text(prof__an *an, void *st, FILE *out) {
  ctr_st *c = st;
  if (!c->ns || !an->nsteps) return;
  uint32_t cpu = name_id(an, c, "cpu_ns"), pf = name_id(an, c, "page_faults"), cs = name_id(an, c, "ctx_switches");
  uint32_t rq = name_id(an, c, "runq_ns");
  double tc = 0, tp = 0, ts = 0, wall = 0, tq = 0;
  for (size_t k = 0; k < an->nsteps; k++) {
    tc += cpu ? step_delta(an, c, k, cpu) : 0;
    tq += rq ? step_delta(an, c, k, rq) : 0;
    tp += pf ? step_delta(an, c, k, pf) : 0;
    ts += cs ? step_delta(an, c, k, cs) : 0;
    wall += (double)(an->steps[k].end_ns - an->steps[k].begin_ns);
  }
  double n = (double)an->nsteps;
  int papi = name_id(an, c, "PAPI_TOT_CYC") != 0;
  const char *why = prof__an_meta(an, "counters.papi_reason");
  fprintf(out, "\nCounters per step (step thread; %s)\n", papi ? "PAPI + software" : "software");
  char w[PROF_TERM_NAME];
  if (!papi)
    fprintf(out, "  software counters only: %s\n",
            prof__term_name(w, sizeof w, why ? why : "PAPI was not used in this build or run"));
  fprintf(out, "  mean CPU time %.2f ms (%.0f%% of wall), %.0f page faults, %.0f context switches\n", tc / n / 1e6,
          wall > 0 ? 100 * tc / wall : 0, tp / n, ts / n);
  if (rq && cpu && wall > 0) {
    /* Off-CPU time is either waiting for a core (run queue: the machine is
     * oversubscribed) or blocked (I/O, a lock, a sleep, another thread). */
    double off = wall - tc > 0 ? wall - tc : 0, queued = tq < off ? (tq > 0 ? tq : 0) : off;
    fprintf(out,
            "  off-CPU %.2f ms per step (%.0f%% of wall): %.2f ms waiting for a core (run queue), %.2f ms blocked "
            "(I/O, locks, sleeping, waiting on other threads)\n",
            off / n / 1e6, 100 * off / wall, queued / n / 1e6, (off - queued) / n / 1e6);
  }
}

/* ---- HTML ------------------------------------------------------------------ */

/* Per-step derived values: IPC and LLC misses per 1000 instructions; -1 when
 * the counters are missing. */
static void derived_vals(prof__an *an, const ctr_st *c, size_t k, double *ipc, double *mpki) {
  uint32_t cyc = name_id(an, c, "PAPI_TOT_CYC"), ins = name_id(an, c, "PAPI_TOT_INS"), llc = name_id(an, c, "PAPI_L3_TCM");
  double vi = ins ? step_delta(an, c, k, ins) : 0, vc = cyc ? step_delta(an, c, k, cyc) : 0;
  *ipc = cyc && ins && vc > 0 ? vi / vc : -1;
  *mpki = llc && vi > 0 ? 1000.0 * step_delta(an, c, k, llc) / vi : -1;
}

static void html_facts(prof__an *an, const ctr_st *c, FILE *out) {
  const char *src = prof__an_meta(an, "counters.source"), *why = prof__an_meta(an, "counters.papi_reason");
  char b[256];
  int k = 0;
  fputs("<table class=\"facts\">", out);
  prof__html_fact(out, "source", src && strcmp(src, "papi+software") == 0 ? "PAPI hardware counters + software counters"
                                                                         : "software counters (thread CPU time, run-queue wait, page faults, context switches)");
  if (why) prof__html_fact(out, "PAPI unavailable", why);
  b[0] = 0;
  for (int i = 0; i < c->nnames && k < (int)sizeof b - 2; i++)
    k += snprintf(b + k, sizeof b - (size_t)k, "%s%s", i ? ", " : "", prof__an_str(an, c->names[i]) + sizeof PREFIX - 1);
  prof__html_fact(out, "counters", b);
  fputs("</table>\n", out);
  fputs("<p class=\"note\">Values of the thread that ran each step. Counters are read once per writer period and "
        "interpolated at step boundaries, so counts of steps shorter than that period are estimates.</p>\n",
        out);
}

static void td_val(FILE *out, double v, const char *fmt) {
  char b[32];
  if (v < 0) {
    prof__html_td(out, "–");
    return;
  }
  snprintf(b, sizeof b, fmt, v);
  prof__html_td_num(out, v, b);
}

static void html_table(prof__an *an, const ctr_st *c, FILE *out, int papi) {
  const char *h[MAXC + 5];
  size_t nh = 0;
  h[nh++] = "step";
  h[nh++] = "wall";
  for (int i = 0; i < c->nnames; i++) {
    const char *nm = prof__an_str(an, c->names[i]) + sizeof PREFIX - 1;
    h[nh++] = strcmp(nm, "cpu_ns") == 0 ? "CPU time" : strcmp(nm, "runq_ns") == 0 ? "waiting for a core" : nm;
  }
  if (papi) h[nh++] = "IPC", h[nh++] = "LLC misses / 1k instr.";
  prof__html_table_begin(out, h, nh);
  for (size_t k = 0; k < an->nsteps && k < MAX_ROWS; k++) {
    char b[32];
    fputs("<tr>", out);
    snprintf(b, sizeof b, "%llu", (unsigned long long)an->steps[k].number);
    prof__html_td_num(out, (double)an->steps[k].number, b);
    prof__html_td_ns(out, an->steps[k].end_ns - an->steps[k].begin_ns);
    for (int i = 0; i < c->nnames; i++) {
      const char *nm = prof__an_str(an, c->names[i]) + sizeof PREFIX - 1;
      double d = step_delta(an, c, k, c->names[i]);
      if (strcmp(nm, "cpu_ns") == 0 || strcmp(nm, "runq_ns") == 0) prof__html_td_ns(out, prof__an_d2ns(d));
      else td_val(out, d, d >= 100 ? "%.0f" : "%.1f");
    }
    if (papi) {
      double ipc, mpki;
      derived_vals(an, c, k, &ipc, &mpki);
      td_val(out, ipc, "%.2f");
      td_val(out, mpki, "%.2f");
    }
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  if (an->nsteps > MAX_ROWS)
    fprintf(out, "<p class=\"note\">The first %d of %zu steps; all are in the JSON report.</p>\n", MAX_ROWS, an->nsteps);
}

/* IPC per step when PAPI counted cycles and instructions, else CPU time:
 * one bar per step, the step number on the x axis. */
static void html_chart(prof__an *an, const ctr_st *c, FILE *out, int papi) {
  uint32_t cpu = name_id(an, c, "cpu_ns");
  if (!papi && !cpu) return;
  double *v = malloc(an->nsteps * sizeof *v);
  uint64_t *ids = malloc(an->nsteps * sizeof *ids);
  size_t n = 0;
  for (size_t k = 0; v && ids && k < an->nsteps; k++) {
    double ipc = 0, mpki;
    if (papi) derived_vals(an, c, k, &ipc, &mpki);
    v[n] = papi ? (ipc > 0 ? ipc : 0) : step_delta(an, c, k, cpu) / 1e6;
    ids[n++] = an->steps[k].number;
  }
  if (v && ids && n) {
    const char *title = papi ? "Instructions per cycle per step" : "CPU time of the step thread per step";
    fprintf(out, "<h3>%s</h3>\n", title);
    prof__chart ch = {.title = title, .unit = papi ? "IPC" : "ms", .n = n, .nseries = 1, .v = v, .ids = ids,
                      .id_fmt = "step %llu", .peak = -1};
    prof__svg_bars(out, &ch);
  }
  free(v);
  free(ids);
}

static void ctr_html(prof__an *an, void *st, FILE *out) {
  ctr_st *c = st;
  if (!c->ns) return;
  int papi = name_id(an, c, "PAPI_TOT_CYC") && name_id(an, c, "PAPI_TOT_INS");
  prof__html_section_begin(out, "counters", "Counters per step");
  html_facts(an, c, out);
  if (an->nsteps) {
    html_chart(an, c, out, papi);
    html_table(an, c, out, papi);
  } else {
    fputs("<p>The trace has no steps: counters are reported per step.</p>\n", out);
  }
  prof__html_section_end(out);
}

static void ctr_destroy(prof__an *an, void *st) {
  (void)an;
  ctr_st *c = st;
  for (size_t i = 0; i < c->ns; i++) free(c->s[i].r);
  free(c->s);
  prof__u64map_free(&c->idx);
}

const prof__section prof__sec_counters = {
    .name = "counters",
    .state_size = sizeof(ctr_st),
    .record = ctr_record,
    .finish = ctr_finish,
    .text = ctr_text,
    .json = ctr_json,
    .html = ctr_html,
    .destroy = ctr_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_COUNTER),
};
