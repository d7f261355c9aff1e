/* test_gpu_cupti.c — the CUPTI backend without a GPU: real CUPTI activity
 * structs through the translation layer, and every start-up failure path
 * (no driver, no device, no libcupti, old libcupti, another subscriber,
 * insufficient privileges) through dlopen/dlsym mocks, then a full session
 * on this machine where CPU profiling must continue.
 */
// wrap: dlopen dlsym
#include <dlfcn.h>
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
#endif

void *__real_dlopen(const char *file, int mode);
void *__real_dlsym(void *h, const char *name);

/* ---- mocks --------------------------------------------------------------- */

static struct {
  int on;             /* 0: pass everything to the real functions */
  int no_driver, no_cupti;
  int init_rc, count;
  const char *missing; /* a libcupti symbol to hide */
  int subscribe_rc, enable_rc, no_ts_callback;
  int cuda_opens, enables, disables, unsubscribes, flushes, forced_flushes;
  uint64_t gpu_clock_lag;
} M;

static char fake_cuda, fake_cupti;

static int fake_cuInit(unsigned f) {
  (void)f;
  return M.init_rc;
}
static int fake_count(int *n) {
  *n = M.count;
  return 0;
}

void *__wrap_dlopen(const char *file, int mode) {
  if (!M.on || !file) return __real_dlopen(file, mode);
  if (strcmp(file, "libcuda.so.1") == 0) {
    M.cuda_opens++;
    return M.no_driver ? NULL : &fake_cuda;
  }
  if (strstr(file, "cupti")) return M.no_cupti ? NULL : &fake_cupti;
  return __real_dlopen(file, mode);
}

#ifdef MLPROF_HAVE_CUPTI
static CUpti_BuffersCallbackRequestFunc got_request;
static CUpti_BuffersCallbackCompleteFunc got_complete;

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
  return CUPTI_SUCCESS;
}
static CUptiResult fk_flush(uint32_t flag) {
  M.flushes++;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) M.forced_flushes++;
  return CUPTI_SUCCESS;
}
static size_t rec_size(CUpti_ActivityKind k) {
  switch (k) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
  default: return sizeof(CUpti_Activity);
  }
}
/* Walks records laid out back to back, as CUPTI's does for its buffers. */
static CUptiResult fk_next(uint8_t *buf, size_t valid, CUpti_Activity **rec) {
  uint8_t *p = *rec ? (uint8_t *)*rec + rec_size((*rec)->kind) : buf;
  if (p >= buf + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = (CUpti_Activity *)p;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_dropped(CUcontext c, uint32_t s, size_t *n) {
  (void)c, (void)s;
  *n = 3;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *u) {
  (void)f, (void)u;
  *h = (CUpti_SubscriberHandle)&fake_cupti;
  return (CUptiResult)M.subscribe_rc;
}
static CUptiResult fk_unsubscribe(CUpti_SubscriberHandle h) {
  (void)h;
  M.unsubscribes++;
  return CUPTI_SUCCESS;
}
static CUptiResult fk_enable_domain(uint32_t e, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
  (void)e, (void)h, (void)d;
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
  expect_failure(PROF_GPU_ST_NO_DRIVER, NULL);
  setenv("MLPROF_GPU", "1", 1);
  expect_failure(PROF_GPU_ST_NO_DRIVER, "install the NVIDIA driver");
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
  assert_int_equal(M.enables, 11);
  prof__gpu_stop_for_test();
  assert_int_equal(M.forced_flushes, 1);
  assert_int_equal(M.disables, 11);
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
  assert_true(size >= sizeof(CUpti_ActivityKernel10) + sizeof(CUpti_ActivityMemcpy6));
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 5000, k.end = 9000, k.name = "buffered_kernel", k.correlationId = 21, k.streamId = 3;
  CUpti_ActivityMemcpy6 m;
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
  assert_int_equal(prof__gpu_dec_init(&d, b.p, b.len), 0);
  assert_int_equal(prof__gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_KERNEL);
  assert_int_equal(r.start, 5000);
  assert_int_equal(r.end, 9000);
  assert_int_equal(r.name, prof__intern("buffered_kernel"));
  assert_int_equal(prof__gpu_dec_next(&d, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMCPY);
  assert_int_equal(r.sub, PROF_GPU_COPY_D2H);
  assert_int_equal(r.bytes, 4096);
  assert_int_equal(prof__gpu_dec_next(&d, &r), 0);
  prof__buf_free(&b);
}

/* ---- translation of real CUPTI structs ----------------------------------- */

static void kernel_struct_translates_with_launch_origin(void **state) {
  (void)state;
  CUpti_ActivityExternalCorrelation x;
  memset(&x, 0, sizeof x);
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  x.externalId = (4242ull << 32) | 17;
  x.correlationId = 55;
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(&x, &r), 0); /* feeds the launch table only */
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
  CUpti_ActivityKernel10 k;
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
  CUpti_ActivityMemcpy6 m;
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
  CUpti_ActivityMemset4 s;
  memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, s.bytes = 64, s.start = 5, s.end = 6;
  assert_int_equal(prof__cupti_translate(&s, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMSET);
  assert_int_equal(r.src_mem, PROF_GPU_MEM_MANAGED);
  CUpti_ActivityMemory4 mem;
  memset(&mem, 0, sizeof mem);
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, mem.bytes = 512, mem.address = 0xabc000, mem.timestamp = 77;
  assert_int_equal(prof__cupti_translate(&mem, &r), 1);
  assert_int_equal(r.kind, PROF_GPU_MEMORY);
  assert_int_equal(r.sub, PROF_GPU_MEMOP_FREE);
  assert_int_equal(r.addr, 0xabc000);
  assert_int_equal(r.start, 77);
  CUpti_ActivitySynchronization2 y;
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
  CUpti_ActivityDevice5 d;
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
  CUpti_ActivityOverhead3 o;
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
  CUpti_ActivityKernel10 k;
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
#else
static void build_without_cupti_reports_not_built(void **state) {
  (void)state;
  prof__gpu_rec r;
  assert_int_equal(prof__cupti_translate(&r, &r), PROF_EUNSUPPORTED);
  expect_failure(PROF_GPU_ST_NOT_BUILT, NULL);
}
#endif

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
  assert_string_equal(last, PROF_GPU_ST_NO_DRIVER);
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
#else
      cmocka_unit_test_setup(build_without_cupti_reports_not_built, setup),
#endif
      cmocka_unit_test_setup(no_driver_is_quiet_unless_asked, setup),
      cmocka_unit_test_setup(gpu_0_disables_without_loading_anything, setup),
      cmocka_unit_test_setup(cpu_profiling_continues_without_gpu, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
