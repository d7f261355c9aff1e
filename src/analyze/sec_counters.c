/* sec_counters.c — the "counters" section: per-thread cumulative counters
 * recorded by the CPU module (COUNTER events named "cpuctr/<counter>", read
 * by the writer thread once per flush period) turned into per-step values
 * on the step's thread: CPU time, page faults, context switches and, with
 * PAPI, cycles, instructions, IPC and last-level cache misses per thousand
 * instructions. A step boundary falls between two readings; the value there
 * is interpolated linearly in time (docs/cpu-sampling.md). */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

#define PREFIX "cpuctr/"
#define MAXC 12

typedef struct reading {
  uint64_t ts;
  double v;
} reading;

typedef struct series {
  uint32_t tid, name;
  reading *r;
  size_t n, cap;
} series;

typedef struct ctr_st {
  series *s;
  size_t ns, cap;
  uint32_t names[MAXC];
  int nnames;
} ctr_st;

static int is_ctr(prof__an *an, uint32_t name) {
  return strncmp(prof__an_str(an, name), PREFIX, sizeof PREFIX - 1) == 0;
}

static series *series_of(ctr_st *c, uint32_t tid, uint32_t name) {
  for (size_t i = 0; i < c->ns; i++)
    if (c->s[i].tid == tid && c->s[i].name == name) return &c->s[i];
  if (c->ns == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    series *p = realloc(c->s, cap * sizeof *p);
    if (!p) return NULL;
    c->s = p;
    c->cap = cap;
  }
  c->s[c->ns] = (series){tid, name, NULL, 0, 0};
  int known = 0;
  for (int i = 0; i < c->nnames; i++) known |= c->names[i] == name;
  if (!known && c->nnames < MAXC) c->names[c->nnames++] = name;
  return &c->s[c->ns++];
}

static void ctr_record(prof__an *an, void *st, const prof__rec *rec) {
  if (rec->kind != PROF_REC_EVENT || rec->ev.type != PROF_EV_COUNTER || !is_ctr(an, rec->ev.name)) return;
  series *s = series_of(st, rec->tid, rec->ev.name);
  if (!s) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    reading *p = realloc(s->r, cap * sizeof *p);
    if (!p) return;
    s->r = p;
    s->cap = cap;
  }
  s->r[s->n++] = (reading){rec->ev.ts, prof__bits_f64(rec->ev.a)};
}

/* Cumulative value at time t (readings are in time order per thread). */
static double value_at(const series *s, uint64_t t) {
  if (!s->n) return 0;
  if (t <= s->r[0].ts) return s->r[0].v;
  for (size_t i = 1; i < s->n; i++) {
    if (s->r[i].ts < t) continue;
    const reading *a = &s->r[i - 1], *b = &s->r[i];
    double f = b->ts > a->ts ? (double)(t - a->ts) / (double)(b->ts - a->ts) : 1;
    return a->v + f * (b->v - a->v);
  }
  return s->r[s->n - 1].v;
}

static const series *find(const ctr_st *c, uint32_t tid, uint32_t name) {
  for (size_t i = 0; i < c->ns; i++)
    if (c->s[i].tid == tid && c->s[i].name == name) return &c->s[i];
  return NULL;
}

static double step_delta(prof__an *an, const ctr_st *c, size_t k, uint32_t name) {
  const prof__step *st = &an->steps[k];
  const series *s = find(c, st->tid, name);
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
  const char *src = NULL, *why = NULL;
  for (size_t i = 0; i < an->meta_count; i++) {
    if (strcmp(an->meta[i].key, "counters.source") == 0) src = an->meta[i].value;
    if (strcmp(an->meta[i].key, "counters.papi_reason") == 0) why = an->meta[i].value;
  }
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
  double tc = 0, tp = 0, ts = 0, wall = 0;
  for (size_t k = 0; k < an->nsteps; k++) {
    tc += cpu ? step_delta(an, c, k, cpu) : 0;
    tp += pf ? step_delta(an, c, k, pf) : 0;
    ts += cs ? step_delta(an, c, k, cs) : 0;
    wall += (double)(an->steps[k].end_ns - an->steps[k].begin_ns);
  }
  double n = (double)an->nsteps;
  fprintf(out, "\n== Counters per step (step thread; %s) ==\n", name_id(an, c, "PAPI_TOT_CYC") ? "PAPI + software" : "software");
  fprintf(out, "  mean CPU time %.2f ms (%.0f%% of wall), %.0f page faults, %.0f context switches\n", tc / n / 1e6,
          wall > 0 ? 100 * tc / wall : 0, tp / n, ts / n);
}

static void ctr_destroy(prof__an *an, void *st) {
  (void)an;
  ctr_st *c = st;
  for (size_t i = 0; i < c->ns; i++) free(c->s[i].r);
  free(c->s);
}

const prof__section prof__sec_counters = {
    .name = "counters",
    .state_size = sizeof(ctr_st),
    .record = ctr_record,
    .text = ctr_text,
    .json = ctr_json,
    .destroy = ctr_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_COUNTER),
};
