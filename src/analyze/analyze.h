/* analyze.h — trace → model → findings → reports.
 *
 * The analyzer streams a trace (never loading it whole) and builds a small
 * model: steps, ranges per name, the step-time breakdown, threads and lost
 * events. Everything beyond that (memory, CPU samples, GPU, model health,
 * resources, ranks) is a *section*: a module with its own state that sees
 * the same records and writes its own part of each report. Sections are
 * listed once in sections.def; adding one never touches the core analyzer.
 *
 * Memory grows with the number of distinct names, threads, steps and
 * stacks, not with the number of events.
 */
#ifndef PROF_ANALYZE_H
#define PROF_ANALYZE_H

#include <stdint.h>
#include <stdio.h>

#include "../trace/trace.h"
#include "analyze/util/json.h"

/* Breakdown buckets of the step time. The first PROF_CAT_COUNT are the
 * range categories; GPU buckets are filled by the GPU section. */
enum {
  PROF_BD_COMPUTE = 0,
  PROF_BD_DATA = 1,
  PROF_BD_COMM = 2,
  PROF_BD_IO = 3,
  PROF_BD_OTHER_RANGE = 4, /* ranges of category OTHER */
  PROF_BD_UNTRACKED = 5,   /* inside a step, no range open: shown as "other" */
  PROF_BD_COUNT = 6
};

typedef struct prof__step {
  uint64_t number;     /* step number from the trace */
  uint32_t tid;        /* thread that ran prof_start/prof_stop */
  uint64_t begin_ns, end_ns;
  uint64_t bd_ns[PROF_BD_COUNT]; /* breakdown on the step's thread */
  int warmup_outlier;  /* 1 for a first step far slower than the median */
  /* ---- added after the first contract (append only) ---- */
  unsigned have;       /* PROF_STEP_HAS_* bits: which of the fields below are known */
  uint64_t cpu_ns;     /* CPU time of the step's thread during the step (its CPU clock read right before
                        * the begin and right after the end; at most the step's length) */
  uint64_t rss_peak_bytes;  /* highest process RSS while the step was open (the reading in effect at its
                             * begin and those taken until its end) */
  uint64_t live_peak_bytes; /* the same for the live heap (mem.live_bytes) */
} prof__step;

/* prof__step.have (the same bits as a STEPSUM record's optional fields). */
#define PROF_STEP_HAS_CPU 1u
#define PROF_STEP_HAS_RSS 2u
#define PROF_STEP_HAS_LIVE 4u

typedef struct prof__range_stat {
  uint32_t name;       /* string id */
  int cat;             /* PROF_CAT_* */
  uint64_t count, total_ns, self_ns, min_ns, max_ns;
  uint64_t in_step_self_ns; /* self time that fell inside steps */
} prof__range_stat;

typedef struct prof__thread_info {
  uint32_t tid;
  char *name;
  uint64_t lost;
  int exited;
  uint64_t events;
  /* ---- added after the first contract (append only) ---- */
  uint64_t steps;      /* complete steps this thread ran (set when the model is finished) */
} prof__thread_info;

/* An extra key of a finding ("tensor", "first_step", "period", ...). */
typedef struct prof__fkey {
  char key[24];
  int is_num;          /* 1: num, 0: str */
  double num;
  char str[120];
} prof__fkey;
#define PROF_FINDING_KEYS 8

typedef struct prof__finding {
  char id[48];         /* stable id, e.g. "input_bound" */
  char severity[8];    /* "high", "medium", "low", "info" */
  char *title;         /* one line: what was found */
  char *measured;      /* what was measured, with numbers */
  char *recommendation;/* what to do about it */
  double value;        /* the main measured quantity (share, ratio, bytes) */
  /* ---- added after the first contract (append only) ---- */
  prof__fkey keys[PROF_FINDING_KEYS]; /* extra keys, written after "value" in JSON */
  int nkeys;
  /* ---- predicted savings (append only; prof__an_finding_saving) ---- */
  int has_saving;       /* 1: a performance finding with a predicted saving */
  uint64_t saving_ns;   /* predicted drop of the mean step time, per step, if the cause were removed */
  double saving_pct;    /* saving_ns in percent of the mean step (all steps) */
  double saving_conf;   /* 0..1, from the steps and samples behind it (prof__an_confidence) */
  char saving_model[400]; /* one line: how saving_ns was derived */
} prof__finding;

/* Statistics of step durations. p95 is the nearest-rank percentile: the
 * ceil(0.95 * count)-th smallest duration; the median of an even count is
 * the mean of the two middle durations. */
typedef struct prof__step_stats {
  size_t count;
  uint64_t total_ns, mean_ns, median_ns, p95_ns, min_ns, max_ns;
} prof__step_stats;

typedef struct prof__an prof__an;

/* A report section. Every hook may be NULL. `st` is the section's own zeroed
 * state of `state_size` bytes. */
typedef struct prof__section {
  const char *name;    /* JSON key and section id ("memory", "functions", ...) */
  size_t state_size;
  /* Pass 1: every record in file order, after the core model saw it. */
  void (*record)(prof__an *an, void *st, const prof__rec *rec);
  /* Optional pass 2 (the trace is read again) with the full step table known. */
  void (*record2)(prof__an *an, void *st, const prof__rec *rec);
  /* After the last pass: compute results, add findings. */
  void (*finish)(prof__an *an, void *st);
  /* Report writers. Return without output when the section has no data. */
  void (*text)(prof__an *an, void *st, FILE *out);
  /* Writes `"name": value` into the open top-level object when it has data. */
  void (*json)(prof__an *an, void *st, prof__json *j);
  void (*html)(prof__an *an, void *st, FILE *out);
  void (*destroy)(prof__an *an, void *st);
  /* ---- added after the first contract (append only) ---- */
  /* Chrome export: write extra events (tracks, counters, flow arrows) as
   * elements of the open "traceEvents" array, after the core events. Use
   * prof__chrome_base_ns()/prof__chrome_pid() for time zero and the CPU
   * process id, and prof__chrome_keep() to honour the window and event cap.
   * The hook may rewind an->reader and read the trace again. */
  void (*chrome)(prof__an *an, void *st, prof__json *j);
  /* Event types the record hooks want, as PROF_EVMASK(type) bits; 0: all.
   * Records that are not events (strings, threads, META, chunks) always
   * reach the hooks. Lets the analyzer skip a section per event cheaply. */
  uint64_t event_mask;
  /* 1: `record` reads nothing but the record and the section's own state
   * (never `an`, the model's context or another section), so the engine may
   * run it on its decode thread, concurrently with the core model and the
   * other sections; it still sees every record in file order. */
  int detached;
  /* Event types the record hooks want in this trace, narrowing event_mask
   * (0: none), asked when a pass starts and again after a record whose hook
   * called prof__an_dispatch_again. NULL: event_mask alone. Lets a section
   * that a trace does not concern (GPU events without a GPU capture) cost
   * nothing per event. Not for detached sections. */
  uint64_t (*event_mask_now)(const prof__an *an, void *st);
  /* Optional, detached sections only: the events of one decoded batch, in
   * file order, all types (the hook skips what its event_mask leaves out).
   * The decode thread calls it once per batch instead of `record` per
   * event (non-event records still go to `record`); the serial analyzer
   * keeps calling `record`, so both must do the same. */
  void (*record_events)(prof__an *an, void *st, const prof__tev *ev, size_t n);
} prof__section;

#define PROF_EVMASK(type) (1ull << (type))
/* A section that wants no events at all (only chunks or META). */
#define PROF_EVMASK_NONE PROF_EVMASK(PROF_EV_NONE)

/* The analysis of one trace. Sections may read every field. */
struct prof__an {
  const char *path;
  prof__reader *reader;
  /* header */
  const prof__kv *header;
  size_t header_count;
  /* strings, by id (NULL where unknown) */
  char **strings;
  uint32_t nstrings;
  /* steps, sorted by begin_ns */
  prof__step *steps;
  size_t nsteps;
  /* ranges by (name, category) */
  prof__range_stat *ranges;
  size_t nranges;
  /* threads */
  prof__thread_info *threads;
  size_t nthreads;
  /* totals */
  uint64_t events, lost_events, chunks, misuse;
  uint64_t first_ns, last_ns;
  int truncated;         /* trace ended early; report covers what was read */
  char trunc_msg[PROF_ERR_MAX];
  /* findings (core and sections) */
  prof__finding *findings;
  size_t nfindings;
  /* section states, parallel to prof__sections[] */
  void **section_state;
  /* options */
  int quiet;             /* no progress output */
  /* ---- added after the first contract (append only) ---- */
  const prof__kv *footer; /* FOOTER pairs, in file order */
  size_t footer_count;
  const prof__kv *meta;   /* META pairs, in file order */
  size_t meta_count;
  int has_footer;
  prof__step_stats step_stats;   /* all complete steps */
  prof__step_stats steady_stats; /* without a flagged warm-up step */
  uint64_t unfinished_steps;     /* steps begun but never ended (dropped from the table) */
  uint64_t unmatched_step_ends;  /* STEP_END with no open step of that number */
  uint64_t unmatched_range_ends; /* RANGE_END with no matching open range */
  uint64_t unclosed_ranges;      /* ranges closed by the analyzer (end of trace, lost END) */
  uint64_t dropped_ranges;       /* ranges ignored: nesting deeper than the analyzer keeps */
  void *chrome_export;           /* the Chrome export in progress (chrome.c), else NULL */
  /* Who writes these report files (docs/report-schema.md, `written_by`):
   * "launcher", "cli" or "in-process"; NULL for a report printed on request. */
  const char *written_by;
  /* The last unfinished step (when unfinished_steps > 0): its number and how
   * long it had been open when the trace ended (from its begin to the last
   * event of the trace). */
  uint64_t unfinished_last_number, unfinished_last_open_ns;
  /* Bounded traces (MLPROF_MAX_MB, docs/long-runs.md): the detail of the
   * last window only, and a summary of every step. `steps` holds the steps
   * kept in detail (what the sections' evidence covers); run_steps every
   * step of the run (the window's, then those known from summaries only),
   * sorted by begin_ns, or NULL when the trace holds no summaries (then
   * `steps` is every step). step_stats and steady_stats cover run_steps.
   * Use prof__an_all_steps(). */
  prof__step *run_steps;
  size_t nrun_steps;
  size_t summary_only_steps;     /* steps whose detail was dropped */
  uint64_t bound_max_bytes;      /* the bound (0: none recorded) */
  uint64_t bound_dropped_bytes, bound_dropped_chunks, bound_compactions;
  unsigned summary_level;        /* coarsest rounding of those steps' summaries (0: exact) */
  uint64_t summary_bad_chunks;   /* STEPSUM chunks that did not decode (ignored) */
};

/* Per-step CPU time and memory over every step of the run (prof__step.have):
 * how many steps know each, the CPU and wall time of those with a CPU time,
 * and the highest RSS and live heap of a step, with the step's number. */
typedef struct prof__step_res {
  size_t cpu_steps, rss_steps, live_steps;
  uint64_t cpu_ns, cpu_wall_ns;
  uint64_t rss_peak_bytes, rss_peak_step;
  uint64_t live_peak_bytes, live_peak_step;
} prof__step_res;
void prof__an_step_res(const prof__an *an, prof__step_res *r);

/* Every step of the run: run_steps when the trace was bounded, else steps. */
static inline const prof__step *prof__an_all_steps(const prof__an *an, size_t *n) {
  *n = an->run_steps ? an->nrun_steps : an->nsteps;
  return an->run_steps ? an->run_steps : an->steps;
}

/* Steps of the run (run_steps when bounded, else steps): their count. */
static inline size_t prof__an_nall(const prof__an *an) { return an->run_steps ? an->nrun_steps : an->nsteps; }
/* ... and the steps themselves. */
static inline const prof__step *prof__an_run_steps(const prof__an *an) { return an->run_steps ? an->run_steps : an->steps; }

/* For a trace written with MLPROF_MAX_MB: one sentence saying what the
 * report covers (every step's statistics; the detail of the kept window
 * only) and what was dropped, into buf; NULL for a trace without bound. */
const char *prof__an_bound_note(const prof__an *an, char *buf, size_t n);

/* Section registry (generated from sections.def). */
extern const prof__section *const prof__sections[];
extern const size_t prof__nsections;

/* Analyze the trace at `path`. Returns 0 (also for a truncated trace, with
 * an->truncated set) or a negative error with a message in `err` (>= PROF_ERR_MAX
 * bytes). The caller frees with prof__an_free(). */
int prof__an_run(prof__an **out, const char *path, char *err);
void prof__an_free(prof__an *an);

/* Name of a string id ("?" when unknown). */
const char *prof__an_str(const prof__an *an, uint32_t id);
/* Header value or NULL. */
const char *prof__an_header(const prof__an *an, const char *key);
/* From a record hook of a section with event_mask_now: ask it again
 * before the next record (what the section wants has changed). */
void prof__an_dispatch_again(prof__an *an);
/* Index in an->threads of thread `tid`, or SIZE_MAX when no record named
 * it: one lookup in the model's hash map. Sections keep their per-thread
 * state in arrays indexed by it (every event's thread is in the model
 * before a section sees the event) instead of searching a list of their
 * own, which a trace with many thread ids would make quadratic. */
size_t prof__an_thread_index(const prof__an *an, uint32_t tid);

/* The context of the event a record hook is handed, kept once by the
 * engine's model (engine/trace_model.c), after the model has applied the event:
 * its thread, that thread's open ranges and its step. A RANGE_BEGIN's range
 * is open already, a RANGE_END's is closed. Sections read it instead of
 * rebuilding range stacks and step state of their own. Valid in record
 * hooks of the first pass, for event records (thread SIZE_MAX otherwise). */
/* One open (or just closed) range of the context's thread. */
typedef struct prof__ctx_frame {
  uint32_t name;     /* name id */
  int cat;           /* PROF_CAT_* (unknown categories read as OTHER) */
  int outer;         /* the outermost open instance of its name on the thread
                        (0 also for frames deeper than PROF_CTX_OUTER_DEPTH) */
  uint32_t level;    /* 0: outermost */
  uint64_t begin_ns; /* when it opened */
} prof__ctx_frame;
#define PROF_CTX_OUTER_DEPTH 256

typedef struct prof__ctx {
  size_t thread;     /* index in an->threads */
  uint32_t depth;    /* ranges open on the thread (the model keeps up to 4096) */
  uint32_t range;    /* name id of the innermost open range; 0: none */
  int cat;           /* its category (PROF_CAT_*); -1 when none */
  int in_step;       /* a step is open on the thread */
  uint64_t step;     /* its number, when in_step */
  /* A RANGE_END that matched an open range: that range (closed at the
   * event's time); has_closed is 0 for every other event. Ranges above it
   * that a lost END left open are closed with it and not described. */
  int has_closed;
  prof__ctx_frame closed;
} prof__ctx;
const prof__ctx *prof__an_ctx(const prof__an *an);
/* Name id of the range open at `level` (0: outermost) on the context's
 * thread, 0 past the depth. */
uint32_t prof__an_ctx_range_at(const prof__an *an, uint32_t level);
/* The range open at `level` on the context's thread into *f; returns 0,
 * or -1 past the depth. */
int prof__an_ctx_frame(const prof__an *an, uint32_t level, prof__ctx_frame *f);
/* Name id of the innermost range open now on thread index ti (0: none). */
uint32_t prof__an_thread_range(const prof__an *an, size_t ti);
/* Thread id of the latest RANGE_BEGIN or RANGE_END read so far (0: none
 * yet), for record hooks of the first pass: sections need not ask for
 * every range event to know it. */
uint32_t prof__an_range_tid(const prof__an *an);
/* Index of the step containing ts (by time), or -1. */
long prof__an_step_at(const prof__an *an, uint64_t ts_ns);
/* Sum of step wall times. */
uint64_t prof__an_step_total_ns(const prof__an *an);
/* State of the named section, or NULL. */
void *prof__an_section(const prof__an *an, const char *name);

/* Add a finding; copies the strings. */
void prof__an_finding(prof__an *an, const char *id, const char *severity, double value,
                      const char *title, const char *measured, const char *recommendation);

/* Attach an extra key to the finding added last (ignored past
 * PROF_FINDING_KEYS or when there is none). JSON writes it beside "value". */
void prof__an_finding_kstr(prof__an *an, const char *key, const char *v);
void prof__an_finding_knum(prof__an *an, const char *key, double v);
/* ---- predicted savings (append only) ---- */

/* Attach a predicted saving to the finding added last: `saving_ns` is the
 * drop of the mean step time per step the model predicts if the cause were
 * removed (NaN and negatives give 0; capped at the mean step), `confidence`
 * 0..1 (prof__an_confidence), `model` a printf format for one line saying
 * how it was derived from this run's measurements. Ignored without a
 * finding or without steps. */
void prof__an_finding_saving(prof__an *an, double saving_ns, double confidence, const char *model, ...)
    __attribute__((format(printf, 4, 5)));
/* The same for any finding of an->findings (a section refining another's). */
void prof__an_set_saving(prof__an *an, prof__finding *f, double saving_ns, double confidence, const char *model,
                         ...) __attribute__((format(printf, 5, 6)));
/* The first finding with this id, or NULL. */
prof__finding *prof__an_find(prof__an *an, const char *id);
/* Confidence of a saving measured over `steps` steps and, when it rests on
 * CPU samples, `samples` samples (0: not sample-based): 1 - 1/sqrt(n) of the
 * smaller count, the relative standard error of a mean of n independent
 * measurements taken away from 1; 0 without evidence. */
double prof__an_confidence(uint64_t steps, uint64_t samples);
/* "high" (>= 0.85: about 45 steps or samples), "medium" (>= 0.7: 12), "low". */
const char *prof__an_confidence_label(double confidence);

/* The split of the events read: those the program's threads recorded
 * through the rings (the footer's events_written) and those the profiler's
 * own threads added (samples, counter readings, resource and GPU records).
 * Returns 0 when the trace has no footer (nothing set). */
int prof__an_events_split(const prof__an *an, uint64_t *recorded, uint64_t *profiler);
/* The finding's extra keys as "key=value, ..." into buf (n bytes, cut to
 * fit); returns the length written. */
size_t prof__an_finding_details(const prof__finding *f, char *buf, size_t n);

/* Report writers. format: "text", "json", "html". Return 0 or a negative
 * error. */
int prof__report_write(prof__an *an, const char *format, FILE *out);
/* Write `<trace>.report.txt`, `.report.json` and `.report.html` (used at
 * shutdown). */
int prof__report_files(const char *trace_path, char *err);
/* The same, each report saying who wrote it: `written_by` is "launcher"
 * (`mlprof run`), "cli" (the mlprof command a profiled program started) or
 * "in-process" (the library itself, the fallback); NULL: not said. */
int prof__report_files_by(const char *trace_path, const char *written_by, char *err);

/* Write `"findings": [...]` (id, severity, title, measured, recommendation,
 * value) into the open object: one format for every report. */
void prof__json_findings(prof__json *j, const prof__finding *f, size_t n);

/* Exporters. */
int prof__export_chrome(prof__an *an, FILE *out);

/* ---- added after the first contract (append only) ---- */

/* prof__an_run() with options: quiet = 1 never shows progress. */
int prof__an_run_opts(prof__an **out, const char *path, int quiet, char *err);
/* Footer value or NULL. */
const char *prof__an_footer(const prof__an *an, const char *key);
/* A footer value as a number; 0 when absent. */
uint64_t prof__an_footer_u64(const prof__an *an, const char *key);
/* META value or NULL (the last pair wins). */
const char *prof__an_meta(const prof__an *an, const char *key);
/* The run's peak resident set: the larger of `sampled` (the peak of the RSS
 * readings, -1 when none) and the kernel's high-water mark kept at the end
 * (META res.rss_hwm_bytes), which holds a peak between two readings; -1
 * when neither is known. */
double prof__an_rss_peak(const prof__an *an, double sampled);
/* Breakdown bucket names: "compute", "data", "comm", "io", "other",
 * "untracked". */
const char *prof__an_bucket_name(int bucket);
/* Category name of a range ("compute", "data", "comm", "io", "other"). */
const char *prof__an_cat_name(int cat);
/* Format a duration in ns for people ("12.3 ms") into buf. */
const char *prof__an_fmt_ns(char *buf, size_t n, uint64_t ns);

/* ---- visual reports and interop (append only) ---- */

/* Options of the Chrome export. Zero means "no limit". The window is in ns
 * relative to the first event of the trace. */
typedef struct prof__chrome_opts {
  uint64_t max_events;             /* stop adding timed events after this many */
  uint64_t window_begin_ns, window_end_ns; /* keep events overlapping [begin, end); end 0: open */
} prof__chrome_opts;

/* prof__export_chrome() with options (NULL: none). */
int prof__export_chrome_opts(prof__an *an, FILE *out, const prof__chrome_opts *o);
/* For section chrome hooks during an export: time zero (ns) of the "ts"
 * fields, the pid of the CPU threads, and whether an event spanning
 * [begin_ns, end_ns] (absolute ns) is inside the window and within the event
 * cap (a 1 counts it as written). Outside an export: first_ns, the header
 * pid (1 when unknown), and always 1. */
uint64_t prof__chrome_base_ns(const prof__an *an);
long long prof__chrome_pid(const prof__an *an);
int prof__chrome_keep(prof__an *an, uint64_t begin_ns, uint64_t end_ns);

/* TensorBoard export: write DIR/events.out.tfevents.<time>.<host>.mlprof
 * (DIR is created if missing). The path written goes to `path` (may be
 * NULL). Returns 0 or a negative error with a message in err (>= PROF_ERR_MAX bytes). */
int prof__export_tensorboard(prof__an *an, const char *dir, char *path, size_t path_len, char *err);

/* Index of the step whose duration is the median (the lower middle for an
 * even count), or -1 without steps. */
long prof__an_median_step(const prof__an *an);

/* A duration held as a double (a mean, a sum of shares) as ns, or any other
 * count held as a double: NaN and negatives give 0, values past UINT64_MAX
 * saturate (a plain cast of those is undefined behaviour; crafted traces
 * produce them). Every double the trace can steer goes through this before
 * it becomes an integer. */
uint64_t prof__an_d2ns(double v);

/* The time to use for event `ev` of a thread whose clock stands at *last.
 * Events from the thread's own ring come in time order: their time never
 * runs backwards (a later one is clamped to *last, which follows them).
 * Samples and counters are stamped by the writer when it read them and may
 * be stored ahead of ring events that precede them in time: they keep their
 * own time and never move the thread's clock (or the ranges around them
 * would be stretched or shrunk). The one rule for the model and exports. */
static inline uint64_t prof__an_event_time(uint64_t *last, const prof__event *ev) {
  if (ev->type == PROF_EV_COUNTER || ev->type == PROF_EV_SAMPLE) return ev->ts;
  if (ev->ts > *last) *last = ev->ts;
  return *last;
}

/* ---- helpers shared by sections, findings, writers and exports ---------- */

/* Deepest range nesting the analyzer tracks per thread. */
#define PROF_AN_MAX_DEPTH 4096

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
/* Share of time measured from the detail (ranges, samples) in the step time
 * of the steps kept in detail: equal to prof__an_share() unless the trace
 * was bounded and dropped the detail of older steps. */
double prof__an_detail_share(const prof__an *an, uint64_t ns);
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

#endif /* PROF_ANALYZE_H */
