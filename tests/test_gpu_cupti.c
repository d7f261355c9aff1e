/* test_gpu_cupti.c — the CUPTI backend without a GPU: real CUPTI activity
 * structs through the translation layer, and every start-up failure path
 * (no driver, no device, no libcupti, old libcupti, another subscriber,
 * insufficient privileges) through dlopen/dlsym mocks, then a full session
 * on this machine where CPU profiling must continue. Also the defects a desk
 * check against the CUPTI 13 headers found: record offsets, libcupti search
 * order, system thread ids, driver-API launches, the launch table under
 * load, the shutdown order, CUPTI buffers as profiler memory, and CUDA left
 * for the program to initialise.
 */
// wrap: dlopen dlsym dlclose aligned_alloc dl_iterate_phdr
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/session.h"
#include "gpu/gpu.h"
#include "helpers.h"
#include "mlprof.h"

#ifdef MLPROF_HAVE_CUPTI
#include <cupti.h>
#include "gpu/cupti_records.h" /* the record versions cupti.c reads */
#endif
#include "mem/mem.h"

void *__real_dlopen(const char *file, int mode);
void *__real_dlsym(void *h, const char *name);
int __real_dlclose(void *h);
void *__real_aligned_alloc(size_t align, size_t n);

/* ---- mocks --------------------------------------------------------------- */

static struct {
  int on;             /* 0: pass everything to the real functions */
  int no_driver, no_cupti;
  int cuda_unloaded;  /* libcuda not loaded by the program (RTLD_NOLOAD fails) */
  int cupti_loaded;   /* a libcupti already in the process (RTLD_NOLOAD finds it) */
  const char *cupti_only; /* the one path where libcupti is, or NULL: everywhere */
  int incompatible_first; /* the first libcupti found says NOT_COMPATIBLE */
  int init_rc, count;
  const char *missing; /* a libcupti symbol to hide */
  int subscribe_rc, enable_rc, no_ts_callback;
  int cuda_opens, cuda_full_opens, cupti_opens, cuinits, enables, disables, unsubscribes, flushes, forced_flushes;
  int subscribes, thread_id_type, ext_pushes, driver_domain_enabled, resource_cb_enabled;
  int driver_cb[1024];
  int alloc_calls, alloc_guarded;
  char first_cupti_mode_noload, used_cupti[512];
  char log[64]; /* D: disable, S: context sync, F: forced flush, f: plain flush */
  uint64_t gpu_clock_lag;
} M;

static char fake_cuda, fake_cupti;

static void log_ev(char c) {
  size_t n = strlen(M.log);
  if (n + 1 < sizeof M.log) M.log[n] = c;
}

static int fake_cuInit(unsigned f) {
  (void)f;
  M.cuinits++;
  return 0;
}
static int fake_count(int *n) {
  *n = M.count;
  return M.init_rc;
}
static int fake_ctx_sync(void) {
  log_ev('S');
  return 0;
}

void *__wrap_dlopen(const char *file, int mode) {
  if (!M.on || !file) return __real_dlopen(file, mode);
  if (strcmp(file, "libcuda.so.1") == 0) {
    M.cuda_opens++;
    if (mode & RTLD_NOLOAD) return M.no_driver || M.cuda_unloaded ? NULL : &fake_cuda;
    M.cuda_full_opens++;
    return M.no_driver ? NULL : &fake_cuda;
  }
  if (strstr(file, "cupti")) {
    if (!M.cupti_opens++) M.first_cupti_mode_noload = (mode & RTLD_NOLOAD) != 0;
    if (mode & RTLD_NOLOAD) {
      if (!M.cupti_loaded) return NULL;
    } else if (M.no_cupti || (M.cupti_only && strcmp(file, M.cupti_only) != 0)) {
      return NULL;
    }
    snprintf(M.used_cupti, sizeof M.used_cupti, "%s", file);
    return &fake_cupti;
  }
  return __real_dlopen(file, mode);
}

/* The loaded objects as the module sees them: the real ones, plus a
 * libcuda when the mock says the program has loaded the driver. */
int __real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
int __wrap_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg) {
  int rc = __real_dl_iterate_phdr(cb, arg);
  if (rc || !M.on || M.no_driver || M.cuda_unloaded) return rc;
  struct dl_phdr_info fake;
  memset(&fake, 0, sizeof fake);
  fake.dlpi_name = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  return cb(&fake, sizeof fake, arg);
}

int __wrap_dlclose(void *h) {
  if (h == &fake_cuda || h == &fake_cupti) return 0;
  return __real_dlclose(h);
}

void *__wrap_aligned_alloc(size_t align, size_t n) {
  M.alloc_calls++;
  if (prof__guard_depth > 0) M.alloc_guarded++;
  return __real_aligned_alloc(align, n);
}

#ifdef MLPROF_HAVE_CUPTI
static CUpti_BuffersCallbackRequestFunc got_request;
static CUpti_BuffersCallbackCompleteFunc got_complete;
static CUpti_CallbackFunc got_callback;

static CUptiResult fk_result_string(CUptiResult r, const char **s) {
  *s = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "insufficient privileges" : "fake error";
  return CUPTI_SUCCESS;
}
static CUptiResult fk_register(CUpti_BuffersCallbackRequestFunc rq, CUpti_BuffersCallbackCompleteFunc cp) {
  got_request = rq;
  got_complete = cp;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_enable(CUpti_ActivityKind k) {
  (void)k;
  M.enables++;
  return (CUptiResult)M.enable_rc;
}
static CUptiResult fk_disable(CUpti_ActivityKind k) {
  (void)k;
  M.disables++;
  log_ev('D');
  return CUPTI_SUCCESS;
}
static CUptiResult fk_flush(uint32_t flag) {
  M.flushes++;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) M.forced_flushes++;
  log_ev(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? 'F' : 'f');
  return CUPTI_SUCCESS;
}
static size_t rec_size(CUpti_ActivityKind k) {
  switch (k) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(cu_kernel);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(cu_memcpy);
  default: return 8;
  }
}
/* Walks records laid out back to back, as CUPTI's does for its buffers; a
 * record of kind INVALID is an incomplete one: reported, and stepped over. */
static CUptiResult fk_next(uint8_t *buf, size_t valid, CUpti_Activity **rec) {
  uint8_t *p = *rec ? (uint8_t *)*rec + rec_size((*rec)->kind) : buf;
  if (p >= buf + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = (CUpti_Activity *)p;
  return (*rec)->kind == CUPTI_ACTIVITY_KIND_INVALID ? CUPTI_ERROR_INVALID_KIND : CUPTI_SUCCESS;
}
static CUptiResult fk_dropped(CUcontext c, uint32_t s, size_t *n) {
  (void)c, (void)s;
  *n = 3;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *u) {
  (void)u;
  got_callback = f;
  *h = (CUpti_SubscriberHandle)&fake_cupti;
  if (M.subscribes++ == 0 && M.incompatible_first) return CUPTI_ERROR_NOT_COMPATIBLE;
  return (CUptiResult)M.subscribe_rc;
}
static CUptiResult fk_unsubscribe(CUpti_SubscriberHandle h) {
  (void)h;
  M.unsubscribes++;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_enable_domain(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
  (void)e, (void)h;
  if (d == CUPTI_CB_DOMAIN_DRIVER_API) M.driver_domain_enabled++;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_enable_callback(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                                      CUpti_CallbackId id) {
  (void)h;
  if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < 1024) M.driver_cb[id] = (int)e;
  if (d == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) M.resource_cb_enabled = 1;
  return CUPTI_SUCCESS;
}
/* A few driver functions by their CUPTI ids (cupti_driver_cbid.h). */
static CUptiResult fk_callback_name(CUpti_CallbackDomain d, uint32_t id, const char **name) {
  if (d != CUPTI_CB_DOMAIN_DRIVER_API) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: *name = "cuLaunchKernel"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: *name = "cuGraphLaunch"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2: *name = "cuMemcpyHtoD_v2"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2: *name = "cuMemsetD8_v2"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize: *name = "cuCtxSynchronize"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice: *name = "cuCtxGetDevice"; return CUPTI_SUCCESS;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: *name = "cuMemAlloc_v2"; return CUPTI_SUCCESS;
  default: return CUPTI_ERROR_INVALID_PARAMETER;
  }
}
static CUptiResult fk_thread_id_type(CUpti_ActivityThreadIdType t) {
  M.thread_id_type = (int)t + 100; /* 100 + the type: 0 means never called */
  return CUPTI_SUCCESS;
}
static CUptiResult fk_flush_period(uint32_t ms) {
  (void)ms;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_push_ext(CUpti_ExternalCorrelationKind k, uint64_t id) {
  (void)k, (void)id;
  M.ext_pushes++;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_timestamp(uint64_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - M.gpu_clock_lag;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_ts_callback(CUpti_TimestampCallbackFunc f) {
  (void)f;
  return CUPTI_SUCCESS;
}

static void *cupti_sym(const char *name) {
  if (M.missing && strcmp(name, M.missing) == 0) return NULL;
  static const struct { const char *n; void *f; } t[] = {
      {"cuptiGetResultString", (void *)fk_result_string},
      {"cuptiActivityRegisterCallbacks", (void *)fk_register},
      {"cuptiActivityEnable", (void *)fk_enable},
      {"cuptiActivityDisable", (void *)fk_disable},
      {"cuptiActivityFlushAll", (void *)fk_flush},
      {"cuptiActivityGetNextRecord", (void *)fk_next},
      {"cuptiActivityGetNumDroppedRecords", (void *)fk_dropped},
      {"cuptiSubscribe", (void *)fk_subscribe},
      {"cuptiUnsubscribe", (void *)fk_unsubscribe},
      {"cuptiEnableDomain", (void *)fk_enable_domain},
      {"cuptiEnableCallback", (void *)fk_enable_callback},
      {"cuptiGetCallbackName", (void *)fk_callback_name},
      {"cuptiSetThreadIdType", (void *)fk_thread_id_type},
      {"cuptiActivityFlushPeriod", (void *)fk_flush_period},
      {"cuptiActivityPushExternalCorrelationId", (void *)fk_push_ext},
      {"cuptiGetTimestamp", (void *)fk_timestamp},
      {"cuptiActivityRegisterTimestampCallback", (void *)fk_ts_callback},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strcmp(t[i].n, name) == 0) {
      if (M.no_ts_callback && t[i].f == (void *)fk_ts_callback) return NULL;
      return t[i].f;
    }
  return NULL; /* optional functions are absent */
}
#else
static void *cupti_sym(const char *name) {
  (void)name;
  return NULL;
}
#endif

void *__wrap_dlsym(void *h, const char *name) {
  if (h == &fake_cuda) {
    if (strcmp(name, "cuInit") == 0) return (void *)fake_cuInit;
    if (strcmp(name, "cuDeviceGetCount") == 0) return (void *)fake_count;
    if (strcmp(name, "cuCtxSynchronize") == 0) return (void *)fake_ctx_sync;
    return NULL;
  }
  if (h == &fake_cupti) return cupti_sym(name);
  return __real_dlsym(h, name);
}

static int setup(void **state) {
  (void)state;
  prof__gpu_stop_for_test();
  memset(&M, 0, sizeof M);
  M.on = 1;
  M.count = 1;
  unsetenv("MLPROF_GPU");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CUDA_HOME");
  unsetenv("MLPROF_CUPTI_LIB");
  prof__gpu_launch_reset();
  return 0;
}

/* Run prof__gpu_try_start with stderr captured; returns the rc. */
static int start_captured(char *err, size_t n) {
  fflush(stderr);
  const char *path = th_tmp_path("gpustderr", ".txt");
  int saved = dup(2);
  FILE *f = fopen(path, "w");
  dup2(fileno(f), 2);
  int rc = prof__gpu_try_start();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(f);
  size_t len = 0;
  char *text = th_read_file(path, &len);
  snprintf(err, n, "%s", text ? text : "");
  free(text);
  return rc;
}

static void expect_failure(const char *status, const char *words) {
  char err[2048];
  assert_true(start_captured(err, sizeof err) < 0);
  assert_string_equal(prof__gpu_status(), status);
  if (!words) {
    assert_string_equal(err, "");
    return;
  }
  if (!strstr(err, "GPU profiling off") || !strstr(err, "CPU profiling continues") || !strstr(err, words))
    fail_msg("stderr was: %s", err);
  int lines = 0;
  for (const char *c = err; *c; c++) lines += *c == '\n';
  assert_int_equal(lines, 1); /* one line, naming cause and fix */
}

/* ---- start-up failures --------------------------------------------------- */

static void no_driver_is_quiet_unless_asked(void **state) {
  (void)state;
  M.no_driver = 1;
#ifdef MLPROF_HAVE_CUPTI
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), PROF_GPU_DEFERRED); /* waits for the program's cuInit */
  assert_string_equal(err, "");
  assert_string_equal(prof__gpu_status(), PROF_GPU_ST_WAITING);
#else
  expect_failure(PROF_GPU_ST_NOT_BUILT, NULL);
#endif
  setenv("MLPROF_GPU", "1", 1);
#ifdef MLPROF_HAVE_CUPTI
  expect_failure(PROF_GPU_ST_NO_DRIVER, "install the NVIDIA driver");
#endif
}

static void gpu_0_disables_without_loading_anything(void **state) {
  (void)state;
  setenv("MLPROF_GPU", "0", 1);
  assert_int_equal(prof__gpu_try_start(), PROF_EDISABLED);
  assert_string_equal(prof__gpu_status(), PROF_GPU_ST_OFF);
  assert_int_equal(M.cuda_opens, 0);
}

#ifdef MLPROF_HAVE_CUPTI
static void no_device_names_cuda_visible_devices(void **state) {
  (void)state;
  M.init_rc = 100; /* CUDA_ERROR_NO_DEVICE */
  expect_failure(PROF_GPU_ST_NO_DEVICE, "CUDA_VISIBLE_DEVICES");
  M.init_rc = 0;
  M.count = 0;
  expect_failure(PROF_GPU_ST_NO_DEVICE, "0 devices");
}

static void missing_libcupti_names_the_variable(void **state) {
  (void)state;
  M.no_cupti = 1;
  expect_failure(PROF_GPU_ST_NO_CUPTI, "MLPROF_CUPTI_LIB");
}

static void old_libcupti_is_reported(void **state) {
  (void)state;
  M.missing = "cuptiActivityFlushAll";
  expect_failure(PROF_GPU_ST_OLD_CUPTI, "cuptiActivityFlushAll");
}

static void another_subscriber_is_reported(void **state) {
  (void)state;
  M.subscribe_rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  expect_failure(PROF_GPU_ST_SUBSCRIBER, "one profiler at a time");
}

static void insufficient_privileges_is_reported_and_cleaned_up(void **state) {
  (void)state;
  M.enable_rc = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  expect_failure(PROF_GPU_ST_PRIVILEGES, "NVreg_RestrictProfilingToAdminUsers");
  assert_int_equal(M.unsubscribes, 1);
}

/* ---- success: buffers to payloads ---------------------------------------- */

static void start_enables_and_stop_flushes_forced(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_string_equal(err, "");
  assert_string_equal(prof__gpu_status(), PROF_GPU_ST_OK);
  assert_int_equal(M.enables, 10);
  prof__gpu_stop_for_test();
  assert_int_equal(M.forced_flushes, 1);
  assert_int_equal(M.disables, 10);
  assert_int_equal(M.unsubscribes, 1);
}

static void completed_buffer_becomes_one_gpu_payload(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  uint8_t *buf = NULL;
  size_t size = 0, max = 0;
  got_request(&buf, &size, &max);
  assert_non_null(buf);
  assert_true(size >= sizeof(cu_kernel) + sizeof(cu_memcpy));
  cu_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 5000, k.end = 9000, k.name = "buffered_kernel", k.correlationId = 21, k.streamId = 3;
  cu_memcpy m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, m.bytes = 4096, m.start = 9500, m.end = 9700;
  memcpy(buf, &k, sizeof k);
  memcpy(buf + sizeof k, &m, sizeof m);
  uint64_t dropped0 = prof__gpu_dropped();
  got_complete(NULL, 0, buf, size, sizeof k + sizeof m); /* frees buf */
  assert_int_equal(prof__gpu_dropped() - dropped0, 3);
  assert_int_equal(prof__gpu_queue_len(), 1);
  prof__buf b;
  assert_int_equal(prof__gpu_queue_pop(&b), 1);
  prof__gpu_dec d;
  prof__gpu_rec r;
  assert_int_equal(prof__rec_gpu_dec_init(&d, b.p, b.len), 0);
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_KERNEL);
  assert_int_equal(r.start, 5000);
  assert_int_equal(r.end, 9000);
  assert_int_equal(r.name, prof__intern("buffered_kernel"));
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMCPY);
  assert_int_equal(r.sub, PROF_GPU_COPY_D2H);
  assert_int_equal(r.bytes, 4096);
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 0);
  prof__buf_free(&b);
}

/* ---- translation of real CUPTI structs ----------------------------------- */

static void kernel_struct_translates_with_launch_origin(void **state) {
  (void)state;
  prof__gpu_launch_put(55, 4242, 17, 0); /* the API-entry callback, without the launch time */
  prof__gpu_rec r;
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 211;
  a.start = 1000, a.end = 1100, a.threadId = 999, a.correlationId = 55;
  assert_int_equal(prof__cupti_translate(&a, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_API);
  assert_int_equal(r.sub, PROF_GPU_API_RUNTIME);
  assert_int_equal(r.tid, 4242);
  assert_int_equal(r.range, 17);
  assert_int_equal(r.name, prof__intern("runtime_api_211"));
  cu_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 2000, k.end = 2600, k.deviceId = 1, k.streamId = 13, k.correlationId = 55;
  k.gridX = 128, k.gridY = 2, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40, k.staticSharedMemory = 1024, k.dynamicSharedMemory = 2048;
  k.name = "_Z6matmulPfS_S_i";
  assert_int_equal(prof__cupti_translate(&k, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_KERNEL);
  assert_int_equal(r.start, 2000);
  assert_int_equal(r.end, 2600);
  assert_int_equal(r.device, 1);
  assert_int_equal(r.stream, 13);
  assert_int_equal(r.grid[0], 128);
  assert_int_equal(r.grid[1], 2);
  assert_int_equal(r.block[0], 256);
  assert_int_equal(r.regs, 40);
  assert_int_equal(r.smem_static, 1024);
  assert_int_equal(r.smem_dynamic, 2048);
  assert_int_equal(r.name, prof__intern("_Z6matmulPfS_S_i"));
  assert_int_equal(r.tid, 4242);
  assert_int_equal(r.range, 17);
  assert_int_equal(r.launch, 1000); /* the API record's start */
}

static void copy_set_memory_sync_structs_translate(void **state) {
  (void)state;
  prof__gpu_rec r;
  cu_memcpy m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20, m.start = 10, m.end = 110, m.streamId = 4, m.correlationId = 8;
  assert_int_equal(prof__cupti_translate(&m, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMCPY);
  assert_int_equal(r.sub, PROF_GPU_COPY_H2D);
  assert_int_equal(r.src_mem, PROF_GPU_MEM_PAGEABLE);
  assert_int_equal(r.dst_mem, PROF_GPU_MEM_DEVICE);
  assert_int_equal(r.bytes, 1 << 20);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_ATOD;
  prof__cupti_translate(&m, &r);
  assert_int_equal(r.sub, PROF_GPU_COPY_D2D);
  CUpti_ActivityMemcpyPtoP4 p;
  memset(&p, 0, sizeof p);
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.bytes = 99, p.start = 1, p.end = 2;
  assert_int_equal(prof__cupti_translate(&p, &r), 1);
  assert_int_equal(r.sub, PROF_GPU_COPY_P2P);
  cu_memset s;
  memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, s.bytes = 64, s.start = 5, s.end = 6;
  assert_int_equal(prof__cupti_translate(&s, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMSET);
  assert_int_equal(r.src_mem, PROF_GPU_MEM_MANAGED);
  cu_memory mem;
  memset(&mem, 0, sizeof mem);
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, mem.bytes = 512, mem.address = 0xabc000, mem.timestamp = 77;
  assert_int_equal(prof__cupti_translate(&mem, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMORY);
  assert_int_equal(r.sub, PROF_GPU_MEMOP_FREE);
  assert_int_equal(r.addr, 0xabc000);
  assert_int_equal(r.start, 77);
  cu_sync y;
  memset(&y, 0, sizeof y);
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, y.start = 100, y.end = 400;
  assert_int_equal(prof__cupti_translate(&y, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_SYNC);
  assert_int_equal(r.sub, 4);
  assert_int_equal(r.end - r.start, 300);
}

static void device_overhead_and_unknown_structs(void **state) {
  (void)state;
  prof__gpu_rec r;
  cu_device d;
  memset(&d, 0, sizeof d);
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 2, d.name = "Fake H200", d.computeCapabilityMajor = 9, d.computeCapabilityMinor = 0;
  d.numMultiprocessors = 132, d.maxWarpsPerMultiprocessor = 64, d.numThreadsPerWarp = 32;
  d.maxBlocksPerMultiprocessor = 32, d.maxRegistersPerMultiprocessor = 65536;
  d.maxSharedMemoryPerMultiprocessor = 233472, d.globalMemorySize = 141ull << 30;
  assert_int_equal(prof__cupti_translate(&d, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_DEVICE);
  assert_int_equal(r.device, 2);
  assert_int_equal(r.name, prof__intern("Fake H200"));
  assert_int_equal(r.cc_major, 9);
  assert_int_equal(r.sm_count, 132);
  assert_int_equal(r.max_threads_per_sm, 2048);
  assert_int_equal(r.mem_bytes, 141ull << 30);
  cu_overhead o;
  memset(&o, 0, sizeof o);
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, o.start = 10, o.end = 30;
  assert_int_equal(prof__cupti_translate(&o, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_OVERHEAD);
  assert_int_equal(r.sub, 17);
  CUpti_Activity u = {.kind = CUPTI_ACTIVITY_KIND_MARKER};
  assert_int_equal(prof__cupti_translate(&u, &r), 0);
  assert_int_equal(prof__cupti_translate(NULL, &r), PROF_EINVAL);
}

static void missing_timestamp_callback_uses_measured_offset(void **state) {
  (void)state;
  M.no_ts_callback = 1;
  M.gpu_clock_lag = 5000000; /* CUPTI's clock runs 5 ms behind ours */
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  cu_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000000000, k.end = 1000001000;
  prof__gpu_rec r;
  prof__cupti_translate(&k, &r);
  int64_t off = (int64_t)(r.start - k.start);
  assert_true(off > 4000000 && off < 6000000); /* reading error is the pair's half-width */
  assert_int_equal(r.end - r.start, 1000);
  prof__gpu_stop_for_test();
  M.no_ts_callback = 0;
  assert_int_equal(start_captured(err, sizeof err), 0); /* the callback again: no offset */
  prof__cupti_translate(&k, &r);
  assert_int_equal(r.start, k.start);
}

/* ---- defects found against the CUPTI 13 headers ---------------------------- */

/* Records are read at the offsets every struct version shares: a kernel
 * record written byte by byte at those offsets reads back whole. */
static void kernel_fields_are_read_at_the_shared_offsets(void **state) {
  (void)state;
  _Alignas(8) uint8_t raw[256];
  memset(raw, 0, sizeof raw);
  uint32_t kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, dev = 3, stream = 9, corr = 4711;
  uint64_t start = 123456789, end = 123459999;
  int32_t grid[3] = {7, 8, 9}, block[3] = {32, 4, 2}, smem_s = 512, smem_d = 4096;
  uint16_t regs = 96;
  const char *name = "offset_kernel";
  memcpy(raw + 0, &kind, 4);
  memcpy(raw + 6, &regs, 2);
  memcpy(raw + 16, &start, 8);
  memcpy(raw + 24, &end, 8);
  memcpy(raw + 40, &dev, 4);
  memcpy(raw + 48, &stream, 4);
  memcpy(raw + 52, grid, 12);
  memcpy(raw + 64, block, 12);
  memcpy(raw + 76, &smem_s, 4);
  memcpy(raw + 80, &smem_d, 4);
  memcpy(raw + 92, &corr, 4);
  memcpy(raw + 104, &name, sizeof name);
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(raw, &r), 1);
  assert_int_equal(r.start, start);
  assert_int_equal(r.end, end);
  assert_int_equal(r.device, 3);
  assert_int_equal(r.stream, 9);
  assert_int_equal(r.grid[2], 9);
  assert_int_equal(r.block[1], 4);
  assert_int_equal(r.regs, 96);
  assert_int_equal(r.smem_static, 512);
  assert_int_equal(r.smem_dynamic, 4096);
  assert_int_equal(r.corr, 4711);
  assert_int_equal(r.name, prof__intern("offset_kernel"));
}

static void libcupti_already_loaded_is_reused_first(void **state) {
  (void)state;
  M.cupti_loaded = 1;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_int_equal(M.first_cupti_mode_noload, 1);
  assert_int_equal(M.cupti_opens, 1);
  prof__gpu_stop_for_test();
}

static void libcupti_is_found_in_cuda_home_lib(void **state) {
  (void)state;
  setenv("CUDA_HOME", "/opt/fake-cuda-13", 1);
  M.cupti_only = "/opt/fake-cuda-13/lib/libcupti.so"; /* CUDA 13 keeps it in lib, not lib64 */
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_string_equal(M.used_cupti, M.cupti_only);
  prof__gpu_stop_for_test();
}

static void incompatible_libcupti_falls_through_to_the_next(void **state) {
  (void)state;
  M.incompatible_first = 1;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_string_equal(err, "");
  assert_int_equal(M.subscribes, 2);
  assert_true(M.cupti_opens >= 2);
  prof__gpu_stop_for_test();
}

static void activity_thread_ids_are_system_tids(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_int_equal(M.thread_id_type, 100 + CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  prof__gpu_stop_for_test();
}

static void driver_launches_are_attributed_by_callback(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_int_equal(M.driver_domain_enabled, 0); /* one callback at a time, never the whole domain */
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel], 1);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch], 1);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2], 1);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2], 1);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize], 1);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice], 0);
  assert_int_equal(M.driver_cb[CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2], 0);
  assert_int_equal(prof__cupti_driver_callbacks(), 5);
  CUpti_CallbackData cb;
  memset(&cb, 0, sizeof cb);
  cb.callbackSite = CUPTI_API_ENTER;
  cb.correlationId = 777;
  got_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  got_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
  uint32_t tid = 0, range = 0;
  uint64_t api = 0;
  assert_int_equal(prof__gpu_launch_get(777, &tid, &range, &api), 1);
  assert_int_equal(tid, (uint32_t)gettid());
  assert_true(api > 0);
  assert_int_equal(M.ext_pushes, 0); /* no external-correlation record per call */
  prof__gpu_stop_for_test();
}

/* An API record translated long after its call must not take the slot of
 * a newer call with the same low bits. */
static void late_api_record_keeps_the_newer_launch(void **state) {
  (void)state;
  uint32_t old = 5, newer = 5 + PROF_GPU_LAUNCH_SLOTS;
  prof__gpu_launch_put(newer, 1111, 22, 900);
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 211, a.start = 100, a.end = 200, a.threadId = 3333, a.correlationId = old;
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(&a, &r), 1);
  assert_int_equal(r.tid, 3333);
  uint32_t tid, range;
  uint64_t api;
  assert_int_equal(prof__gpu_launch_get(newer, &tid, &range, &api), 1);
  assert_int_equal(tid, 1111);
  assert_int_equal(range, 22);
  assert_int_equal(prof__gpu_launch_get(old, &tid, &range, &api), 0);
}

static void kernels_without_a_launch_are_counted(void **state) {
  (void)state;
  uint64_t before = prof__cupti_unattributed();
  cu_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 10, k.end = 20, k.correlationId = 999999;
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(&k, &r), 1);
  assert_int_equal(r.tid, 0);
  prof__gpu_launch_put(1000000, 7, 0, 5);
  k.correlationId = 1000000;
  assert_int_equal(prof__cupti_translate(&k, &r), 1);
  assert_int_equal(r.tid, 7);
  assert_int_equal(prof__cupti_unattributed() - before, 1);
}

/* Writers racing on one slot never leave a mix of two calls' fields. */
typedef struct {
  uint32_t base;
  int bad;
} race_arg;

static void *race_writer(void *p) {
  race_arg *a = p;
  for (uint32_t i = 0; i < 200000; i++) {
    uint32_t corr = a->base + (i % 4) * PROF_GPU_LAUNCH_SLOTS; /* the same slot over and over */
    prof__gpu_launch_put(corr, corr * 3u, corr * 7u, (uint64_t)corr * 11u);
    uint32_t tid, range;
    uint64_t api;
    for (uint32_t k = 0; k < 4; k++) {
      uint32_t c = a->base + k * PROF_GPU_LAUNCH_SLOTS;
      if (prof__gpu_launch_get(c, &tid, &range, &api) &&
          (tid != c * 3u || range != c * 7u || api != (uint64_t)c * 11u))
        a->bad++;
    }
  }
  return NULL;
}

static void racing_launch_writers_never_mix_fields(void **state) {
  (void)state;
  pthread_t t[3];
  race_arg a[3];
  for (int i = 0; i < 3; i++) {
    a[i] = (race_arg){.base = 42 + (uint32_t)i * 4 * PROF_GPU_LAUNCH_SLOTS, .bad = 0};
    pthread_create(&t[i], NULL, race_writer, &a[i]);
  }
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 3; i++) assert_int_equal(a[i].bad, 0);
}

static void buffers_are_flushed_periodically(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0); /* this libcupti has its own flush period */
  int f0 = M.flushes;
  uint64_t now = prof__mono_ns();
  prof__cupti_tick(now + 150000000ull);
  assert_int_equal(M.flushes - f0, 1);
  prof__cupti_tick(now + 160000000ull); /* not again within 100 ms */
  assert_int_equal(M.flushes - f0, 1);
  prof__gpu_stop_for_test();
}

static void stop_disables_then_synchronizes_then_flushes(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  M.log[0] = 0;
  prof__gpu_stop_for_test();
  assert_string_equal(M.log, "DDDDDDDDDDSF");
}

static void context_destruction_flushes(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  assert_int_equal(M.resource_cb_enabled, 1);
  CUpti_ResourceData rd;
  memset(&rd, 0, sizeof rd);
  got_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &rd);
  assert_int_equal(M.forced_flushes, 1);
  prof__gpu_stop_for_test();
}

static void incomplete_records_are_counted_and_skipped(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  uint8_t *buf = NULL;
  size_t size = 0, max = 0;
  got_request(&buf, &size, &max);
  cu_kernel k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 100, k.end = 200, k.name = "first";
  size_t off = 0;
  memcpy(buf + off, &k, sizeof k), off += sizeof k;
  uint32_t invalid[2] = {CUPTI_ACTIVITY_KIND_INVALID, 0};
  memcpy(buf + off, invalid, 8), off += 8;      /* CUPTI: INVALID_KIND */
  k.start = 300, k.end = 0, k.name = "unfinished"; /* forced flush: no end time */
  memcpy(buf + off, &k, sizeof k), off += sizeof k;
  k.start = 400, k.end = 500, k.name = "last";
  memcpy(buf + off, &k, sizeof k), off += sizeof k;
  uint64_t inc0 = prof__cupti_incomplete();
  got_complete(NULL, 0, buf, size, off);
  assert_int_equal(prof__cupti_incomplete() - inc0, 2);
  prof__buf b;
  assert_int_equal(prof__gpu_queue_pop(&b), 1);
  prof__gpu_dec d;
  prof__gpu_rec r;
  assert_int_equal(prof__rec_gpu_dec_init(&d, b.p, b.len), 0);
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.name, prof__intern("first"));
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.name, prof__intern("last"));
  assert_int_equal(prof__rec_gpu_dec_next(&d, &r), 0);
  prof__buf_free(&b);
  prof__gpu_stop_for_test();
}

static void cupti_buffers_are_profiler_memory(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0);
  uint8_t *buf = NULL;
  size_t size = 0, max = 0;
  int calls0 = M.alloc_calls, guarded0 = M.alloc_guarded;
  got_request(&buf, &size, &max);
  assert_non_null(buf);
  assert_int_equal(M.alloc_calls - calls0, 1);
  assert_int_equal(M.alloc_guarded - guarded0, 1);
  got_complete(NULL, 0, buf, size, 0);
  prof__gpu_stop_for_test();
}

static void cuda_is_never_initialised_by_us(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), 0); /* the program loaded libcuda: start now */
  assert_int_equal(M.cuinits, 0);
  assert_int_equal(M.cuda_full_opens, 0);
  prof__gpu_stop_for_test();
}

static void cupti_waits_for_the_programs_cuinit(void **state) {
  (void)state;
  M.cuda_unloaded = 1;
  char err[512];
  assert_int_equal(start_captured(err, sizeof err), PROF_GPU_DEFERRED);
  assert_string_equal(err, "");
  assert_string_equal(prof__gpu_status(), PROF_GPU_ST_WAITING);
  assert_int_equal(M.cuda_full_opens, 0);
  assert_int_equal(M.cuda_opens, 0); /* not even RTLD_NOLOAD: it walks the library path */
  assert_int_equal(M.cupti_opens, 0);
  M.cuda_unloaded = 0; /* the program's cuInit loads the driver and calls the injection hook */
  M.init_rc = 3;       /* inside cuInit: CUDA_ERROR_NOT_INITIALIZED still */
  assert_int_equal(InitializeInjection(), 1);
  assert_string_equal(prof__gpu_status(), PROF_GPU_ST_OK);
  assert_int_equal(M.cuinits, 0);
  prof__gpu_stop_for_test();
}

static void hidden_devices_are_not_a_warning(void **state) {
  (void)state;
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  setenv("MLPROF_GPU", "1", 1);
  expect_failure(PROF_GPU_ST_HIDDEN, NULL);
  assert_int_equal(M.cuda_opens, 0);
}
#else
static void build_without_cupti_reports_not_built(void **state) {
  (void)state;
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(&r, &r), PROF_EUNSUPPORTED);
  expect_failure(PROF_GPU_ST_NOT_BUILT, NULL);
}
#endif

/* The CPU clock (TSC with a calibration) against CUPTI's (CLOCK_MONOTONIC):
 * the residual is measured and its largest value kept. */
static void clock_residual_is_measured(void **state) {
  (void)state;
  prof__clock_init(0);
  prof__clock_calibrate(20);
  int64_t r = prof__gpu_clock_check();
  assert_true(r > -1000000 && r < 1000000); /* just calibrated: well under a millisecond */
  assert_true(prof__gpu_clock_residual_max() >= (r < 0 ? -r : r));
}

/* ---- a real session on this machine --------------------------------------- */

static void cpu_profiling_continues_without_gpu(void **state) {
  (void)state;
  M.on = 0; /* real dlopen: this test is about the machine it runs on */
  void *h = __real_dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) {
    dlclose(h);
    skip(); /* a machine with a driver takes the GPU path; nothing to check here */
  }
  prof_config cfg = prof_config_default();
  cfg.output = th_tmp_path("gpusession", ".mlpt");
  cfg.report = 0;
  assert_int_equal(prof_init(&cfg), 0);
  assert_int_equal(prof_start(), 0);
  prof_range_push("cpu_work");
  prof_range_pop();
  assert_int_equal(prof_stop(), 0);
  assert_int_equal(prof_shutdown(), 0);
  prof__reader *rd;
  char err[256];
  assert_int_equal(prof__reader_open(&rd, cfg.output, err), 0);
  prof__rec rec;
  int ranges = 0;
  char last[32] = ""; /* the earlier tests' statuses were queued too: the session's is the last */
  while (prof__reader_next(rd, &rec) == 1) {
    if (rec.kind == PROF_REC_EVENT && rec.ev.type == PROF_EV_RANGE_BEGIN) ranges++;
    if (rec.kind == PROF_REC_META && strcmp(rec.key, "gpu.status") == 0) snprintf(last, sizeof last, "%s", rec.value);
  }
  prof__reader_close(rd);
  assert_int_equal(ranges, 1);
#ifdef MLPROF_HAVE_CUPTI
  assert_string_equal(last, PROF_GPU_ST_WAITING); /* this program never loads libcuda */
#else
  assert_string_equal(last, PROF_GPU_ST_NOT_BUILT);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
#ifdef MLPROF_HAVE_CUPTI
      cmocka_unit_test_setup(kernel_struct_translates_with_launch_origin, setup),
      cmocka_unit_test_setup(copy_set_memory_sync_structs_translate, setup),
      cmocka_unit_test_setup(device_overhead_and_unknown_structs, setup),
      cmocka_unit_test_setup(no_device_names_cuda_visible_devices, setup),
      cmocka_unit_test_setup(missing_libcupti_names_the_variable, setup),
      cmocka_unit_test_setup(old_libcupti_is_reported, setup),
      cmocka_unit_test_setup(another_subscriber_is_reported, setup),
      cmocka_unit_test_setup(insufficient_privileges_is_reported_and_cleaned_up, setup),
      cmocka_unit_test_setup(start_enables_and_stop_flushes_forced, setup),
      cmocka_unit_test_setup(completed_buffer_becomes_one_gpu_payload, setup),
      cmocka_unit_test_setup(missing_timestamp_callback_uses_measured_offset, setup),
      cmocka_unit_test_setup(kernel_fields_are_read_at_the_shared_offsets, setup),
      cmocka_unit_test_setup(libcupti_already_loaded_is_reused_first, setup),
      cmocka_unit_test_setup(libcupti_is_found_in_cuda_home_lib, setup),
      cmocka_unit_test_setup(incompatible_libcupti_falls_through_to_the_next, setup),
      cmocka_unit_test_setup(activity_thread_ids_are_system_tids, setup),
      cmocka_unit_test_setup(driver_launches_are_attributed_by_callback, setup),
      cmocka_unit_test_setup(late_api_record_keeps_the_newer_launch, setup),
      cmocka_unit_test_setup(kernels_without_a_launch_are_counted, setup),
      cmocka_unit_test_setup(racing_launch_writers_never_mix_fields, setup),
      cmocka_unit_test_setup(buffers_are_flushed_periodically, setup),
      cmocka_unit_test_setup(stop_disables_then_synchronizes_then_flushes, setup),
      cmocka_unit_test_setup(context_destruction_flushes, setup),
      cmocka_unit_test_setup(incomplete_records_are_counted_and_skipped, setup),
      cmocka_unit_test_setup(cupti_buffers_are_profiler_memory, setup),
      cmocka_unit_test_setup(cuda_is_never_initialised_by_us, setup),
      cmocka_unit_test_setup(cupti_waits_for_the_programs_cuinit, setup),
      cmocka_unit_test_setup(hidden_devices_are_not_a_warning, setup),
#else
      cmocka_unit_test_setup(build_without_cupti_reports_not_built, setup),
#endif
      cmocka_unit_test_setup(no_driver_is_quiet_unless_asked, setup),
      cmocka_unit_test_setup(gpu_0_disables_without_loading_anything, setup),
      cmocka_unit_test_setup(clock_residual_is_measured, setup),
      cmocka_unit_test_setup(cpu_profiling_continues_without_gpu, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
