/* sec_health_html.h — the HTML model-health panel, fed by the "model"
 * section (sec_health.c) through plain arrays: metric curves per step (train
 * and validation of one metric on one chart), per-tensor RMS over steps
 * (log scale), and a distribution-over-time view per tensor (min..max and
 * mean ± std bands around the mean, like TensorBoard's distributions). */
#ifndef PROF_SEC_HEALTH_HTML_H
#define PROF_SEC_HEALTH_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct prof__mh_metric {
  const char *tag;      /* full tag ("train/loss", "val/loss", "loss") */
  const char *metric;   /* the metric without its split prefix ("loss") */
  int val;              /* 1: a validation split */
  const uint64_t *step; /* n steps (the training step of each value) */
  const double *v;
  size_t n;
} prof__mh_metric;

typedef struct prof__mh_tensor {
  const char *tag, *kind;
  const uint64_t *step; /* n records */
  const double *rms, *mean, *std, *min, *max;
  size_t n;
} prof__mh_tensor;

/* The panel (section id "model"); writes nothing without data. */
void prof__sec_health_html(FILE *out, const prof__mh_metric *m, size_t nm, const prof__mh_tensor *t, size_t nt);

#endif
