/* sec_health.h — the "model" (training health) section's state, shared by
 * its record pass and findings (sec_health.c) and its text and JSON output
 * (sec_health_out.c).
 */
#ifndef MLPROF_SEC_MODEL_H
#define MLPROF_SEC_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "trace/rec_hist.h"

#define SERIES_MAX 200            /* points per series in the reports */

typedef struct spoint {
  uint64_t step1;
  double v;
} spoint;

typedef struct stag {
  uint32_t id;
  spoint *p;
  size_t n, cap;
} stag;

typedef struct hrow {
  uint64_t step1, count, zeros, nan, inf, units, dead;
  double min, max, mean, std, rms;
} hrow;

typedef struct htag {
  uint32_t id;
  int kind;
  hrow *r;
  size_t n, cap;
  prof__hsum last;
} htag;

typedef struct health {
  char id[24];
  char tag[128];
  uint64_t step;
  double value;
  /* the finding as written for this tensor alone; findings of one id on
   * several tensors become one finding naming them all (sec_health.c) */
  char sev[8];
  char title[256];
  char measured[512];
  const char *rec;
} health;

typedef struct model_st {
  stag *s;
  size_t ns, scap;
  htag *h;
  size_t nh, hcap;
  uint64_t bad_chunks;
  health *f;
  size_t nf, fcap;
} model_st;

/* The metric of a validation tag (MLPROF_VAL_PREFIXES), or NULL. */
const char *prof__sec_health_val_metric(const char *tag);
/* "weight", "gradient", "activation" or "other". */
const char *prof__sec_health_kind_name(int k);
/* The section's text and JSON output (sec_health_out.c). */
void prof__sec_health_json(prof__an *an, void *vst, prof__json *j);
void prof__sec_health_text(prof__an *an, void *vst, FILE *out);

#endif
