/* an_internal.h — the engine's private state (engine/ only): the analysis
 * behind prof__an, per-thread frames and the trace model's entry points.
 * Everything else in the reader uses analyze.h: the public fields of
 * prof__an, the event context (prof__an_ctx) and the helpers shared by
 * sections, findings and writers.
 */
#ifndef PROF_AN_INTERNAL_H
#define PROF_AN_INTERNAL_H

#include "analyze/analyze.h"
#include "analyze/util/hashmap.h"

/* Ids below this live in plain arrays; larger ones (only seen in odd traces)
 * go through the hash map. */
#define AN_DENSE_IDS (1u << 20)
/* Deepest range nesting the analyzer tracks per thread. */
#define AN_MAX_DEPTH PROF_AN_MAX_DEPTH
#define AN_NONE UINT32_MAX

typedef struct an_frame {
  uint32_t range;  /* index into an->ranges */
  uint32_t name;   /* for matching the END */
  uint8_t bucket;  /* PROF_BD_* of the range */
  uint8_t outer;   /* no frame below has this name (prof__ctx_frame) */
  uint64_t begin, child;
} an_frame;

typedef struct an_thread {
  an_frame *frames;
  uint32_t depth, cap;
  uint64_t overflow;  /* ranges opened beyond AN_MAX_DEPTH, still open */
  long step;          /* index of the step open on this thread, or -1 */
  uint64_t attr_ts;   /* breakdown attributed up to here */
  uint64_t last_ts;
  int began;          /* a RANGE_BEGIN was seen on this thread */
  /* the step thread's CPU clock (boundary readings, rec_stepsum.c's rule) */
  int cpu_have;       /* cpu_v is a reading not yet taken by a STEP_BEGIN */
  double cpu_v;
  size_t cpu_wait;    /* index + 1 of the step waiting for its end reading */
} an_thread;

/* Readings of a process-wide memory counter, in file order. */
typedef struct an_series {
  uint64_t *ts;
  double *v;
  size_t n, cap, vcap;
} an_series;

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
  prof__step *sums;       /* steps read from STEPSUM chunks (bounded traces) */
  size_t nsums, sumcap;
  int step_begun;         /* a STEP_BEGIN was seen */
  /* per-step CPU and memory: the counters' string ids (0: not defined),
   * the CPU clock at each step's begin, and the memory series */
  uint32_t id_cpu, id_rss, id_live;
  double *step_cpu0;      /* parallel to pub.steps: CPU clock at the begin (NAN: none) */
  size_t cpu0cap;
  an_series rss, live;
  int oom;
} an_priv;

static inline an_priv *an_priv_of(prof__an *an) { return (an_priv *)an; }

/* Model (model.c). */
void prof__an_model_record(an_priv *p, const prof__rec *rec);
void prof__an_model_finish(an_priv *p);
void prof__an_model_free(an_priv *p);

#endif
