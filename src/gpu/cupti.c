/* cupti.c — the CUPTI backend: the only file that includes cupti.h.
 *
 * libcupti and the driver (libcuda) are loaded with dlopen at run time, so
 * libmlprof never links CUDA and runs unchanged on machines without a GPU.
 * It checks the driver and the device, subscribes to runtime-API callbacks
 * (to tie each launch to the calling thread's innermost range), enables the
 * activity kinds we keep, and turns every completed activity buffer into
 * one PROF_CHUNK_GPU payload for the writer thread. CUPTI timestamps are put
 * in our time base (CLOCK_MONOTONIC ns) through CUPTI's timestamp callback,
 * or by a measured offset where that callback is missing (docs/gpu.md).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session.h"
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

#else /* MLPROF_HAVE_CUPTI */

#include <cupti.h>

#define BUF_SIZE (8u << 20)        /* activity buffer handed to CUPTI */
#define PAYLOAD_MAX (4u << 20)     /* split encoded payloads beyond this */
#define FLUSH_PERIOD_MS 200u       /* CUPTI's own periodic flush, where supported */
#define TICK_FLUSH_NS 500000000ull /* our periodic flush otherwise */
#define API_NAME_SLOTS 2048

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
  X(cuptiGetTimestamp, 1)                       \
  X(cuptiActivityRegisterTimestampCallback, 0)  \
  X(cuptiActivityFlushPeriod, 0)                \
  X(cuptiActivityPushExternalCorrelationId, 0)  \
  X(cuptiActivityPopExternalCorrelationId, 0)   \
  X(cuptiGetCallbackName, 0)                    \
  X(cuptiGetVersion, 0)

static struct {
#define CF_FIELD(fn, req) __typeof__(&fn) fn;
  CUPTI_FUNCS(CF_FIELD)
#undef CF_FIELD
} C;

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *count);

static void *cuda_lib, *cupti_lib;
static CUpti_SubscriberHandle subscriber;
static int running;
static int64_t clock_offset; /* added to CUPTI times when the callback is missing */
static uint64_t last_tick;
static uint32_t api_names[2][API_NAME_SLOTS];

/* Activity kinds we enable; the first is required. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
#define NKINDS (sizeof kinds / sizeof kinds[0])
static int enabled[NKINDS];

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

/* Thread, range and API start of the call that launched `corr`. */
static void origin(prof__gpu_rec *r) {
  uint32_t tid, range;
  uint64_t api;
  if (prof__gpu_launch_get(r->corr, &tid, &range, &api)) {
    r->tid = tid;
    r->range = range;
    r->launch = api;
  }
}

static uint32_t intern_or_zero(const char *s) { return s && *s ? prof__intern(s) : 0; }

static void tr_kernel(const CUpti_ActivityKernel10 *k, prof__gpu_rec *r) {
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
  origin(r);
}

static void tr_memcpy(const CUpti_ActivityMemcpy6 *m, prof__gpu_rec *r) {
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
}

static void tr_p2p(const CUpti_ActivityMemcpyPtoP4 *m, prof__gpu_rec *r) {
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
}

static void tr_memset(const CUpti_ActivityMemset4 *m, prof__gpu_rec *r) {
  r->kind = PROF_GPU_MEMSET;
  r->src_mem = mem_kind(m->memoryKind);
  r->bytes = m->bytes;
  r->device = m->deviceId;
  r->stream = m->streamId;
  r->corr = m->correlationId;
  r->start = tconv(m->start);
  r->end = tconv(m->end);
  origin(r);
}

static void tr_memory(const CUpti_ActivityMemory4 *m, prof__gpu_rec *r) {
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
}

static void tr_sync(const CUpti_ActivitySynchronization2 *s, prof__gpu_rec *r) {
  r->kind = PROF_GPU_SYNC;
  r->sub = (uint8_t)(s->type <= 4 ? s->type : 0);
  r->stream = s->streamId;
  r->corr = s->correlationId;
  r->start = tconv(s->start);
  r->end = tconv(s->end);
  origin(r);
  r->launch = 0;
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

static void tr_api(const CUpti_ActivityAPI *a, prof__gpu_rec *r) {
  int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
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
  if (!driver) prof__gpu_launch_put(r->corr, r->tid, 0, r->start);
}

static void tr_overhead(const CUpti_ActivityOverhead3 *o, prof__gpu_rec *r) {
  uint32_t k = (uint32_t)o->overheadKind;
  r->kind = PROF_GPU_OVERHEAD;
  r->sub = (uint8_t)(k < 0x10000 ? k : 16 + (k >> 16));
  r->start = tconv(o->start);
  r->end = tconv(o->end);
}

static void tr_device(const CUpti_ActivityDevice5 *d, prof__gpu_rec *r) {
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
}

/* External correlation: our id is (tid << 32) | innermost range id. */
static void tr_extcorr(const CUpti_ActivityExternalCorrelation *x) {
  if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return;
  prof__gpu_launch_put(x->correlationId, (uint32_t)(x->externalId >> 32), (uint32_t)x->externalId, 0);
}

int prof__cupti_translate(const void *rec, prof__gpu_rec *out) {
  if (!rec || !out) return PROF_EINVAL;
  const CUpti_Activity *a = rec;
  memset(out, 0, sizeof *out);
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: tr_kernel(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_MEMCPY: tr_memcpy(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_MEMCPY2: tr_p2p(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_MEMSET: tr_memset(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_MEMORY2: tr_memory(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: tr_sync(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: tr_api(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_OVERHEAD: tr_overhead(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_DEVICE: tr_device(rec, out); return 1;
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: tr_extcorr(rec); return 0;
  default: return 0;
  }
}

/* ---- buffers ------------------------------------------------------------- */

static void device_meta(const prof__gpu_rec *r, const CUpti_ActivityDevice5 *d) {
  char key[48], val[256];
  snprintf(key, sizeof key, "gpu.device.%u", r->device);
  snprintf(val, sizeof val, "%s; cc %u.%u; %u SMs; %llu MiB; %u threads/SM", d->name ? d->name : "?",
           r->cc_major, r->cc_minor, r->sm_count, (unsigned long long)(r->mem_bytes >> 20),
           r->max_threads_per_sm);
  prof__meta_add(key, val);
}

static void consume(uint8_t *buffer, size_t valid) {
  CUpti_Activity *rec = NULL;
  prof__buf b = {0};
  prof__gpu_rec r, prev = {0};
  while (C.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (prof__cupti_translate(rec, &r) != 1) continue;
    if (r.kind == PROF_GPU_DEVICE) device_meta(&r, (const CUpti_ActivityDevice5 *)rec);
    prof__gpu_encode(&b, &r, &prev);
    if (b.len >= PAYLOAD_MAX) {
      prof__gpu_queue_push(&b);
      memset(&prev, 0, sizeof prev);
    }
  }
  prof__gpu_queue_push(&b);
}

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(8, BUF_SIZE);
  *size = *buffer ? BUF_SIZE : 0;
  *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  if (buffer && valid) consume(buffer, valid);
  size_t dropped = 0;
  if (C.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
    prof__gpu_dropped_add(dropped);
  free(buffer);
}

/* ---- launch callback and clock ------------------------------------------- */

static void CUPTIAPI api_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
  (void)ud;
  (void)cbid;
  const CUpti_CallbackData *cb = data;
  if (dom != CUPTI_CB_DOMAIN_RUNTIME_API || !cb) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    prof__thread *t = prof__self;
    uint32_t tid = t ? t->tid : (uint32_t)gettid(), range = 0;
    if (t && t->depth) {
      uint32_t d = t->depth <= PROF_MAX_DEPTH ? t->depth : PROF_MAX_DEPTH;
      range = t->stack[d - 1] & ~PROF_DROPPED_BIT;
    }
    prof__gpu_launch_put(cb->correlationId, tid, range, prof__mono_ns());
    if (C.cuptiActivityPushExternalCorrelationId)
      C.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                               ((uint64_t)tid << 32) | range);
  } else if (C.cuptiActivityPopExternalCorrelationId) {
    uint64_t id;
    C.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
  }
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
  char cause[256];
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

static int check_driver(void) {
  char cause[320];
  cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda_lib) {
    const char *e = dlerror();
    snprintf(cause, sizeof cause, "no NVIDIA driver (libcuda.so.1: %s)", e ? e : "not found");
    prof__gpu_fail(PROF_GPU_ST_NO_DRIVER, cause, "install the NVIDIA driver to profile the GPU");
    return PROF_EUNSUPPORTED;
  }
  cu_init_fn init = (cu_init_fn)dlsym(cuda_lib, "cuInit");
  cu_count_fn count = (cu_count_fn)dlsym(cuda_lib, "cuDeviceGetCount");
  if (!init || !count) {
    prof__gpu_fail(PROF_GPU_ST_NO_DRIVER, "libcuda.so.1 lacks cuInit/cuDeviceGetCount",
                   "reinstall the NVIDIA driver");
    return PROF_EUNSUPPORTED;
  }
  int rc = init(0), n = 0;
  if (rc == 0) rc = count(&n);
  if (rc != 0 || n <= 0) {
    snprintf(cause, sizeof cause, "no usable CUDA device (cuInit/cuDeviceGetCount: error %d, %d devices)", rc, n);
    prof__gpu_fail(PROF_GPU_ST_NO_DEVICE, cause, "check nvidia-smi and CUDA_VISIBLE_DEVICES");
    return PROF_EUNSUPPORTED;
  }
  return 0;
}

static void *open_cupti(char *tried, size_t n) {
  char home[512] = "";
  const char *ch = getenv("CUDA_HOME");
  if (ch && *ch) snprintf(home, sizeof home, "%s/extras/CUPTI/lib64/libcupti.so", ch);
  const char *names[] = {prof__env("CUPTI_LIB"), "libcupti.so", "libcupti.so.13", "libcupti.so.12",
                         "libcupti.so.11.8", home, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                         "/usr/local/cuda/lib64/libcupti.so"};
  size_t used = 0;
  tried[0] = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!names[i] || !*names[i]) continue;
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    int w = snprintf(tried + used, n - used, "%s%s", used ? ", " : "", names[i]);
    if (w > 0 && (size_t)w < n - used) used += (size_t)w;
  }
  return NULL;
}

static int load_cupti(void) {
  char tried[1024], cause[1200];
  cupti_lib = open_cupti(tried, sizeof tried);
  if (!cupti_lib) {
    snprintf(cause, sizeof cause, "libcupti not found (tried %s)", tried);
    prof__gpu_fail(PROF_GPU_ST_NO_CUPTI, cause,
                   "set MLPROF_CUPTI_LIB to its path or add the CUPTI lib directory to LD_LIBRARY_PATH");
    return PROF_EUNSUPPORTED;
  }
#define CF_LOAD(fn, req)                                                                          \
  *(void **)&C.fn = dlsym(cupti_lib, #fn);                                                        \
  if ((req) && !C.fn) {                                                                           \
    prof__gpu_fail(PROF_GPU_ST_OLD_CUPTI, "libcupti lacks " #fn " (too old)",                     \
                   "use the libcupti of CUDA 11.8 or newer (MLPROF_CUPTI_LIB=<path>)");           \
    return PROF_EUNSUPPORTED;                                                                     \
  }
  CUPTI_FUNCS(CF_LOAD)
#undef CF_LOAD
  return 0;
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

static int subscribe(void) {
  CUptiResult rc = C.cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)api_callback, NULL);
  if (rc != CUPTI_SUCCESS) {
    subscriber = NULL;
    return fail_cupti("cuptiSubscribe", rc);
  }
  rc = C.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (rc != CUPTI_SUCCESS) return fail_cupti("cuptiEnableDomain(RUNTIME_API)", rc);
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
  int rc = check_driver();
  if (!rc) rc = load_cupti();
  if (!rc) rc = subscribe();
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

void prof__cupti_tick(uint64_t now_ns) {
  if (!running || C.cuptiActivityFlushPeriod || now_ns - last_tick < TICK_FLUSH_NS) return;
  last_tick = now_ns;
  C.cuptiActivityFlushAll(0);
}

void prof__cupti_stop(void) {
  if (!running) return;
  running = 0;
  C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_kinds();
  if (subscriber) C.cuptiUnsubscribe(subscriber);
  subscriber = NULL;
}

#endif /* MLPROF_HAVE_CUPTI */
