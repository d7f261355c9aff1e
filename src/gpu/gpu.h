/* gpu.h — GPU activity records as mlprof stores them, independent of CUPTI.
 *
 * The CUPTI module (cupti.c, the only file that sees cupti.h) translates
 * CUPTI's activity structs into prof__gpu_rec and packs them into
 * PROF_CHUNK_GPU payloads with prof__gpu_encode(); the analyzer unpacks them
 * with prof__gpu_decode(). docs/trace-format-gpu.md is the byte-level
 * specification of the payload; keep the two in step.
 */
#ifndef PROF_GPU_H
#define PROF_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"
#include "core/tids.h"

#define PROF_GPU_FORMAT 1 /* first byte of every GPU chunk payload */

/* Record kinds. Values are part of the trace format: never renumber. */
enum {
  PROF_GPU_KERNEL = 1,
  PROF_GPU_MEMCPY = 2,
  PROF_GPU_MEMSET = 3,
  PROF_GPU_MEMORY = 4,   /* device memory allocation or release */
  PROF_GPU_SYNC = 5,     /* cudaDeviceSynchronize, stream/event waits */
  PROF_GPU_API = 6,      /* a runtime or driver API call on a CPU thread */
  PROF_GPU_OVERHEAD = 7, /* CUPTI's own overhead (buffer flushes, ...) */
  PROF_GPU_DEVICE = 8,   /* device properties */
  PROF_GPU_DROPPED = 9,  /* activity records CUPTI dropped (running total) */
  PROF_GPU_KIND_MAX = 9
};

/* Copy directions (PROF_GPU_MEMCPY sub), our numbering. */
enum {
  PROF_GPU_COPY_OTHER = 0,
  PROF_GPU_COPY_H2D = 1,
  PROF_GPU_COPY_D2H = 2,
  PROF_GPU_COPY_D2D = 3,
  PROF_GPU_COPY_H2H = 4,
  PROF_GPU_COPY_P2P = 5,
  PROF_GPU_COPY_COUNT = 6
};

/* Memory kinds (memcpy src/dst, memset, memory records), our numbering. */
enum {
  PROF_GPU_MEM_UNKNOWN = 0,
  PROF_GPU_MEM_PAGEABLE = 1,
  PROF_GPU_MEM_PINNED = 2,
  PROF_GPU_MEM_DEVICE = 3,
  PROF_GPU_MEM_ARRAY = 4,
  PROF_GPU_MEM_MANAGED = 5
};

/* API domains (PROF_GPU_API sub). */
enum { PROF_GPU_API_RUNTIME = 1, PROF_GPU_API_DRIVER = 2 };

/* Memory operations (PROF_GPU_MEMORY sub). */
enum { PROF_GPU_MEMOP_ALLOC = 1, PROF_GPU_MEMOP_FREE = 2 };

/* One activity record. Times are CLOCK_MONOTONIC ns, the trace's time base.
 * Fields a kind does not use are 0. */
typedef struct prof__gpu_rec {
  uint8_t kind;      /* PROF_GPU_* */
  uint8_t sub;       /* copy direction, sync type, memory op, API domain, overhead kind */
  uint8_t src_mem;   /* memcpy: source memory kind; memset/memory: memory kind */
  uint8_t dst_mem;   /* memcpy: destination memory kind */
  uint32_t device;
  uint32_t stream;
  uint32_t corr;     /* CUPTI correlation id (kernel, copy, set, sync, API) */
  uint64_t start, end; /* memory records: start = end = the event time */
  uint64_t bytes;    /* copies, sets, memory records; DROPPED: the count */
  uint64_t addr;     /* memory records: address */
  uint32_t name;     /* string id: kernel name, API function name, device name */
  uint32_t tid;      /* launching / calling CPU thread (OS tid), 0 if unknown */
  uint32_t range;    /* innermost range on that thread at launch (string id), 0: none */
  uint64_t launch;   /* kernels/copies/sets: start of the launching API call, 0 if unknown */
  int32_t grid[3], block[3];
  uint32_t regs;     /* registers per thread */
  uint32_t smem_static, smem_dynamic; /* bytes per block */
  /* PROF_GPU_DEVICE only */
  uint32_t cc_major, cc_minor, sm_count, max_threads_per_sm, max_warps_per_sm;
  uint32_t max_blocks_per_sm, max_regs_per_sm, max_smem_per_sm;
  uint64_t mem_bytes;
} prof__gpu_rec;

/* Append one record to a payload being built. An empty buffer gets the
 * format byte first. Records are delta-encoded against the previous one of
 * the same payload (`prev`, zeroed by the caller at the payload's start). */
void prof__gpu_encode(prof__buf *b, const prof__gpu_rec *r, prof__gpu_rec *prev);

/* A decoder over one payload. */
typedef struct prof__gpu_dec {
  prof__cur cur;
  prof__gpu_rec prev;
  int bad; /* set on a malformed payload; decoding stops */
} prof__gpu_dec;

/* Start decoding `data[0..len)`. Returns 0, or PROF_EVERSION for an unknown
 * format byte, PROF_EFORMAT for an empty payload. */
int prof__gpu_dec_init(prof__gpu_dec *d, const void *data, size_t len);
/* Next record: 1 with *r filled, 0 at the end, PROF_EFORMAT on a malformed
 * payload (records before it were delivered). */
int prof__gpu_dec_next(prof__gpu_dec *d, prof__gpu_rec *r);

/* Names for reports and exporters ("h2d", "kernel", "pinned", ...). */
const char *prof__gpu_kind_name(int kind);
const char *prof__gpu_copy_name(int dir);
const char *prof__gpu_mem_name(int mem);

/* ---- Producer side (cupti.c) -------------------------------------------- */

/* Thread id under which the GPU module reports dropped CUPTI records as the
 * lost-event count of a pseudo thread "mlprof-cupti" (OS tids stay below
 * 2^22, so this never collides). */
#define PROF_GPU_PSEUDO_TID PROF_TID_CUPTI

/* Translate one CUPTI activity record (a `CUpti_Activity *`, passed as void
 * so this header does not need cupti.h) into *out. Returns 1 when the
 * record is one we keep, 0 when it is skipped (unknown kind, bookkeeping),
 * or a negative error for NULL input. External-correlation and API records
 * also feed the launch table (below) so later kernels find their range.
 * Works without a GPU and without libcupti (tests call it directly);
 * returns PROF_EUNSUPPORTED in builds without CUPTI headers. */
int prof__cupti_translate(const void *cupti_record, prof__gpu_rec *out);

/* The launch table: correlation id -> calling thread, innermost range and
 * API start, filled at API entry (runtime and driver callbacks) and looked
 * up when kernels, copies and sets are translated. PROF_GPU_LAUNCH_SLOTS
 * slots keyed by the id's low bits, so an entry lives until that many later
 * calls; buffers are flushed every 100 ms, well within that. Each slot is
 * guarded by a sequence word: a writer claims it (odd) with one CAS, a
 * reader that sees it change retries nothing and reports a miss, so fields
 * of two calls never mix. A put that finds the slot claimed is dropped
 * (never waits). */
#define PROF_GPU_LAUNCH_SLOTS (1u << 18)
void prof__gpu_launch_put(uint32_t corr, uint32_t tid, uint32_t range, uint64_t api_start);
/* Fill from an API record: only into an empty slot, the same id's slot
 * (gaps only), or one holding an older id — never over a newer call. */
void prof__gpu_launch_fill(uint32_t corr, uint32_t tid, uint32_t range, uint64_t api_start);
int prof__gpu_launch_get(uint32_t corr, uint32_t *tid, uint32_t *range, uint64_t *api_start);
void prof__gpu_launch_reset(void);

/* Counters since load (cupti.c): kernels whose launch was not in the table,
 * records CUPTI left incomplete, driver callbacks enabled at start. */
uint64_t prof__cupti_unattributed(void);
uint64_t prof__cupti_incomplete(void);
uint64_t prof__cupti_driver_callbacks(void);

/* 1 once the driver called InitializeInjection (CUDA is being initialised
 * by the program). */
int prof__cupti_injected(void);
/* The CUDA driver's injection entry point (exported; gpu_mod.c). */
int InitializeInjection(void);

/* Residual between the CPU event clock (TSC ticks converted with the
 * session's calibration) and CLOCK_MONOTONIC, CUPTI's time base: measured
 * now (ns, signed) and the largest |residual| so far. The writer hook
 * measures every cycle and puts the largest in META gpu.clock_residual_ns. */
int64_t prof__gpu_clock_check(void);
int64_t prof__gpu_clock_residual_max(void);

/* Why GPU data is absent (or "ok"): the value written to gpu.status. */
const char *prof__gpu_status(void);

/* Run the start-up checks and enable CUPTI as the module's start hook
 * would, without a running session (tests). Returns 0 or a negative error
 * with the reason in prof__gpu_status(). */
int prof__gpu_try_start(void);
void prof__gpu_stop_for_test(void);

/* ---- NVTX capture (nvtx.c) ------------------------------------------------ */

/* 1 when this libmlprof was built with the NVTX headers (capture works). */
int prof__nvtx_available(void);
/* At prof_start, on the caller's thread: point NVTX_INJECTION64_PATH at the
 * shared libmlprof when nothing else is set, so a program linked with it
 * needs no variable. MLPROF_NVTX=0 skips it. */
void prof__nvtx_session_start(void);
/* Point the loader variable `var` (NVTX_INJECTION64_PATH,
 * CUDA_INJECTION64_PATH) at the shared libmlprof unless it is set. Returns 1
 * when set. setenv: call it only from prof_init's thread. */
int prof__gpu_point_env(const char *var);
/* Start/end ranges not recorded because all 16 lanes were open. */
uint64_t prof__nvtx_async_dropped(void);

/* ---- Between the module (gpu_mod.c) and the CUPTI backend (cupti.c) ---- */

/* Status codes written to gpu.status. */
#define PROF_GPU_ST_OK "ok"
#define PROF_GPU_ST_OFF "disabled"
#define PROF_GPU_ST_NOT_BUILT "not_built"
#define PROF_GPU_ST_NO_DRIVER "no_driver"
#define PROF_GPU_ST_NO_DEVICE "no_device"
#define PROF_GPU_ST_NO_CUPTI "no_cupti"
#define PROF_GPU_ST_OLD_CUPTI "cupti_too_old"
#define PROF_GPU_ST_PRIVILEGES "insufficient_privileges"
#define PROF_GPU_ST_SUBSCRIBER "other_subscriber"
#define PROF_GPU_ST_ERROR "cupti_error"
#define PROF_GPU_ST_HIDDEN "devices_hidden"  /* CUDA_VISIBLE_DEVICES="": said nowhere */
#define PROF_GPU_ST_WAITING "cuda_not_initialised" /* CUPTI starts when the program calls cuInit */

/* prof__cupti_start(): the program has not loaded the driver yet; CUPTI
 * starts from InitializeInjection when it does. */
#define PROF_GPU_DEFERRED 1

/* Record why GPU data is absent: one stderr line "mlprof: GPU profiling
 * off: <cause>; <fix>; CPU profiling continues", gpu.status = `status` and
 * gpu.status_detail = cause in the trace's META. */
void prof__gpu_fail(const char *status, const char *cause, const char *fix);

/* Backend: find the driver the program loaded, load libcupti, subscribe,
 * enable activities. Never calls cuInit. Returns 0, PROF_GPU_DEFERRED when
 * libcuda is not loaded yet, or a negative error after prof__gpu_fail().
 * Runs on the thread that calls prof_start or cuInit, never on ours. */
int prof__cupti_start(void);
/* Flush everything (forced), disable, unsubscribe. Idempotent. */
void prof__cupti_stop(void);
/* Called by the writer hook each cycle: periodic flush of CUPTI buffers. */
void prof__cupti_tick(uint64_t now_ns);

/* Hand an encoded payload to the writer (takes ownership of b->p). */
void prof__gpu_queue_push(prof__buf *b);
/* Add CUPTI's dropped-record count (since the last call). */
void prof__gpu_dropped_add(uint64_t n);
/* Total dropped so far. */
uint64_t prof__gpu_dropped(void);
/* Payloads waiting for the writer (tests). */
size_t prof__gpu_queue_len(void);
/* Pop one payload (tests and the writer hook); returns 0 when empty.
 * The caller frees b->p. */
int prof__gpu_queue_pop(prof__buf *b);

#endif /* PROF_GPU_H */
