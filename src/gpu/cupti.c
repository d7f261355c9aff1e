/* cupti.c — the CUPTI backend: the only file that includes cupti.h.
 *
 * libcupti and the driver (libcuda) are loaded with dlopen at run time, so
 * libmlprof never links CUDA and runs unchanged on machines without a GPU.
 * It never initialises CUDA itself: CUPTI starts when the program already
 * uses the driver (libcuda loaded at prof_start) or, later, from the
 * driver's injection hook InitializeInjection() that cuInit calls on the
 * program's own thread. It subscribes to runtime-API callbacks and to the
 * driver's launch, copy, set, sync and graph-launch callbacks (to tie each
 * launch to the calling thread's innermost range), enables the activity
 * kinds we keep, and turns every completed activity buffer into one
 * PROF_CHUNK_GPU payload for the writer thread. CUPTI timestamps are put in
 * our time base (CLOCK_MONOTONIC ns) through CUPTI's timestamp callback, or
 * by a measured offset where that callback is missing (docs/gpu.md).
 *
 * Activity records are read through the struct versions of the headers we
 * are built with (chosen by CUPTI_API_VERSION); only fields whose offsets
 * are the same in every version from CUDA 11.8 to 13 are read, which the
 * _Static_asserts of cupti_records.h pin, so records of an older or newer
 * libcupti are read safely.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/producer.h"
#include "gpu.h"


#ifndef MLPROF_HAVE_CUPTI

int prof__cupti_translate(const void *rec, prof__gpu_rec *out) {
  (void)rec;
  (void)out;
  return PROF_EUNSUPPORTED;
}

int prof__cupti_start(void) {
  prof__gpu_fail(PROF_GPU_ST_NOT_BUILT, "this libmlprof was built without the CUPTI headers",
                 "rebuild it where a CUDA toolkit is installed (cmake -DMLPROF_WITH_CUPTI=ON)");
  return PROF_EUNSUPPORTED;
}

void prof__cupti_stop(void) {}
void prof__cupti_tick(uint64_t now_ns) { (void)now_ns; }
uint64_t prof__cupti_unattributed(void) { return 0; }
uint64_t prof__cupti_incomplete(void) { return 0; }
uint64_t prof__cupti_driver_callbacks(void) { return 0; }

#else /* MLPROF_HAVE_CUPTI */

#include <cupti.h>
#include <link.h>

#include "cupti_records.h" /* the record struct versions we read; needs cupti.h first */

#define BUF_SIZE (8u << 20)        /* activity buffer handed to CUPTI */
#define PAYLOAD_MAX (4u << 20)     /* split encoded payloads beyond this */
#define FLUSH_PERIOD_MS 100u       /* CUPTI's own periodic flush, where supported */
#define TICK_FLUSH_NS 100000000ull /* our periodic flush as well: bounds the launch table's lag */
#define API_NAME_SLOTS 2048
#define CU_ERROR_NOT_INITIALIZED 3

/* Functions taken from libcupti; `req` 0 marks the optional ones. */
#define CUPTI_FUNCS(X)                          \
  X(cuptiGetResultString, 1)                    \
  X(cuptiActivityRegisterCallbacks, 1)          \
  X(cuptiActivityEnable, 1)                     \
  X(cuptiActivityDisable, 1)                    \
  X(cuptiActivityFlushAll, 1)                   \
  X(cuptiActivityGetNextRecord, 1)              \
  X(cuptiActivityGetNumDroppedRecords, 1)       \
  X(cuptiSubscribe, 1)                          \
  X(cuptiUnsubscribe, 1)                        \
  X(cuptiEnableDomain, 1)                       \
  X(cuptiEnableCallback, 1)                     \
  X(cuptiGetTimestamp, 1)                       \
  X(cuptiActivityRegisterTimestampCallback, 0)  \
  X(cuptiActivityFlushPeriod, 0)                \
  X(cuptiSetThreadIdType, 0)                    \
  X(cuptiGetCallbackName, 0)                    \
  X(cuptiGetVersion, 0)

static struct {
#define CF_FIELD(fn, req) __typeof__(&fn) fn;
  CUPTI_FUNCS(CF_FIELD)
#undef CF_FIELD
} C;

typedef int (*cu_count_fn)(int *count);
typedef int (*cu_sync_fn)(void);

static void *cuda_lib, *cupti_lib;
static cu_sync_fn cu_ctx_sync;
static CUpti_SubscriberHandle subscriber;
static int running;
static int64_t clock_offset; /* added to CUPTI times when the callback is missing */
static uint64_t last_tick;
static uint32_t api_names[2][API_NAME_SLOTS];
static uint64_t incomplete, unattributed, driver_cbs;

/* Activity kinds we enable; the first is required. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_OVERHEAD};
#define NKINDS (sizeof kinds / sizeof kinds[0])
static int enabled[NKINDS];

uint64_t prof__cupti_incomplete(void) { return __atomic_load_n(&incomplete, __ATOMIC_RELAXED); }
uint64_t prof__cupti_unattributed(void) { return __atomic_load_n(&unattributed, __ATOMIC_RELAXED); }
uint64_t prof__cupti_driver_callbacks(void) { return driver_cbs; }

/* ---- translation (no libcupti needed) ------------------------------------ */

static uint64_t tconv(uint64_t t) { return t ? t + (uint64_t)clock_offset : 0; }

static uint8_t mem_kind(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return PROF_GPU_MEM_PAGEABLE;
  case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return PROF_GPU_MEM_PINNED;
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return PROF_GPU_MEM_DEVICE;
  case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return PROF_GPU_MEM_ARRAY;
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return PROF_GPU_MEM_MANAGED;
  default: return PROF_GPU_MEM_UNKNOWN;
  }
}

static uint8_t copy_dir(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return PROF_GPU_COPY_H2D;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return PROF_GPU_COPY_D2H;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return PROF_GPU_COPY_D2D;
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return PROF_GPU_COPY_H2H;
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return PROF_GPU_COPY_P2P;
  default: return PROF_GPU_COPY_OTHER;
  }
}

/* Thread, range and API start of the call that launched `corr`; 0 when the
 * launch table no longer (or never) had it. */
static int origin(prof__gpu_rec *r) {
  uint32_t tid, range;
  uint64_t api;
  if (!prof__gpu_launch_get(r->corr, &tid, &range, &api)) return 0;
  r->tid = tid;
  r->range = range;
  r->launch = api;
  return 1;
}

static uint32_t intern_or_zero(const char *s) { return s && *s ? prof__intern(s) : 0; }

/* A record CUPTI could not complete (forced flush, torn down context) has
 * a zero or reversed time span: counted, not kept. */
static int incomplete_span(uint64_t start, uint64_t end) {
  if (start && end >= start) return 0;
  __atomic_fetch_add(&incomplete, 1, __ATOMIC_RELAXED);
  return 1;
}

static int tr_kernel(const cu_kernel *k, prof__gpu_rec *r) {
  if (incomplete_span(k->start, k->end)) return 0;
  r->kind = PROF_GPU_KERNEL;
  r->device = k->deviceId;
  r->stream = k->streamId;
  r->corr = k->correlationId;
  r->start = tconv(k->start);
  r->end = tconv(k->end);
  r->name = intern_or_zero(k->name);
  r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
  r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
  r->regs = k->registersPerThread;
  r->smem_static = k->staticSharedMemory > 0 ? (uint32_t)k->staticSharedMemory : 0;
  r->smem_dynamic = k->dynamicSharedMemory > 0 ? (uint32_t)k->dynamicSharedMemory : 0;
  if (!origin(r)) __atomic_fetch_add(&unattributed, 1, __ATOMIC_RELAXED);
  return 1;
}

static int tr_memcpy(const cu_memcpy *m, prof__gpu_rec *r) {
  if (incomplete_span(m->start, m->end)) return 0;
  r->kind = PROF_GPU_MEMCPY;
  r->sub = copy_dir(m->copyKind);
  r->src_mem = mem_kind(m->srcKind);
  r->dst_mem = mem_kind(m->dstKind);
  r->bytes = m->bytes;
  r->device = m->deviceId;
  r->stream = m->streamId;
  r->corr = m->correlationId;
  r->start = tconv(m->start);
  r->end = tconv(m->end);
  origin(r);
  return 1;
}

static int tr_p2p(const CUpti_ActivityMemcpyPtoP4 *m, prof__gpu_rec *r) {
  if (incomplete_span(m->start, m->end)) return 0;
  r->kind = PROF_GPU_MEMCPY;
  r->sub = PROF_GPU_COPY_P2P;
  r->src_mem = mem_kind(m->srcKind);
  r->dst_mem = mem_kind(m->dstKind);
  r->bytes = m->bytes;
  r->device = m->deviceId;
  r->stream = m->streamId;
  r->corr = m->correlationId;
  r->start = tconv(m->start);
  r->end = tconv(m->end);
  origin(r);
  return 1;
}

static int tr_memset(const cu_memset *m, prof__gpu_rec *r) {
  if (incomplete_span(m->start, m->end)) return 0;
  r->kind = PROF_GPU_MEMSET;
  r->src_mem = mem_kind(m->memoryKind);
  r->bytes = m->bytes;
  r->device = m->deviceId;
  r->stream = m->streamId;
  r->corr = m->correlationId;
  r->start = tconv(m->start);
  r->end = tconv(m->end);
  origin(r);
  return 1;
}

static int tr_memory(const cu_memory *m, prof__gpu_rec *r) {
  r->kind = PROF_GPU_MEMORY;
  r->sub = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? PROF_GPU_MEMOP_FREE
                                                                                   : PROF_GPU_MEMOP_ALLOC;
  r->src_mem = mem_kind(m->memoryKind);
  r->bytes = m->bytes;
  r->addr = m->address;
  r->device = m->deviceId;
  r->stream = m->streamId;
  r->corr = m->correlationId;
  r->start = r->end = tconv(m->timestamp);
  return 1;
}

static int tr_sync(const cu_sync *s, prof__gpu_rec *r) {
  if (incomplete_span(s->start, s->end)) return 0;
  r->kind = PROF_GPU_SYNC;
  r->sub = (uint8_t)(s->type <= 4 ? s->type : 0);
  r->stream = s->streamId;
  r->corr = s->correlationId;
  r->start = tconv(s->start);
  r->end = tconv(s->end);
  origin(r);
  r->launch = 0;
  return 1;
}

static uint32_t api_name(int driver, uint32_t cbid) {
  uint32_t *slot = cbid < API_NAME_SLOTS ? &api_names[driver][cbid] : NULL;
  if (slot && *slot) return *slot;
  const char *n = NULL;
  CUpti_CallbackDomain dom = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  char buf[48];
  if (!C.cuptiGetCallbackName || C.cuptiGetCallbackName(dom, cbid, &n) != CUPTI_SUCCESS || !n) {
    snprintf(buf, sizeof buf, "%s_api_%u", driver ? "driver" : "runtime", cbid);
    n = buf;
  }
  uint32_t id = prof__intern(n);
  if (slot) *slot = id;
  return id;
}

/* API records carry the system thread id (cuptiSetThreadIdType); the
 * launch table adds the range. A record whose entry is gone is filled in
 * only where no newer call took its slot (prof__gpu_launch_fill). */
static int tr_api(const CUpti_ActivityAPI *a, prof__gpu_rec *r) {
  int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
  if (incomplete_span(a->start, a->end)) return 0;
  r->kind = PROF_GPU_API;
  r->sub = driver ? PROF_GPU_API_DRIVER : PROF_GPU_API_RUNTIME;
  r->corr = a->correlationId;
  r->start = tconv(a->start);
  r->end = tconv(a->end);
  r->name = api_name(driver, a->cbid);
  r->tid = a->threadId;
  uint32_t tid, range;
  uint64_t api;
  if (prof__gpu_launch_get(r->corr, &tid, &range, &api)) {
    if (tid) r->tid = tid;
    r->range = range;
  }
  prof__gpu_launch_fill(r->corr, r->tid, r->range, r->start);
  return 1;
}

static int tr_overhead(const cu_overhead *o, prof__gpu_rec *r) {
  uint32_t k = (uint32_t)o->overheadKind;
  r->kind = PROF_GPU_OVERHEAD;
  r->sub = (uint8_t)(k < 0x10000 ? k : 16 + (k >> 16));
  r->start = tconv(o->start);
  r->end = tconv(o->end);
  return 1;
}

static int tr_device(const cu_device *d, prof__gpu_rec *r) {
  r->kind = PROF_GPU_DEVICE;
  r->device = d->id;
  r->name = intern_or_zero(d->name);
  r->cc_major = d->computeCapabilityMajor;
  r->cc_minor = d->computeCapabilityMinor;
  r->sm_count = d->numMultiprocessors;
  r->max_warps_per_sm = d->maxWarpsPerMultiprocessor;
  r->max_threads_per_sm = d->maxWarpsPerMultiprocessor * (d->numThreadsPerWarp ? d->numThreadsPerWarp : 32);
  r->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
  r->max_regs_per_sm = d->maxRegistersPerMultiprocessor;
  r->max_smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
  r->mem_bytes = d->globalMemorySize;
  return 1;
}

int prof__cupti_translate(const void *rec, prof__gpu_rec *out) {
  if (!rec || !out) return PROF_EINVAL;
  const CUpti_Activity *a = rec;
  memset(out, 0, sizeof *out);
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return tr_kernel(rec, out);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return tr_memcpy(rec, out);
  case CUPTI_ACTIVITY_KIND_MEMCPY2: return tr_p2p(rec, out);
  case CUPTI_ACTIVITY_KIND_MEMSET: return tr_memset(rec, out);
  case CUPTI_ACTIVITY_KIND_MEMORY2: return tr_memory(rec, out);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return tr_sync(rec, out);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: return tr_api(rec, out);
  case CUPTI_ACTIVITY_KIND_OVERHEAD: return tr_overhead(rec, out);
  case CUPTI_ACTIVITY_KIND_DEVICE: return tr_device(rec, out);
  default: return 0;
  }
}

/* ---- buffers ------------------------------------------------------------- */

static void device_meta(const prof__gpu_rec *r, const cu_device *d) {
  char key[48], val[256];
  snprintf(key, sizeof key, "gpu.device.%u", r->device);
  snprintf(val, sizeof val, "%s; cc %u.%u; %u SMs; %llu MiB; %u threads/SM", d->name ? d->name : "?",
           r->cc_major, r->cc_minor, r->sm_count, (unsigned long long)(r->mem_bytes >> 20),
           r->max_threads_per_sm);
  prof__meta_add(key, val);
}

/* Every record of one completed buffer. A record CUPTI reports as invalid
 * (incomplete) is counted and skipped: the ones after it are still read. */
static void consume(uint8_t *buffer, size_t valid) {
  CUpti_Activity *rec = NULL;
  prof__buf b = {0};
  prof__gpu_rec r, prev = {0};
  for (;;) {
    CUpti_Activity *before = rec;
    CUptiResult rc = C.cuptiActivityGetNextRecord(buffer, valid, &rec);
    if (rc == CUPTI_ERROR_INVALID_KIND && rec && rec != before) {
      __atomic_fetch_add(&incomplete, 1, __ATOMIC_RELAXED);
      continue;
    }
    if (rc != CUPTI_SUCCESS) break;
    if (prof__cupti_translate(rec, &r) != 1) continue;
    if (r.kind == PROF_GPU_DEVICE) device_meta(&r, (const cu_device *)rec);
    prof__rec_gpu_encode(&b, &r, &prev);
    if (b.len >= PAYLOAD_MAX) {
      prof__gpu_queue_push(&b);
      memset(&prev, 0, sizeof prev);
    }
  }
  prof__gpu_queue_push(&b);
}

/* CUPTI's buffers are the profiler's memory, not the program's. */
static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  prof__guard_begin();
  *buffer = aligned_alloc(8, BUF_SIZE);
  prof__guard_end();
  *size = *buffer ? BUF_SIZE : 0;
  *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  prof__guard_begin();
  if (buffer && valid) consume(buffer, valid);
  size_t dropped = 0;
  if (C.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    prof__gpu_dropped_add(dropped);
  free(buffer);
  prof__guard_end();
}

/* ---- callbacks and clock ------------------------------------------------- */

static void launch_enter(uint32_t corr) {
  prof__thread *t = prof__self;
  uint32_t tid = t ? t->tid : (uint32_t)gettid(), range = 0;
  if (t && t->depth) {
    uint32_t d = t->depth <= PROF_MAX_DEPTH ? t->depth : PROF_MAX_DEPTH;
    range = t->stack[d - 1] & ~PROF_DROPPED_BIT;
  }
  prof__gpu_launch_put(corr, tid, range, prof__mono_ns());
}

/* Runtime API (every call) and the driver's launch/copy/set/sync calls
 * (enabled one by one): the entry ties the call's correlation id to this
 * thread and its innermost range. A context being destroyed gets its
 * records flushed first: the program's exit may tear CUDA down before our
 * atexit runs. */
static void CUPTIAPI api_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
  (void)ud;
  if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && running)
      C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return;
  }
  const CUpti_CallbackData *cb = data;
  if (!cb || cb->callbackSite != CUPTI_API_ENTER) return;
  if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) launch_enter(cb->correlationId);
  else if (dom == CUPTI_CB_DOMAIN_DRIVER_API) launch_enter(cb->correlationId);
}

static uint64_t CUPTIAPI timestamp_cb(void) { return prof__mono_ns(); }

/* Our clock for CUPTI's: the timestamp callback where CUPTI has it, else
 * an offset measured over 16 paired readings (the tightest pair wins). */
static void align_clocks(void) {
  char v[96];
  if (C.cuptiActivityRegisterTimestampCallback &&
      C.cuptiActivityRegisterTimestampCallback(timestamp_cb) == CUPTI_SUCCESS) {
    clock_offset = 0;
    prof__meta_add("gpu.clock", "cupti timestamp callback: CLOCK_MONOTONIC");
    return;
  }
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t g = 0, t0 = prof__mono_ns();
    C.cuptiGetTimestamp(&g);
    uint64_t t1 = prof__mono_ns();
    if (t1 - t0 < best) {
      best = t1 - t0;
      clock_offset = (int64_t)(t0 + (t1 - t0) / 2) - (int64_t)g;
    }
  }
  snprintf(v, sizeof v, "measured offset %lld ns, error +-%llu ns", (long long)clock_offset,
           (unsigned long long)(best / 2));
  prof__meta_add("gpu.clock", v);
}

/* ---- loading ------------------------------------------------------------- */

static const char *cupti_error(CUptiResult rc) {
  const char *s = NULL;
  if (C.cuptiGetResultString && C.cuptiGetResultString(rc, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error";
}

static int fail_cupti(const char *what, CUptiResult rc) {
  char cause[PROF_ERR_MAX];
  snprintf(cause, sizeof cause, "%s failed: %s (%d)", what, cupti_error(rc), (int)rc);
  if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    prof__gpu_fail(PROF_GPU_ST_PRIVILEGES, cause,
                   "allow profiling for all users (driver option NVreg_RestrictProfilingToAdminUsers=0) "
                   "or run as root");
  else if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    prof__gpu_fail(PROF_GPU_ST_SUBSCRIBER, cause,
                   "another CUPTI tool (Nsight Systems, the PyTorch profiler, ...) is attached: use one "
                   "profiler at a time, or set MLPROF_GPU=0");
  else
    prof__gpu_fail(PROF_GPU_ST_ERROR, cause, "check the CUDA installation, or set MLPROF_GPU=0");
  return PROF_EUNSUPPORTED;
}

/* CUDA_VISIBLE_DEVICES="" (or -1) hides every device on purpose. */
static int devices_hidden(void) {
  const char *v = getenv("CUDA_VISIBLE_DEVICES");
  return v && (!*v || strcmp(v, "-1") == 0);
}

static int find_cuda(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  const char *base = slash ? slash + 1 : info->dlpi_name;
  return base && strncmp(base, "libcuda.so", 10) == 0;
}

/* Whether libcuda is among the loaded objects. */
static int cuda_loaded(void) { return dl_iterate_phdr(find_cuda, NULL) != 0; }

/* The driver as the program left it: never cuInit here (a program that
 * forks CUDA workers must be the one to initialise CUDA, and cuInit costs
 * about a second on 8-GPU nodes). Returns 1 when libcuda is not loaded yet
 * (start later, from InitializeInjection), 0 to go on, or an error. */
static int check_driver(int asked) {
  char cause[320];
  if (devices_hidden()) {
    prof__gpu_fail(PROF_GPU_ST_HIDDEN, "CUDA_VISIBLE_DEVICES hides every device", "nothing to do");
    return PROF_EUNSUPPORTED;
  }
  /* Whether the program has loaded the driver is read from the loaded
   * objects: a dlopen with RTLD_NOLOAD would walk the library path first,
   * a cost every program without CUDA would pay at start. */
  if (!cuda_loaded() && !asked && !prof__cupti_injected()) return 1;
  cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!cuda_lib) cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda_lib) {
    const char *e = dlerror();
    snprintf(cause, sizeof cause, "no NVIDIA driver (%s)", e ? e : "libcuda.so.1 not found");
    prof__gpu_fail(PROF_GPU_ST_NO_DRIVER, cause, "install the NVIDIA driver to profile the GPU");
    return PROF_EUNSUPPORTED;
  }
  cu_count_fn count = (cu_count_fn)dlsym(cuda_lib, "cuDeviceGetCount");
  cu_ctx_sync = (cu_sync_fn)dlsym(cuda_lib, "cuCtxSynchronize");
  if (!count) {
    prof__gpu_fail(PROF_GPU_ST_NO_DRIVER, "libcuda.so.1 lacks cuDeviceGetCount", "reinstall the NVIDIA driver");
    return PROF_EUNSUPPORTED;
  }
  int n = 0, rc = count(&n);
  if (rc == CU_ERROR_NOT_INITIALIZED) return 0; /* loaded, not initialised yet: CUPTI waits for cuInit */
  if (rc != 0 || n <= 0) {
    snprintf(cause, sizeof cause, "no usable CUDA device (cuDeviceGetCount: error %d, %d devices)", rc, n);
    prof__gpu_fail(PROF_GPU_ST_NO_DEVICE, cause, "check nvidia-smi and CUDA_VISIBLE_DEVICES");
    return PROF_EUNSUPPORTED;
  }
  return 0;
}

/* The directory of a loaded library that defines `sym`, or "". */
static void dir_of_loaded(const char *const *sonames, char *dir, size_t n) {
  dir[0] = 0;
  for (size_t i = 0; sonames[i]; i++) {
    void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name) {
      const char *slash = strrchr(lm->l_name, '/');
      if (slash) snprintf(dir, n, "%.*s", (int)(slash - lm->l_name), lm->l_name);
    }
    dlclose(h);
    if (dir[0]) return;
  }
}

#define CUPTI_SONAMES "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"
#define NCAND 24

/* Where libcupti may be, in order: one the process already loaded (PyTorch
 * wheels bring their own), MLPROF_CUPTI_LIB, $CUDA_HOME, beside libcudart
 * (toolkit layout and the nvidia-* wheel layout), the loader's path, the
 * default toolkit. lib64 and lib both (CUDA 13 keeps it in lib). */
static size_t cupti_candidates(char cand[NCAND][512], int noload[NCAND]) {
  static const char *const sonames[] = {CUPTI_SONAMES, NULL};
  static const char *const cudart[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL};
  static const char *const subdirs[] = {"extras/CUPTI/lib64", "lib64", "lib", "extras/CUPTI/lib"};
  size_t n = 0;
  for (size_t i = 0; sonames[i] && n < NCAND; i++, n++) snprintf(cand[n], 512, "%s", sonames[i]), noload[n] = 1;
  const char *env = prof__env("CUPTI_LIB");
  if (env && *env) snprintf(cand[n], 512, "%s", env), noload[n++] = 0;
  const char *home = getenv("CUDA_HOME");
  for (size_t i = 0; home && *home && i < 4 && n < NCAND; i++)
    snprintf(cand[n], 512, "%s/%s/libcupti.so", home, subdirs[i]), noload[n++] = 0;
  char rt[400];
  dir_of_loaded(cudart, rt, sizeof rt);
  if (rt[0] && n + 3 <= NCAND) {
    snprintf(cand[n], 512, "%s/libcupti.so", rt), noload[n++] = 0;
    snprintf(cand[n], 512, "%s/../extras/CUPTI/lib64/libcupti.so", rt), noload[n++] = 0;
    snprintf(cand[n], 512, "%s/../../cuda_cupti/lib/libcupti.so.%s", rt, strstr(rt, "cu13") ? "13" : "12"),
        noload[n++] = 0;
  }
  for (size_t i = 0; sonames[i] && n < NCAND; i++) snprintf(cand[n], 512, "%s", sonames[i]), noload[n++] = 0;
  for (size_t i = 0; i < 4 && n < NCAND; i++)
    snprintf(cand[n], 512, "/usr/local/cuda/%s/libcupti.so", subdirs[i]), noload[n++] = 0;
  return n;
}

static void unload_cupti(void) {
  if (cupti_lib) dlclose(cupti_lib);
  cupti_lib = NULL;
  memset(&C, 0, sizeof C);
}

/* Take the functions from `h`; NULL when a required one is missing. */
static const char *take_symbols(void *h) {
#define CF_LOAD(fn, req)                          \
  *(void **)&C.fn = dlsym(h, #fn);                \
  if ((req) && !C.fn) return #fn;
  CUPTI_FUNCS(CF_LOAD)
#undef CF_LOAD
  return NULL;
}

/* Load the first libcupti that has our functions and accepts this driver
 * (a CUPTI newer than the driver says NOT_COMPATIBLE at cuptiSubscribe:
 * the next candidate is tried). Subscribes on success. */
static int load_and_subscribe(void) {
  static char cand[NCAND][512];
  int noload[NCAND];
  char tried[1024] = "", cause[1200];
  const char *missing = NULL;
  size_t used = 0, n = cupti_candidates(cand, noload);
  CUptiResult last = CUPTI_SUCCESS;
  for (size_t i = 0; i < n; i++) {
    void *h = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | (noload[i] ? RTLD_NOLOAD : 0));
    if (!h) {
      if (!noload[i]) {
        int w = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", cand[i]);
        if (w > 0 && (size_t)w < sizeof tried - used) used += (size_t)w;
      }
      continue;
    }
    cupti_lib = h;
    const char *m = take_symbols(h);
    if (m) {
      missing = m;
      unload_cupti();
      continue;
    }
    last = C.cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)api_callback, NULL);
    if (last == CUPTI_SUCCESS) {
      char v[560];
      snprintf(v, sizeof v, "%.500s%s", cand[i], noload[i] ? " (already loaded)" : "");
      prof__meta_add("gpu.cupti_lib", v);
      return 0;
    }
    subscriber = NULL;
    if (last != CUPTI_ERROR_NOT_COMPATIBLE) return fail_cupti("cuptiSubscribe", last);
    unload_cupti();
  }
  if (last == CUPTI_ERROR_NOT_COMPATIBLE) {
    prof__gpu_fail(PROF_GPU_ST_ERROR, "no libcupti found is compatible with this driver",
                   "use the libcupti of the driver's CUDA version (MLPROF_CUPTI_LIB=<path>)");
    return PROF_EUNSUPPORTED;
  }
  if (missing) {
    snprintf(cause, sizeof cause, "libcupti lacks %s (too old)", missing);
    prof__gpu_fail(PROF_GPU_ST_OLD_CUPTI, cause, "use the libcupti of CUDA 11.8 or newer (MLPROF_CUPTI_LIB=<path>)");
    return PROF_EUNSUPPORTED;
  }
  snprintf(cause, sizeof cause, "libcupti not found (tried %s)", tried);
  prof__gpu_fail(PROF_GPU_ST_NO_CUPTI, cause,
                 "set MLPROF_CUPTI_LIB to its path or add the CUPTI lib directory to LD_LIBRARY_PATH");
  return PROF_EUNSUPPORTED;
}

static int enable_kinds(void) {
  char failed[512] = "";
  size_t used = 0;
  for (size_t i = 0; i < NKINDS; i++) {
    if (kinds[i] == CUPTI_ACTIVITY_KIND_DRIVER && prof__env("GPU_DRIVER_API") &&
        strcmp(prof__env("GPU_DRIVER_API"), "0") == 0)
      continue;
    CUptiResult rc = C.cuptiActivityEnable(kinds[i]);
    enabled[i] = rc == CUPTI_SUCCESS;
    if (i == 0 && !enabled[i]) return fail_cupti("cuptiActivityEnable(CONCURRENT_KERNEL)", rc);
    if (!enabled[i] && used < sizeof failed) {
      int w = snprintf(failed + used, sizeof failed - used, "%s%d", used ? "," : "", (int)kinds[i]);
      if (w > 0) used += (size_t)w;
    }
  }
  if (used) prof__meta_add("gpu.kinds_unavailable", failed);
  return 0;
}

static void disable_kinds(void) {
  for (size_t i = 0; i < NKINDS; i++)
    if (enabled[i]) C.cuptiActivityDisable(kinds[i]);
  memset(enabled, 0, sizeof enabled);
}

/* Driver calls that launch work or wait for it: cuLaunch*, cuGraphLaunch*,
 * cuMemcpy*, cuMemset*, *Synchronize*. Chosen by name so every header
 * version's ids are right; one callback each, not the whole domain. */
static int driver_call_wanted(const char *n) {
  return strncmp(n, "cuLaunch", 8) == 0 || strncmp(n, "cuGraphLaunch", 13) == 0 || strncmp(n, "cuMemcpy", 8) == 0 ||
         strncmp(n, "cuMemset", 8) == 0 || strstr(n, "Synchronize") != NULL;
}

static int enable_callbacks(void) {
  CUptiResult rc = C.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (rc != CUPTI_SUCCESS) return fail_cupti("cuptiEnableDomain(RUNTIME_API)", rc);
  driver_cbs = 0;
  for (uint32_t id = 1; C.cuptiGetCallbackName && id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
    const char *n = NULL;
    if (C.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &n) != CUPTI_SUCCESS || !n || !driver_call_wanted(n))
      continue;
    if (C.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS) driver_cbs++;
  }
  C.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  return 0;
}

static void version_meta(void) {
  uint32_t v = 0;
  char buf[64];
  if (C.cuptiGetVersion && C.cuptiGetVersion(&v) == CUPTI_SUCCESS) {
    snprintf(buf, sizeof buf, "%u (built with %u)", v, (unsigned)CUPTI_API_VERSION);
    prof__meta_add("gpu.cupti_version", buf);
  }
}

static int start_activity(void) {
  /* Without this, driver-API records carry truncated pthread_self() values. */
  if (C.cuptiSetThreadIdType) C.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  CUptiResult rc = C.cuptiActivityRegisterCallbacks(buf_request, buf_complete);
  if (rc != CUPTI_SUCCESS) return fail_cupti("cuptiActivityRegisterCallbacks", rc);
  int err = enable_kinds();
  if (err) return err;
  if (C.cuptiActivityFlushPeriod) C.cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
  return 0;
}

int prof__cupti_start(void) {
  if (running) return 0;
  clock_offset = 0;
  int rc = check_driver(prof__gpu_env() == 1);
  if (rc == 1) return PROF_GPU_DEFERRED;
  if (!rc) rc = load_and_subscribe();
  if (!rc) rc = enable_callbacks();
  if (!rc) {
    align_clocks();
    rc = start_activity();
  }
  if (rc) {
    if (cupti_lib && C.cuptiActivityDisable) disable_kinds();
    if (subscriber && C.cuptiUnsubscribe) C.cuptiUnsubscribe(subscriber);
    subscriber = NULL;
    return rc;
  }
  version_meta();
  running = 1;
  last_tick = prof__mono_ns();
  return 0;
}

/* Every 100 ms: completed buffers reach us long before the launch table's
 * slots are reused, even where CUPTI has its own periodic flush. */
void prof__cupti_tick(uint64_t now_ns) {
  if (!running || now_ns - last_tick < TICK_FLUSH_NS) return;
  last_tick = now_ns;
  C.cuptiActivityFlushAll(0);
}

static void count_meta(const char *key, uint64_t n) {
  char v[24];
  snprintf(v, sizeof v, "%llu", (unsigned long long)n);
  prof__meta_add(key, v);
}

/* Stop producing, let the device finish what was queued, then take every
 * buffer: flushing first would leave the tail in CUPTI. */
void prof__cupti_stop(void) {
  if (!running) return;
  running = 0;
  disable_kinds();
  if (cu_ctx_sync) cu_ctx_sync(); /* error without a current context: nothing queued on this thread */
  C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (subscriber) C.cuptiUnsubscribe(subscriber);
  subscriber = NULL;
  count_meta("gpu.kernels_unattributed", prof__cupti_unattributed());
  count_meta("gpu.records_incomplete", prof__cupti_incomplete());
}

#endif /* MLPROF_HAVE_CUPTI */
