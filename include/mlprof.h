/* mlprof.h — the public C API of mlprof, an in-process profiler for
 * machine-learning training code.
 *
 * A program links libmlprof, wraps each training step in prof_start() /
 * prof_stop(), marks phases with prof_range_push()/prof_range_pop(), and
 * finds a trace (`<program>.<pid>.mlpt`) and a bottleneck report beside it
 * when it exits. Every call here is safe from any thread, never blocks on
 * disk, and never crashes the host program: misuse is ignored, counted, and
 * reported in the trace.
 *
 * Errors are negative PROF_E* numbers from one table (PROF_ERRORS); they are
 * stable and never reused. prof_strerror() turns one into text.
 */
#ifndef MLPROF_H
#define MLPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define PROF_API
#elif defined(__GNUC__) || defined(__clang__)
#  define PROF_API __attribute__((visibility("default")))
#else
#  define PROF_API
#endif

/* `inline` for the header's own small functions, in every C mode (C89 too). */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define PROF__INLINE inline
#elif defined(__GNUC__) || defined(__clang__)
#  define PROF__INLINE __inline__
#else
#  define PROF__INLINE
#endif

/* ---- Compile-out switch ------------------------------------------------- */

/* Built with MLPROF_DISABLED defined (`cc -DMLPROF_DISABLED`), a program
 * keeps every prof_* call, PROF_SCOPE and mlprof::Range / mlprof::Step in
 * its source, but they compile to nothing, and it links and runs without
 * libmlprof: each function below becomes a static inline stub whose name is
 * mapped (by a macro) to mlprof__off_<name>, so the object files reference
 * no prof_* symbol at all. The arguments are still type-checked and
 * evaluated exactly once. The stubs return what a profiler disabled at run
 * time (MLPROF_DISABLE=1) returns: prof_init() and prof_start()
 * PROF_EDISABLED (prof_init() PROF_EINVAL for a bad cfg->size, as at run
 * time), prof_stop() PROF_ESTATE, prof_shutdown() 0, prof_meta() and
 * prof_mem_pool() PROF_EINVAL for a missing argument else PROF_ESTATE,
 * prof_snapshot() PROF_ESTATE, prof_name_id() and prof_step_count() 0,
 * prof_trace_path() NULL, prof_stats_get() 0 with every counter 0 (or
 * PROF_EINVAL, as at run time); prof_strerror() and prof_config_default()
 * work as in the library. Nothing is counted, nothing is written, and no
 * environment variable is read. The types, enums, error codes and
 * MLPROF_VERSION_* stay. The library itself cannot be built this way. */
#if defined(MLPROF_DISABLED)
#  if defined(MLPROF_BUILDING)
#    error "MLPROF_DISABLED is for programs that use mlprof, not for building libmlprof"
#  endif
#  undef PROF_API
#  define PROF_API static PROF__INLINE
#  define prof_strerror mlprof__off_strerror
#  define prof_config_default mlprof__off_config_default
#  define prof_init mlprof__off_init
#  define prof_shutdown mlprof__off_shutdown
#  define prof_start mlprof__off_start
#  define prof_stop mlprof__off_stop
#  define prof_step_count mlprof__off_step_count
#  define prof_range_push mlprof__off_range_push
#  define prof_range_push_cat mlprof__off_range_push_cat
#  define prof_range_pop mlprof__off_range_pop
#  define prof_mark mlprof__off_mark
#  define prof_counter mlprof__off_counter
#  define prof_name_id mlprof__off_name_id
#  define prof_range_push_id mlprof__off_range_push_id
#  define prof_mark_id mlprof__off_mark_id
#  define prof_counter_id mlprof__off_counter_id
#  define prof_comm_id mlprof__off_comm_id
#  define prof_comm_done_id mlprof__off_comm_done_id
#  define prof_meta mlprof__off_meta
#  define prof_mem_pool mlprof__off_mem_pool
#  define prof_mem_alloc mlprof__off_mem_alloc
#  define prof_mem_free mlprof__off_mem_free
#  define prof_scalar mlprof__off_scalar
#  define prof_histogram mlprof__off_histogram
#  define prof_histogram_units mlprof__off_histogram_units
#  define prof_snapshot mlprof__off_snapshot
#  define prof_capture mlprof__off_capture
#  define prof_capture_done mlprof__off_capture_done
#  define prof_report mlprof__off_report
#  define prof_graph_edge mlprof__off_graph_edge
#  define prof_graph_edge_id mlprof__off_graph_edge_id
#  define prof_graph_node mlprof__off_graph_node
#  define prof_graph_node_id mlprof__off_graph_node_id
#  define prof_stats_get mlprof__off_stats_get
#  define prof_trace_path mlprof__off_trace_path
#endif

#define MLPROF_VERSION_MAJOR 0
#define MLPROF_VERSION_MINOR 1
#define MLPROF_VERSION_PATCH 0
#define MLPROF_VERSION_STRING "0.1.0"

/* ---- Errors ----------------------------------------------------------- */

/* X(name, value, message). Values are stable: never renumber, only append. */
#define PROF_ERRORS(X)                                                        \
  X(PROF_EINVAL,      -1,  "invalid argument")                                \
  X(PROF_ESTATE,      -2,  "call not valid in the current state")             \
  X(PROF_EIO,         -3,  "trace output failed")                             \
  X(PROF_ENOMEM,      -4,  "out of memory")                                   \
  X(PROF_EDISABLED,   -5,  "profiling is disabled")                           \
  X(PROF_EFORMAT,     -6,  "not a trace, or the trace is corrupt")            \
  X(PROF_ETRUNC,      -7,  "trace is truncated")                              \
  X(PROF_EUNSUPPORTED,-8,  "feature not available in this build or system")  \
  X(PROF_ESHUTDOWN,   -9,  "profiler already shut down")                      \
  X(PROF_ENOENT,      -10, "no such file, process or item")                   \
  X(PROF_EVERSION,    -11, "trace version not supported")

enum prof_error {
  PROF_OK = 0,
#define PROF__ERR_ENUM(name, value, msg) name = value,
  PROF_ERRORS(PROF__ERR_ENUM)
#undef PROF__ERR_ENUM
  PROF__ERR_MIN = -11
};

/* Text for an error code: never NULL. Unknown codes give "unknown error";
 * 0 gives "success". Thread-safe, no allocation. */
PROF_API const char *prof_strerror(int err);

/* ---- Categories --------------------------------------------------------- */

/* What a range spends its time on. The step-time breakdown groups by these. */
enum prof_category {
  PROF_CAT_COMPUTE = 0, /* model math on the CPU (the default) */
  PROF_CAT_DATA = 1,    /* data loading, decoding, augmentation, batching */
  PROF_CAT_COMM = 2,    /* communication: collectives, point-to-point */
  PROF_CAT_IO = 3,      /* file and network I/O: checkpoints, logs */
  PROF_CAT_OTHER = 4,   /* anything else the user wants to see apart */
  PROF_CAT_COUNT = 5
};

/* ---- Configuration ------------------------------------------------------ */

/* Settings for prof_init(). Set `size` to sizeof(prof_config) (use
 * prof_config_default()); fields are only ever appended, so a program built
 * against an older header keeps working. Zero / NULL fields mean "default,
 * or what the MLPROF_* environment says". Explicit fields win over the
 * environment, except MLPROF_DISABLE=1, which always wins. */
typedef struct prof_config {
  size_t size;          /* sizeof(prof_config) */
  const char *output;   /* trace path, or an existing directory; NULL: MLPROF_OUTPUT,
                           else "<program>.<pid>.mlpt" in the working directory. A
                           taken name gives "<name>.1.mlpt", "<name>.2.mlpt", ...
                           (prof_trace_path() says which); the folder must be the
                           user's own or root's */
  uint32_t ring_kb;     /* per-thread ring size in KiB; 0: MLPROF_RING_KB, else 1024 */
  int report;           /* 1: write reports at shutdown, 0: don't, -1: MLPROF_REPORT (default 1) */
  int disable;          /* 1: profile nothing (all calls become cheap no-ops) */
  uint32_t flush_ms;    /* writer wake-up period in ms; 0: MLPROF_FLUSH_MS, else 10 */
  const char *schedule; /* step schedule "skip_first=N,wait=N,warmup=N,active=N,repeat=N";
                           NULL: MLPROF_SCHEDULE, else every step is recorded */
} prof_config;

/* A config with size set and every field at its default. */
PROF_API prof_config prof_config_default(void);

/* ---- Session ------------------------------------------------------------ */

/* Start the profiler: read the environment, open the trace file, start the
 * background writer. `cfg` may be NULL (defaults + environment).
 * Idempotent: a second call returns 0 and changes nothing.
 * Returns 0, or PROF_EDISABLED (MLPROF_DISABLE=1 or cfg->disable),
 * PROF_EIO (trace file cannot be created; one message on stderr),
 * PROF_EINVAL (bad cfg->size), PROF_ENOMEM, PROF_ESHUTDOWN (after
 * prof_shutdown()). On any error the program keeps running and every other
 * call is a no-op. May allocate; call from any thread. */
PROF_API int prof_init(const prof_config *cfg);

/* Flush every thread's events, write the trace footer, close the file and,
 * unless disabled, have `<trace>.report.txt`, `.report.json` and
 * `.report.html` written (one stderr line names them): by the `mlprof run`
 * launcher, else by the `mlprof` command started detached (not waited for
 * unless MLPROF_REPORT_WAIT=1), else in-process (README, "Reports"). Also
 * runs at exit. Idempotent: later calls return 0. Returns 0 or PROF_EIO
 * (some data could not be written). Blocks until the writer is done; do not
 * call from a signal handler. */
PROF_API int prof_shutdown(void);

/* Begin one profiled step. Calls prof_init(NULL) first if needed. Steps are
 * process-wide and numbered 0, 1, 2, ... in the order they start.
 * Returns 0, PROF_ESTATE if a step is already open (the call is ignored and
 * counted), or an error from prof_init. Never blocks, never allocates after
 * the first call on a thread. */
PROF_API int prof_start(void);

/* End the step begun by prof_start(); never waits for disk.
 * Returns 0 or PROF_ESTATE if no step is open (ignored and counted). */
PROF_API int prof_stop(void);

/* Number of steps started so far (the next step's number). */
PROF_API uint64_t prof_step_count(void);

/* ---- Annotations -------------------------------------------------------- */

/* Signal handlers. prof_range_push_id(), prof_range_pop(), prof_mark_id()
 * and prof_counter_id() are async-signal-safe (no lock, no allocation)
 * once the thread has made one annotation call outside the
 * handler (its first call allocates the thread's state); take the ids with
 * prof_name_id() outside the handler. The forms taking a name may lock and
 * allocate when the name is not in the thread's cache; prof_init(),
 * prof_shutdown(), prof_start(), prof_stop(), prof_name_id() and every other
 * call are not for handlers. A call made by a handler while the interrupted code of the
 * same thread is inside an annotation call records nothing: its event is
 * counted as lost (prof_stats.events_lost, and the trace footer's
 * events_lost_in_signal_handlers), never silently dropped.
 *
 * Nesting: a thread tracks 256 open ranges. Ranges pushed deeper are not
 * recorded (nor their pops) and are counted as misuse (range_too_deep), not
 * as lost events. */

/* Begin a named range on the calling thread, category PROF_CAT_COMPUTE.
 * Ranges nest; end each with prof_range_pop(). `name` is identified by its
 * pointer after the first use, so pass a string literal or a string that
 * stays valid and unchanged (for changing names use prof_name_id() and
 * prof_range_push_id()). NULL is ignored and counted. Never blocks; never
 * allocates after the first use of `name` on the thread. Before prof_init()
 * and after prof_shutdown() the call is ignored and counted. */
PROF_API void prof_range_push(const char *name);

/* Same, with a category (PROF_CAT_*); an out-of-range category becomes
 * PROF_CAT_OTHER. */
PROF_API void prof_range_push_cat(const char *name, int category);

/* End the innermost range of the calling thread. A pop with no open range is
 * ignored and counted. */
PROF_API void prof_range_pop(void);

/* PROF_SCOPE("name") opens a range (category PROF_CAT_COMPUTE) where it
 * stands and closes it when the enclosing block is left by any path: its
 * end, return, break, continue or goto out of it (and, in C++, an exception
 * passing through). PROF_SCOPE_CAT(name, category) does the same with a
 * category. They are the pair prof_range_push_cat() / prof_range_pop(), with
 * the same rules for `name` (a literal or a string that stays valid), the
 * same cost and no allocation of their own; scopes nest with each other and
 * with explicit pushes made and popped inside them. A NULL name is ignored
 * and counted, like a push of NULL, and pops nothing. Each one declares a
 * hidden variable (several may share a line): write it as a statement of a
 * block, not as the whole body of an if or a loop. A longjmp() out of the
 * block skips the close. Needs GCC or Clang (the cleanup attribute); with MLPROF_DISABLED
 * it is an expression that evaluates its arguments and records nothing, on
 * any compiler. In C++, mlprof::Range (mlprof.hpp) is the same as an
 * object. */
#if defined(MLPROF_DISABLED)
#  define PROF_SCOPE_CAT(name, category) mlprof__off_scope((name), (category))
#elif defined(__GNUC__) || defined(__clang__)
#  define PROF__JOIN2(a, b) a##b
#  define PROF__JOIN(a, b) PROF__JOIN2(a, b)
#  if defined(__COUNTER__)
#    define PROF__SCOPE_VAR PROF__JOIN(prof__scope_, __COUNTER__)
#  else
#    define PROF__SCOPE_VAR PROF__JOIN(prof__scope_, __LINE__)
#  endif
static PROF__INLINE const char *prof__scope_open(const char *name, int category) {
  prof_range_push_cat(name, category);
  return name;
}
static PROF__INLINE void prof__scope_close(const char *const *name) {
  if (*name) prof_range_pop();
}
#  define PROF_SCOPE_CAT(name, category)                                      \
    const char *const PROF__SCOPE_VAR                                         \
        __attribute__((cleanup(prof__scope_close), unused)) =                 \
            prof__scope_open((name), (category))
#else
#  define PROF_SCOPE_CAT(name, category) PROF_SCOPE_needs_GCC_or_Clang_or_MLPROF_DISABLED
#endif
#define PROF_SCOPE(name) PROF_SCOPE_CAT(name, PROF_CAT_COMPUTE)

/* An instant event on the calling thread. NULL is ignored and counted. */
PROF_API void prof_mark(const char *name);

/* One sample of a named counter (loss, throughput, queue depth, ...). */
PROF_API void prof_counter(const char *name, double value);

/* Intern `name` by content and return its id (> 0), for callers whose
 * strings do not live long (language bindings, generated names). The id is
 * valid for the life of the process. Returns 0 if the profiler is not
 * running or name is NULL. May lock and allocate: call it once per name. */
PROF_API uint32_t prof_name_id(const char *name);

/* prof_range_push_cat() with a name id from prof_name_id(). */
PROF_API void prof_range_push_id(uint32_t name_id, int category);

/* prof_mark() / prof_counter() with a name id from prof_name_id(). */
PROF_API void prof_mark_id(uint32_t name_id);
PROF_API void prof_counter_id(uint32_t name_id, double value);

/* What one communication call moved (a collective, a send or receive, a
 * nonblocking start): `bytes` this process contributed or received,
 * `comm_size` the ranks of its communicator (0: unknown) and `peer` the
 * other rank of a point-to-point call (-1: none). Call it inside the call's
 * range (prof_range_push_id(name_id, PROF_CAT_COMM)); reports sum calls and
 * bytes per name and rank. An id of 0 or a call while the profiler is not
 * running is ignored and counted. Never blocks, never allocates. */
PROF_API void prof_comm_id(uint32_t name_id, uint64_t bytes, int comm_size, int peer);

/* A nonblocking operation started under `name_id` (e.g. "MPI_Isend")
 * completed after moving `bytes`; `hidden_ns` is the part of its flight
 * during which the program did other work (from its start to the start of
 * the call that completed it). Reports turn it into the overlap of
 * communication with computation. Same rules as prof_comm_id(). */
PROF_API void prof_comm_done_id(uint32_t name_id, uint64_t bytes, uint64_t hidden_ns);

/* Record a fact about the run ("clock.offset_ns", "mpi.size", a
 * hyper-parameter) as a key/value pair in the trace (a META record written
 * on the next flush). Copies both strings. Returns 0, PROF_EINVAL (NULL
 * argument), PROF_ESTATE (profiler not running) or PROF_ENOMEM. Any thread;
 * may lock and allocate; not from a signal handler. */
PROF_API int prof_meta(const char *key, const char *value);

/* ---- Memory ------------------------------------------------------------- */

/* Name a custom memory pool (a tensor arena, a caching allocator, a GPU
 * memory manager) and get its id (>= 1) for prof_mem_alloc/prof_mem_free.
 * The same name gives the same id. Returns a negative error when the
 * profiler is not running. Pool 0 is the process heap (malloc). */
PROF_API int prof_mem_pool(const char *name);

/* Report that `size` bytes at `ptr` were handed out from `pool`, and later
 * given back. The memory views (peaks, leaks, sites) include these blocks
 * with their call stacks like malloc'd ones. Never blocks; a bad pool id or
 * a NULL ptr is ignored and counted. */
PROF_API void prof_mem_alloc(int pool, const void *ptr, size_t size);
PROF_API void prof_mem_free(int pool, const void *ptr);

/* ---- Model health ------------------------------------------------------- */

/* Kinds of tensors summarised by prof_histogram(). */
enum prof_hist_kind {
  PROF_HIST_WEIGHT = 0,
  PROF_HIST_GRADIENT = 1,
  PROF_HIST_ACTIVATION = 2,
  PROF_HIST_OTHER = 3
};

/* Record a per-step metric (loss, accuracy, learning rate, "val/loss").
 * Tags starting with "val/" or "eval/" are validation metrics, "train/" or
 * no prefix training metrics. Belongs to the current step. Never blocks. */
PROF_API void prof_scalar(const char *tag, double value);

/* Summarise a tensor in one pass (count, min, max, mean, std, zeros, NaN and
 * Inf counts, log-scale magnitude buckets) and record only the summary.
 * Does not allocate; the cost is about one read of the data. */
PROF_API void prof_histogram(const char *tag, int kind, const float *values, size_t n);

/* prof_histogram() for a tensor whose layout is known: values[0..n) are
 * rows of `units` values, the unit (neuron, channel) being the last, fastest
 * dimension — e.g. a (batch, features) activation, or a (N, C, H, W) one
 * moved to channels-last. Besides the summary it counts the units that are
 * exactly zero in every row of this call (dead units), so the analyzer judges
 * dead_units per unit rather than by the tensor-wide zero share. A units
 * value of 0, or one that does not divide n, behaves as prof_histogram()
 * (the summary is recorded without the unit count). Does not
 * allocate; the extra cost is one read per live unit. Any thread. */
PROF_API void prof_histogram_units(const char *tag, int kind, const float *values, size_t n, size_t units);

/* Write a report of everything recorded so far to `path` (text; NULL:
 * "<trace>.snapshot.txt"), without stopping the profiler. May block for
 * the analysis. Returns 0 or a negative error. */
PROF_API int prof_snapshot(const char *path);

/* ---- Captures ------------------------------------------------------------ */

/* Capture traces kept by prof_capture_done(). */
#define PROF_CAPTURE_KEEP 8

/* Record the next `steps` steps, from the next prof_start(), into a trace
 * of their own, `<trace without .mlpt>.capture<K>.mlpt` (K from 1), with
 * its report beside it when reports are on; the main trace records them
 * too. This is what `mlprof trigger` does from outside, asked by the
 * program (a profiling schedule driven from a language binding). steps = 0
 * ends this program's capture at the current step boundary (when a step is
 * open, it is the capture's last). Returns 0; PROF_ESTATE when the profiler
 * is not running or a capture of the next steps is already asked for or
 * running. Never waits for the disk: the writer thread writes the file. */
PROF_API int prof_capture(uint64_t steps);

/* The capture traces finished so far (each segment trace of prof_capture(),
 * MLPROF_SCHEDULE cycles and triggers, once its file is closed and its
 * report written): returns their count; with path != NULL, copies the path
 * of the index-th finished one (1-based) into path[0..n), or "" when index
 * is 0, beyond the count, or older than the last PROF_CAPTURE_KEEP. */
PROF_API uint64_t prof_capture_done(uint64_t index, char *path, size_t n);

/* Write the report of the trace file `trace` (NULL: the trace being
 * written now, after the writer flushed it) to `out`, in `format`: "text",
 * "json", "html", or "chrome" (the Chrome trace of `mlprof export
 * --chrome`). May block for the analysis. Returns 0 or a negative error
 * (PROF_EINVAL: unknown format; PROF_ESTATE: no trace given and none is
 * being written; an unreadable trace or output: a message on stderr). */
PROF_API int prof_report(const char *trace, const char *format, const char *out);

/* ---- Model graph -------------------------------------------------------- */

/* Declare that data flows from node `from` to node `to` of the model (a
 * layer's output feeds another layer), so the report's `graph` section can
 * draw the program's real data flow beside the nesting of its ranges. A node
 * is usually a range name (its figures then come from that range); a name
 * no range uses is a node without times. Both names are interned like range
 * names: identified by pointer after the first use, so pass literals or
 * strings that stay valid and unchanged (else use prof_graph_edge_id()).
 * Declare each edge once (at start-up or in the first step); repeated
 * declarations are merged by the analyzer. A NULL name is ignored and
 * counted. Any thread; never blocks; never allocates after the first use of
 * both names on the thread; ignored and counted before prof_init() and
 * after prof_shutdown(). */
PROF_API void prof_graph_edge(const char *from, const char *to);

/* prof_graph_edge() with name ids from prof_name_id() (language bindings,
 * generated names). An unknown id is ignored and counted. */
PROF_API void prof_graph_edge_id(uint32_t from_id, uint32_t to_id);

/* Describe one node of the model graph: `name` (a module path or a range
 * name), its `kind` (a layer class such as "Linear"; NULL: none), the node
 * that contains it, `parent` (NULL for a top-level node; reports fold a
 * node's subtree into it), its parameter count and the bytes of its
 * parameters (both 0 when it has none or they are unknown). Declare each
 * node once; the last declaration of a name wins. Strings are interned like
 * range names (see prof_graph_edge()). Same thread, blocking and
 * allocation rules as prof_graph_edge(). */
PROF_API void prof_graph_node(const char *name, const char *kind, const char *parent, uint64_t params,
                              uint64_t param_bytes);

/* prof_graph_node() with name ids from prof_name_id(); kind_id and
 * parent_id may be 0 (none). An unknown id is ignored and counted. */
PROF_API void prof_graph_node_id(uint32_t name_id, uint32_t kind_id, uint32_t parent_id, uint64_t params,
                                 uint64_t param_bytes);

/* ---- Introspection ------------------------------------------------------ */

/* Counters the profiler keeps about itself; `size` first, grows at the end. */
typedef struct prof_stats {
  size_t size;             /* set to sizeof(prof_stats) before the call */
  uint64_t events_written; /* events handed to the trace so far */
  uint64_t events_lost;    /* events dropped because a ring was full */
  uint64_t misuse;         /* ignored calls: pop without push, stop without start, ... */
  uint64_t threads;        /* threads that recorded at least one event */
  uint64_t bytes_written;  /* trace bytes on disk so far */
} prof_stats;

/* Fill `st` (whose size field must be set). Returns 0 or PROF_EINVAL. */
PROF_API int prof_stats_get(prof_stats *st);

/* Path of the trace being written (the name actually taken: never an
 * existing trace's), or NULL when not running. */
PROF_API const char *prof_trace_path(void);

/* ---- Compile-out stubs (MLPROF_DISABLED; see the top of this file) ------ */

#if defined(MLPROF_DISABLED)
#  if defined(__cplusplus)
#    define PROF__OFF_ZERO(type, var) type var = type()
#  else
#    define PROF__OFF_ZERO(type, var) type var = {0}
#  endif
static PROF__INLINE const char *mlprof__off_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#  define PROF__OFF_ERR_CASE(name, value, msg) \
  case value:                                  \
    return msg;
    PROF_ERRORS(PROF__OFF_ERR_CASE)
#  undef PROF__OFF_ERR_CASE
  default:
    return "unknown error";
  }
}
static PROF__INLINE prof_config mlprof__off_config_default(void) {
  PROF__OFF_ZERO(prof_config, c);
  c.size = sizeof c;
  c.report = -1;
  return c;
}
static PROF__INLINE int mlprof__off_init(const prof_config *cfg) {
  if (cfg && (cfg->size < offsetof(prof_config, ring_kb) || cfg->size > 4096)) return PROF_EINVAL;
  return PROF_EDISABLED;
}
static PROF__INLINE int mlprof__off_shutdown(void) { return 0; }
static PROF__INLINE int mlprof__off_start(void) { return PROF_EDISABLED; }
static PROF__INLINE int mlprof__off_stop(void) { return PROF_ESTATE; }
static PROF__INLINE uint64_t mlprof__off_step_count(void) { return 0; }
static PROF__INLINE void mlprof__off_range_push(const char *name) { (void)name; }
static PROF__INLINE void mlprof__off_range_push_cat(const char *name, int category) {
  (void)name;
  (void)category;
}
static PROF__INLINE void mlprof__off_range_pop(void) {}
static PROF__INLINE void mlprof__off_scope(const char *name, int category) {
  (void)name;
  (void)category;
}
static PROF__INLINE void mlprof__off_mark(const char *name) { (void)name; }
static PROF__INLINE void mlprof__off_counter(const char *name, double value) {
  (void)name;
  (void)value;
}
static PROF__INLINE uint32_t mlprof__off_name_id(const char *name) {
  (void)name;
  return 0;
}
static PROF__INLINE void mlprof__off_range_push_id(uint32_t name_id, int category) {
  (void)name_id;
  (void)category;
}
static PROF__INLINE void mlprof__off_mark_id(uint32_t name_id) { (void)name_id; }
static PROF__INLINE void mlprof__off_counter_id(uint32_t name_id, double value) {
  (void)name_id;
  (void)value;
}
static PROF__INLINE void mlprof__off_comm_id(uint32_t name_id, uint64_t bytes, int comm_size, int peer) {
  (void)name_id;
  (void)bytes;
  (void)comm_size;
  (void)peer;
}
static PROF__INLINE void mlprof__off_comm_done_id(uint32_t name_id, uint64_t bytes, uint64_t hidden_ns) {
  (void)name_id;
  (void)bytes;
  (void)hidden_ns;
}
static PROF__INLINE int mlprof__off_meta(const char *key, const char *value) {
  return key && value ? PROF_ESTATE : PROF_EINVAL;
}
static PROF__INLINE int mlprof__off_mem_pool(const char *name) {
  return name && *name ? PROF_ESTATE : PROF_EINVAL;
}
static PROF__INLINE void mlprof__off_mem_alloc(int pool, const void *ptr, size_t size) {
  (void)pool;
  (void)ptr;
  (void)size;
}
static PROF__INLINE void mlprof__off_mem_free(int pool, const void *ptr) {
  (void)pool;
  (void)ptr;
}
static PROF__INLINE void mlprof__off_scalar(const char *tag, double value) {
  (void)tag;
  (void)value;
}
static PROF__INLINE void mlprof__off_histogram(const char *tag, int kind, const float *values, size_t n) {
  (void)tag;
  (void)kind;
  (void)values;
  (void)n;
}
static PROF__INLINE void mlprof__off_histogram_units(const char *tag, int kind, const float *values, size_t n,
                                               size_t units) {
  (void)tag;
  (void)kind;
  (void)values;
  (void)n;
  (void)units;
}
static PROF__INLINE int mlprof__off_snapshot(const char *path) {
  (void)path;
  return PROF_ESTATE;
}
static PROF__INLINE int mlprof__off_capture(uint64_t steps) {
  (void)steps;
  return PROF_ESTATE;
}
static PROF__INLINE uint64_t mlprof__off_capture_done(uint64_t index, char *path, size_t n) {
  (void)index;
  if (path && n) path[0] = 0;
  return 0;
}
static PROF__INLINE int mlprof__off_report(const char *trace, const char *format, const char *out) {
  (void)trace;
  (void)format;
  (void)out;
  return PROF_EDISABLED;
}
static PROF__INLINE void mlprof__off_graph_edge(const char *from, const char *to) {
  (void)from;
  (void)to;
}
static PROF__INLINE void mlprof__off_graph_edge_id(uint32_t from_id, uint32_t to_id) {
  (void)from_id;
  (void)to_id;
}
static PROF__INLINE void mlprof__off_graph_node(const char *name, const char *kind, const char *parent, uint64_t params,
                                          uint64_t param_bytes) {
  (void)name;
  (void)kind;
  (void)parent;
  (void)params;
  (void)param_bytes;
}
static PROF__INLINE void mlprof__off_graph_node_id(uint32_t name_id, uint32_t kind_id, uint32_t parent_id,
                                             uint64_t params, uint64_t param_bytes) {
  (void)name_id;
  (void)kind_id;
  (void)parent_id;
  (void)params;
  (void)param_bytes;
}
static PROF__INLINE int mlprof__off_stats_get(prof_stats *st) {
  PROF__OFF_ZERO(prof_stats, s);
  const unsigned char *from = (const unsigned char *)&s;
  unsigned char *to = (unsigned char *)st;
  size_t i;
  if (!st || st->size < sizeof(size_t)) return PROF_EINVAL;
  s.size = st->size < sizeof s ? st->size : sizeof s;
  for (i = 0; i < s.size; i++) to[i] = from[i];
  return 0;
}
static PROF__INLINE const char *mlprof__off_trace_path(void) { return 0; }
#  undef PROF__OFF_ZERO
#endif /* MLPROF_DISABLED */

#ifdef __cplusplus
}
#endif
#endif /* MLPROF_H */
