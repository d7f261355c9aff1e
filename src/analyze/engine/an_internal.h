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
  int8_t cat;      /* the range's category (an->ranges[range].cat, for the context) */
  uint64_t begin, child;
} an_frame;

typedef struct an_thread {
  an_frame *frames;
  uint32_t depth, cap;
  uint64_t overflow;  /* ranges opened beyond AN_MAX_DEPTH, still open */
  long step;          /* index of the step open on this thread, or -1 */
  uint64_t step_no;   /* its number (for the context) */
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
  int threads;            /* prof__an_threads(): 1 serial, 2 with a decode thread */
  uint32_t range_tid;     /* thread of the latest range event (prof__an_range_tid) */
  int redispatch;         /* a section asked for its event types again (prof__an_dispatch_again) */
} an_priv;

static inline an_priv *an_priv_of(prof__an *an) { return (an_priv *)an; }

/* ---- passes (analyze.c, an_pipe.c) ---- */

typedef void (*prof__an_hook)(prof__an *, void *, const prof__rec *);

/* The sections one kind of record goes to, in section order. */
typedef struct prof__an_hooks {
  uint8_t n;
  uint8_t idx[31];
} prof__an_hooks;

typedef void (*prof__an_events_hook)(prof__an *, void *, const prof__tev *, size_t);

/* Per event type (0..63) and one list for non-event records; the detached
 * sections that take events a batch at a time are in `batch` instead of
 * the per-type lists. */
typedef struct prof__an_dispatch {
  prof__an_hook fn[32];
  void *st[32];
  prof__an_hooks by_type[64], other;
  prof__an_events_hook batch_fn[32];
  void *batch_st[32];
  unsigned nbatch;
  int per_event;       /* some section takes events one at a time */
} prof__an_dispatch;

/* Which sections a dispatch table holds. */
enum { AN_HOOKS_ALL = 0, AN_HOOKS_MAIN = 1, AN_HOOKS_DETACHED = 2 };
void prof__an_dispatch_build(const prof__an *an, int pass, int which, prof__an_dispatch *d);

/* After a record: rebuild d when a section asked (prof__an_dispatch_again). */
static inline void prof__an_dispatch_check(an_priv *p, int pass, int which, prof__an_dispatch *d) {
  if (__builtin_expect(p->redispatch, 0)) {
    p->redispatch = 0;
    prof__an_dispatch_build(&p->pub, pass, which, d);
  }
}

/* Hand one record to the sections of d. */
static inline void prof__an_dispatch_rec(prof__an *an, const prof__an_dispatch *d, const prof__rec *rec) {
  const prof__an_hooks *l = rec->kind == PROF_REC_EVENT ? &d->by_type[rec->ev.type & 63] : &d->other;
  for (unsigned i = 0; i < l->n; i++) d->fn[l->idx[i]](an, d->st[l->idx[i]], rec);
}

/* Progress display of a pass (stderr, large traces on a terminal only). */
typedef struct prof__an_progress {
  int on;
  int last_pct;
  int pass;
} prof__an_progress;
void prof__an_progress_start(prof__an *an, int pass, prof__an_progress *pr);
void prof__an_progress_show(prof__an *an, prof__an_progress *pr, uint64_t offset);
void prof__an_progress_done(prof__an_progress *pr);

/* Threads the analyzer reads a trace with: 1 (serial: one thread decodes
 * and analyses) or 2 (a decode thread feeds the analysing one). From
 * MLPROF_ANALYZE_THREADS (1 forces serial; unset or 0: 2 when the process
 * may run on at least two CPUs). */
int prof__an_threads(void);

/* One pass with a decode thread (an_pipe.c): the reader, decompression,
 * event decoding and the detached sections' hooks (pass 1) run there; the
 * core model and the other sections here, on batches of records handed
 * over in file order through a bounded ring. Returns the reader's final
 * status as the serial pass does, or 1 when the thread could not be started
 * (nothing was read: the caller runs the serial pass). */
int prof__an_pass_piped(an_priv *p, int pass);

/* Model (model.c). */
void prof__an_model_record(an_priv *p, const prof__rec *rec);
/* Pass 1 over a batch of events: each to the model, then to the sections
 * of d that take its type (the same as prof__an_model_record and
 * prof__an_dispatch_rec per event, with the model's code inlined in the
 * loop: the call per event was a tenth of the analysing thread). */
void prof__an_model_events(an_priv *p, const prof__tev *ev, size_t n, const prof__an_dispatch *d);
void prof__an_model_finish(an_priv *p);
/* Step statistics (step_stats.c): of all steps but index `skip` (SIZE_MAX:
 * none); p->oom without memory. */
void prof__an_step_stats(an_priv *p, prof__step_stats *st, size_t skip);
/* Flag the first step when it took more than twice the median of the rest
 * (needs at least two other steps). */
void prof__an_flag_warmup(an_priv *p);
void prof__an_model_free(an_priv *p);

#endif
