/* an_internal.h — private state of the analyzer shared by its source files
 * (model, findings, report writers, exporters). Not for sections: they use
 * the public fields of prof__an in analyze.h.
 */
#ifndef PROF_AN_INTERNAL_H
#define PROF_AN_INTERNAL_H

#include "analyze/analyze.h"
#include "analyze/util/hashmap.h"

/* Ids below this live in plain arrays; larger ones (only seen in odd traces)
 * go through the hash map. */
#define AN_DENSE_IDS (1u << 20)
/* Deepest range nesting the analyzer tracks per thread. */
#define AN_MAX_DEPTH 4096
#define AN_NONE UINT32_MAX

typedef struct an_frame {
  uint32_t range;  /* index into an->ranges */
  uint32_t name;   /* for matching the END */
  uint8_t bucket;  /* PROF_BD_* of the range */
  uint64_t begin, child;
} an_frame;

typedef struct an_thread {
  an_frame *frames;
  uint32_t depth, cap;
  uint64_t overflow;  /* ranges opened beyond AN_MAX_DEPTH, still open */
  long step;          /* index of the step open on this thread, or -1 */
  uint64_t attr_ts;   /* breakdown attributed up to here */
  uint64_t last_ts;
} an_thread;

typedef struct an_priv {
  prof__an pub;
  an_thread *ts;          /* parallel to pub.threads */
  size_t tcap, thcap;     /* capacities of ts and pub.threads */
  prof__map32 tid_map;         /* tid -> thread index */
  uint32_t last_tid;
  size_t last_ti;         /* SIZE_MAX: no cache */
  prof__u64map open_steps;     /* number of an open step -> thread index + 1 */
  size_t scap;            /* capacity of pub.steps */
  size_t rcap;            /* capacity of pub.ranges and rnext */
  uint32_t *rnext;        /* next range with the same name (other category) */
  uint32_t *rhead;        /* dense: name * PROF_CAT_COUNT + cat -> range index (AN_NONE) */
  uint32_t rhead_cap;
  prof__map32 rhead_big;       /* the same for name ids >= AN_DENSE_IDS */
  prof__map32 str_big;         /* string id >= AN_DENSE_IDS -> index in big_strs */
  char **big_strs;
  size_t nbig, big_cap;
  prof__kv *footer, *meta;
  size_t footer_cap, meta_cap;
  size_t fcap;            /* capacity of pub.findings */
  prof__ctx ctx;          /* of the event being dispatched (prof__an_ctx) */
  int oom;
} an_priv;

static inline an_priv *an_priv_of(prof__an *an) { return (an_priv *)an; }

/* Model (model.c). */
void prof__an_model_record(an_priv *p, const prof__rec *rec);
void prof__an_model_finish(an_priv *p);
void prof__an_model_free(an_priv *p);

/* Core findings (findings.c), after the model is finished. */
void prof__findings_core(prof__an *an);
void prof__findings_sort(prof__an *an);
int prof__severity_rank(const char *sev);

/* Report writers (report_text.c, report_json.c). */
int prof__report_text(prof__an *an, FILE *out);
int prof__report_json(prof__an *an, FILE *out);
/* The JSON report with only the top-level parts named in the NULL-ended
 * list `parts` (core parts by key, sections by name), for readers that need
 * a few keys: a report of a million steps is hundreds of MiB, most of it
 * per-step arrays. */
int prof__report_json_parts(prof__an *an, FILE *out, const char *const *parts);

/* Range indices sorted by self time, largest first (malloc'd; NULL when
 * there are no ranges or memory ran out). */
size_t *prof__ranges_by_self(const prof__an *an);
/* The header pid as a number, or -1. */
long long prof__an_pid(const prof__an *an);

/* Shares as fractions of the total step time (0 when there are no steps). */
double prof__an_share(const prof__an *an, uint64_t ns);
/* Breakdown summed over all steps. */
void prof__an_bd_total(const prof__an *an, uint64_t bd[PROF_BD_COUNT]);

/* Events lost on the threads that ran steps (findings.c). The breakdown and
 * the step findings come from their ranges and step events: when some were
 * lost, the findings in PROF_STEP_WITHHELD are withheld and the writers say
 * so next to the breakdown. */
uint64_t prof__an_step_lost(const prof__an *an);
#define PROF_STEP_WITHHELD "input_bound", "untracked_time", "step_time_variance", "warmup_step"
/* "N events of the step thread were lost: ..." into buf. */
const char *prof__an_step_loss_note(const prof__an *an, char *buf, size_t n);

#endif
