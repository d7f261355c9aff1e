/* sec_memory.h — state of the "memory" report section, shared by its
 * record pass (sec_memory.c), its results and text/JSON writers
 * (sec_memory_out.c) and its HTML panel (sec_memory_html.c).
 */
#ifndef PROF_SEC_MEMORY_H
#define PROF_SEC_MEMORY_H

#include <stdint.h>

#include "analyze/analyze.h"
#include "trace/ev_mem.h"

/* A live block, or an orphan FREE (a FREE read before its ALLOC: threads'
 * events reach the trace in per-thread blocks, not in time order). */
typedef struct mem_blk {
  uintptr_t addr;   /* 0: empty slot */
  uint64_t size;    /* requested bytes (orphans: the FREE's timestamp) */
  double w;         /* weight: 1, or the inverse sampling probability */
  uint32_t site;    /* index into sites */
  uint16_t pool;
  uint8_t early;    /* allocated before the first step began */
  uint32_t range;   /* index + 1 into ranges of the innermost open range when allocated; 0: none */
} mem_blk;

typedef struct mem_blkmap {
  mem_blk *s;
  size_t cap, n;
} mem_blkmap;

/* uint64 key (never 0) -> uint32 index. */
typedef struct mem_idxmap {
  uint64_t *k;
  uint32_t *v;
  size_t cap, n;
} mem_idxmap;

typedef struct mem_site {
  uint32_t stack;
  uint16_t pool;
  double calls, bytes;         /* estimated in sampled mode */
  double live, at_peak;        /* live bytes now / at the heap peak snapshot */
  double temp_calls, temp_bytes;
  double leak_bytes, leak_count;
  double kept_bytes, kept_count; /* still live at exit but retained on purpose (MEM_KEPT_*) */
  int kept_why;                  /* the reason of the largest part of kept_bytes */
} mem_site;

typedef struct mem_thr {
  uintptr_t last_addr;         /* the thread's latest allocation (temporaries) */
  uint16_t last_pool;
  int last_valid;
} mem_thr;

typedef struct mem_step {
  uint64_t number, begin, end; /* end: UINT64_MAX while open */
  double allocs, bytes, live_end;
  int ended;
} mem_step;

/* The memory steps of one step number (finish): the first that ended and
 * the last of them, as indices in steps (SIZE_MAX: none). */
typedef struct mem_stepno {
  uint64_t number;
  size_t first_ended, last;
} mem_stepno;

typedef struct mem_series {
  uint64_t *ts;
  double *v;
  size_t n, cap;
} mem_series;

typedef struct mem_range {
  uint32_t name;
  double allocs, bytes;
  double live, at_peak; /* heap bytes it allocated that are live now / at the heap peak snapshot */
} mem_range;

typedef struct mem_pool {
  char name[64];
  double live, peak, allocs, bytes;
  int seen;
} mem_pool;

enum { MS_LIVE, MS_RSS, MS_CALLS, MS_BYTES, MS_COUNT };

typedef struct mem_state {
  int init;
  int mode;                    /* 0 off, 1 counts, 2 sampled, 3 full, -1 unknown */
  double sample_bytes;
  int any;                     /* saw memory events or counters */
  uint64_t nalloc_events, nfree_events, unmatched_frees, replaced;
  mem_blkmap live, orphans;
  mem_idxmap site_idx, range_idx;
  mem_site *sites;
  size_t nsites, sites_cap;
  mem_thr *thr;                /* by thread index (prof__an_thread_index); zero is the initial state */
  size_t thr_cap;
  mem_step *steps;
  size_t nsteps, steps_cap;
  mem_stepno *by_number;       /* finish: one per step number, sorted by it */
  size_t nby_number;
  mem_range *ranges;
  size_t nranges, ranges_cap;
  mem_pool pools[PROF_MEM_POOLS];
  double heap_live, heap_peak, snap_value;
  uint64_t heap_peak_ts;
  /* where the peak happened: the innermost open range (string id + 1; 0:
   * none) of the thread that allocated (events), or of the thread that last
   * entered or left a range (live-bytes counter); -1 live max not seen */
  uint32_t heap_peak_range, live_peak_range;
  double live_peak_seen;
  uint32_t cur_range;          /* innermost range of the event being read (the engine's context) */
  int peak_pending, snapped;
  double allocs, bytes, frees;
  uint32_t counter_id[MS_COUNT];
  mem_series series[MS_COUNT];
  uint64_t events_seen;
  int oom;
  /* results (finish) */
  uint32_t *leak_order;        /* sites with leaks, by bytes */
  size_t nleaks;
  double leaked_bytes, leaked_count;
  uint32_t *kept_order;        /* sites with retained blocks, by bytes */
  size_t nkept;
  double kept_bytes, kept_count;
  double norange_live, norange_at_peak; /* heap bytes allocated outside every range */
  double growth_per_step;
  int growth_steps;
  /* events lost while recording: figures from events are lower bounds, and
   * the conclusions that need every event are withheld */
  uint64_t lost;
  int withheld;                /* MEM_WITHHELD_* bits */
  /* the heap when the session began (META mem.start_*; start_known 0: not
   * in the trace): live bytes and blocks, the bytes of the large blocks of
   * that time recorded as events at the start, large blocks not recorded */
  int start_known;
  double start_live, start_blocks, start_listed, start_unlisted;
} mem_state;

enum { MEM_WITHHELD_LEAKS = 1, MEM_WITHHELD_GROWTH = 2 };
/* Why and what: "N events lost ...; leak list and growth finding withheld"
 * into buf (empty when nothing was lost). */
const char *prof__sec_mem_loss_note(const mem_state *s, char *buf, size_t n);

extern const char *const prof__sec_mem_series_names[MS_COUNT];

/* Results and writers (sec_memory_out.c). */
void prof__sec_mem_finish(prof__an *an, void *st);
void prof__sec_mem_text(prof__an *an, void *st, FILE *out);
void prof__sec_mem_json(prof__an *an, void *st, prof__json *j);
void prof__sec_mem_html(prof__an *an, void *st, FILE *out);
/* Value of a counter series at ts (last sample at or before), or -1. */
double prof__sec_mem_series_at(const mem_series *s, uint64_t ts);

/* Shared by the writers (sec_memory_out.c defines them). */
enum { MEM_RANK_BYTES, MEM_RANK_CALLS, MEM_RANK_PEAK, MEM_RANK_TEMP };
/* Function names of a stack, innermost first, without profiler frames;
 * returns how many (0 without a stack or without symbolization). */
int prof__sec_mem_stack_names(prof__an *an, uint32_t id, const char **out, int max);
/* Indices of the top sites by MEM_RANK_* `how` into out[]; returns the count. */
size_t prof__sec_mem_top_sites(const mem_state *s, int how, uint32_t *out, size_t max);

/* Why a block still live at exit is retained rather than leaked
 * (sec_memory_attr.c): made while a shared library or a Python module was
 * initialised, before the program's first step, or by the Python
 * interpreter (which does not free every object at exit). */
enum { MEM_KEPT_NO = 0, MEM_KEPT_LIBRARY_INIT, MEM_KEPT_PYTHON_IMPORT, MEM_KEPT_STARTUP, MEM_KEPT_INTERPRETER };
const char *prof__sec_mem_kept_name(int why);

/* What an allocation stack is attributed to (sec_memory_attr.c). */
struct prof__frame;
typedef struct mem_attr {
  const struct prof__frame *frame; /* the first frame that is not allocator code; NULL: no stack */
  const struct prof__frame *py;    /* the Python line: innermost frame of the user's code, else innermost Python frame */
  char op[96];                     /* the innermost PyTorch operator that is not an allocation one; "" none */
  int kept;                        /* MEM_KEPT_* a block of it still live at exit is, apart from STARTUP */
} mem_attr;
void prof__sec_mem_attr(prof__an *an, uint32_t stack, mem_attr *a);
/* A site as one text line: the first meaningful frame and two callers,
 * template names elided, then "[operator, file:line]" where known. */
void prof__sec_mem_site_line(prof__an *an, uint32_t stack, char *buf, size_t len);
/* The attribution keys of a site ("frame", "operator", "python") into the
 * JSON object being written. */
void prof__sec_mem_attr_json(prof__an *an, prof__json *j, uint32_t stack);
/* Retained blocks, and the live bytes at the heap peak by range and by
 * operator: JSON keys of the memory object, and text lines. */
void prof__sec_mem_attr_section_json(prof__an *an, const mem_state *s, prof__json *j);
void prof__sec_mem_attr_text(prof__an *an, const mem_state *s, FILE *out);

/* Name of a pool id taken from the trace (the event's aux field, up to
 * 65535): only ids below 256 have a slot; any other is shown as invalid. */
static inline const char *prof__sec_mem_pool_name(const mem_state *s, unsigned pool) {
  return pool < sizeof s->pools / sizeof s->pools[0] ? s->pools[pool].name : "(invalid pool id)";
}
/* Largest value of a series, -1 when empty. */
double prof__sec_mem_series_max(const mem_series *s);
/* 1: full mode with ALLOC events (exact heap figures); prof__sec_mem_from_events:
 * sampled or full mode with ALLOC events (per-site figures from events). */
int prof__sec_mem_exact(const mem_state *s);
int prof__sec_mem_from_events(const mem_state *s);
/* The innermost range open where the heap peak happened, or NULL. */
const char *prof__sec_mem_peak_range(prof__an *an, const mem_state *s);

#endif
