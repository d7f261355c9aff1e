/* sec_functions_int.h — the state of the "functions" section and the
 * ranking helpers its report writers share: the text and JSON writers in
 * sec_functions.c and the HTML panel in sec_functions_html.c. Internal to
 * those two files. */
#ifndef PROF_SEC_FUNCTIONS_INT_H
#define PROF_SEC_FUNCTIONS_INT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/sections/functions/sec_functions.h"

#define PROF_FN_WAIT_RATIO 0.5    /* step: CPU/wall below this = waiting */
#define PROF_FN_COMPUTE_RATIO 0.8 /* at least this = compute-bound */
#define PROF_FN_FEW_SAMPLES 100   /* below this, shares get a caveat */

typedef struct prof__fn_tsample {
  uint64_t ts, weight;
  uint32_t tid;
} prof__fn_tsample;

typedef struct prof__fn_func {
  const char *name, *module, *file;
  int line;                 /* the hottest line by self time, else of its heaviest stack */
  uint64_t self, total, stamp;
  const char *mangled;      /* linked name when name is demangled */
  int inlined, python;      /* seen as an inlined frame; a Python function */
  uint64_t line_w;          /* weight of the stack `line` came from (no self time) */
} prof__fn_func;

typedef struct prof__fn_step {
  uint64_t cpu_w, all_w;
  double cpu_ns;  /* the step thread's CPU time from its clock read at the step's begin and end; NAN: not read */
} prof__fn_step;

/* The step thread's CPU clock read at a step boundary (cpuctr/cpu_ns
 * COUNTER events the CPU module writes next to STEP_BEGIN and STEP_END). */
typedef struct prof__fn_bound {
  uint64_t step;
  double begin, end; /* NAN until read */
} prof__fn_bound;

typedef struct prof__fn_st {
  prof__u64map agg[2];      /* (range << 32 | stack) -> weight, per mode */
  uint64_t total[2], samples[2], no_stack[2];
  prof__fn_tsample *ts;     /* cpu-mode samples with time, for steps */
  size_t nts, ts_cap;
  /* finish */
  int mode;
  double period_ns;
  prof__sampled_stack *stacks;
  size_t nstacks;
  prof__fn_func *f;
  size_t nf, f_cap;
  prof__u64map fmap;        /* name hash -> func index + 1 (chained by probing) */
  prof__u64map edges;       /* caller << 32 | callee -> weight */
  prof__u64map rangefn;     /* range << 32 | func -> self weight */
  prof__u64map rangetot;    /* range -> weight */
  prof__u64map lines;       /* func << 32 | line -> self weight */
  prof__u64map pylines;     /* Python view: func << 32 | line of the innermost Python frame -> weight */
  prof__u64map pynative;    /* func << 32 | line -> weight of those samples with a native leaf */
  prof__u64map pylib;       /* func << 40 | line << 12 | module -> weight: native library under a Python line */
  uint64_t py_total;        /* weight of the samples with a Python frame */
  const char **mods;        /* module names of pylib keys */
  size_t nmods;
  prof__fn_step *steps;     /* per step of the analyzer, cpu mode only */
  uint64_t outside_w;       /* weight of the samples outside every step (start-up, evaluation, ...) */
  uint32_t cpu_ns_id;       /* string id of "cpuctr/cpu_ns", 0 until seen */
  prof__u64map last_cpu;    /* tid + 1 -> index + 1 into rd: the thread's last CPU reading */
  struct { uint64_t ts; double v; uint64_t want_end; uint64_t end_ts; int marked, marked_trace; } *rd; /* per thread with readings */
  size_t nrd, rdcap;
  prof__fn_bound *bounds;   /* per step number seen, in order */
  size_t nbounds, bcap;
  prof__u64map bound_at;    /* step number + 1 -> index + 1 into bounds */
  uint64_t total_w;
  uint64_t own_w;           /* samples in the profiler's own code (never a user hot spot) */
  struct prof__fn_ops *ops; /* the operator view (sec_operators.c), NULL until finished */
  struct prof__fn_workers *workers; /* forked workers (sec_workers.c), NULL without */
} prof__fn_st;

typedef struct prof__kv64 {
  uint64_t k, v;
} prof__kv64;

/* Function indexes sorted by self (total = 0) or total weight, descending
 * (malloc'd, s->nf entries; NULL without memory). */
size_t *prof__fn_ranked(const prof__fn_st *s, int total);
/* The entries of a map sorted by value, descending (malloc'd; *n set). */
prof__kv64 *prof__fn_sorted_map(const prof__u64map *m, size_t *n);
/* Top self functions of one range as (func index, weight), at most max. */
size_t prof__fn_range_top(const prof__fn_st *s, uint64_t range, prof__kv64 *top, size_t max);
/* "compute", "mixed" or "waiting" for a step's CPU / wall ratio. */
const char *prof__fn_step_kind(double ratio);
/* CPU ms of the step thread in analyzer step i (clock readings at the step's
 * boundaries when present, else its samples), at most wall_ms. */
double prof__fn_step_cpu_ms(const prof__fn_st *s, size_t i, double wall_ms);
/* sec_functions_steps.c: the step-boundary CPU readings (record hook, for
 * COUNTER / STEP events), the per-step figures after the pass, and their
 * JSON ("steps", "outside_steps_pct" is the caller's) and text lines. */
void prof__fn_steps_record(prof__an *an, prof__fn_st *s, const prof__rec *rec);
void prof__fn_steps_finish(prof__an *an, prof__fn_st *s);
void prof__fn_steps_json(prof__an *an, prof__json *j, const prof__fn_st *s);
void prof__fn_steps_text(prof__an *an, const prof__fn_st *s, FILE *out);

/* The hottest lines of function fi by self weight: (line, weight), at most max. */
size_t prof__fn_hot_lines(const prof__fn_st *s, size_t fi, prof__kv64 *top, size_t max);

/* A function as call paths show it: "forward (train.py)" for Python,
 * "f [inlined]" for an inlined function, else the name (into buf). */
const char *prof__fn_display(const prof__fn_func *f, char *buf, size_t n);
/* The native libraries under one Python line (key: func << 32 | line of
 * pylines) as (module index, weight), heaviest first, at most max. */
size_t prof__fn_py_libs(const prof__fn_st *s, uint64_t key, prof__kv64 *top, size_t max);
/* Name of module index m of the Python view. */
const char *prof__fn_mod_name(const prof__fn_st *s, uint64_t m);

/* The operator view (sec_operators.c): built at finish from the merged
 * stacks; its JSON keys ("operators_pct", "operators"), text lines and
 * HTML table; freed with the section. */
void prof__fn_ops_finish(prof__an *an, prof__fn_st *s);
void prof__fn_ops_json(prof__json *j, const prof__fn_st *s);
void prof__fn_ops_text(const prof__fn_st *s, FILE *out);
void prof__fn_ops_html(const prof__fn_st *s, FILE *out);
void prof__fn_ops_free(prof__fn_st *s);

/* Forked workers sampled from the parent (sec_workers.c): JSON key
 * "workers", a text paragraph and an HTML table; freed with the section. */
void prof__fn_workers_finish(prof__an *an, prof__fn_st *s);
void prof__fn_workers_json(prof__json *j, const prof__fn_st *s);
void prof__fn_workers_text(const prof__fn_st *s, FILE *out);
void prof__fn_workers_html(const prof__fn_st *s, FILE *out);
void prof__fn_workers_free(prof__fn_st *s);

/* The section's HTML panel (sec_functions_html.c). */
void prof__fn_html(prof__an *an, void *st, FILE *out);

/* "perf" (per-thread perf clocks, exact periods) or "timer" (POSIX timers),
 * and the samples a second of sampled time got (sec_functions.c). */
const char *prof__fn_sampler(prof__an *an, const prof__fn_st *s);
double prof__fn_effective_hz(const prof__fn_st *s);

#endif
