/* diff.h — compare two runs (`mlprof diff BASE NEW`): step-time change with
 * a noise estimate, ranges / functions / kernels ranked by the change of
 * their self time per step, memory peak and leak changes, and findings that
 * appeared or disappeared. docs/diff.md describes the rules and the JSON.
 */
#ifndef PROF_DIFF_H
#define PROF_DIFF_H

#include <stdio.h>

#include "analyze/analyze.h"

typedef struct prof__diff_item {
  char *kind;          /* "range", "function", "kernel" */
  char *name;
  double base, cur;    /* ns per step (total ns when a run has no steps); NAN: absent */
  double delta;        /* cur - base, absent counted as 0 */
} prof__diff_item;

typedef struct prof__diff_finding {
  char *id, *severity, *title;
  int appeared;        /* 1: only in NEW, 0: only in BASE */
} prof__diff_finding;

/* A finding of BASE with a predicted saving that is gone or smaller in NEW
 * (diff_savings.c). */
typedef struct prof__diff_saving {
  char *id, *title, *phase; /* phase: the finding's "phase" key, or NULL */
  double predicted;    /* BASE's saving_ns */
  double remaining;    /* NEW's saving_ns of the same finding, 0 when gone */
  int gone;            /* 1: not in NEW */
} prof__diff_saving;

typedef struct prof__diff {
  const char *base_path, *cur_path;
  size_t base_steps, cur_steps;
  int per_step;        /* item values are per step */
  double base_median, cur_median, base_p95, cur_p95; /* ns (steady steps) */
  double median_pct, p95_pct;  /* change in percent of BASE; NAN without steps */
  double noise_pct;    /* 2 standard errors of the median difference, percent of BASE */
  int significant;     /* |median_pct| > noise_pct */
  prof__diff_item *items;      /* sorted by |delta|, largest first */
  size_t nitems;
  /* memory (NAN where a run has no memory data) */
  double base_peak, cur_peak, base_rss, cur_rss, base_leak, cur_leak;
  prof__diff_finding *findings;
  size_t nfindings;
  /* ---- predicted savings (append only; diff_savings.c) ---- */
  double base_mean, cur_mean; /* mean steady step, ns; NAN without steps */
  double saved;        /* base_mean - cur_mean: the drop the fixes realised */
  prof__diff_saving *savings; /* by predicted saving, largest first */
  size_t nsavings;
} prof__diff;

/* Compare. Returns 0 or PROF_ENOMEM; free with prof__diff_free(). */
int prof__diff_compute(prof__diff *d, prof__an *base, prof__an *cur);
/* Write as "text", "json" or "html"; at most `top` items (0: 20). */
int prof__diff_write(const prof__diff *d, const char *format, size_t top, FILE *out);
void prof__diff_free(prof__diff *d);
/* The savings part: BASE's predictions against NEW's mean step. Returns 0 or
 * PROF_ENOMEM. prof__diff_compute() calls it. */
int prof__diff_savings(prof__diff *d, const prof__an *base, const prof__an *cur);
void prof__diff_savings_free(prof__diff *d);

#endif
