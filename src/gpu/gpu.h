/* gpu.h — the GPU producer (CUPTI activity, NVTX capture) seen from the rest
 * of the library and the tests. The records it writes and their codec are in
 * trace/rec_gpu.h.
 */
#ifndef PROF_GPU_H
#define PROF_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "trace/rec_gpu.h"

/* ---- Producer side (cupti.c) -------------------------------------------- */

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

/* MLPROF_GPU: 0 never touch CUDA (0/off/no/false), 1 asked for
 * (1/on/yes/true), -1 automatic (unset or "auto"). Any other value is
 * automatic, with one message. */
int prof__gpu_env(void);

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
