/* nvtx_work.h — one NVTX workload with known counts, shared by the NVTX
 * program (run under `mlprof run` or linked with libmlprof) and the
 * in-process test. Uses only NVTX 3 (header-only) and pthreads.
 *
 * Counts: "outer" 10 ranges, each holding 5 "inner"; 3 "checkpoint" marks;
 * 4 "mydom:dom_step" ranges (a registered string of domain "mydom"), 2
 * "mydom:dmark" marks; 3 "async_io" start/end ranges, each ended on another
 * thread; the calling thread named "nvtx-main".
 */
#ifndef NVTX_WORK_H
#define NVTX_WORK_H
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static void *nvtx_work_end(void *arg) {
  nvtxRangeEnd(*(nvtxRangeId_t *)arg);
  return NULL;
}

static int nvtx_work(void) {
  nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx-main");
  volatile double sink = 0;
  for (int i = 0; i < 10; i++) {
    nvtxRangePushA("outer");
    for (int j = 0; j < 5; j++) {
      nvtxRangePushA("inner");
      for (int k = 0; k < 1000; k++) sink += k * 0.5;
      nvtxRangePop();
    }
    nvtxRangePop();
  }
  for (int i = 0; i < 3; i++) nvtxMarkA("checkpoint");
  nvtxDomainHandle_t dom = nvtxDomainCreateA("mydom");
  nvtxStringHandle_t step = nvtxDomainRegisterStringA(dom, "dom_step");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = step;
  for (int i = 0; i < 4; i++) {
    nvtxDomainRangePushEx(dom, &a);
    nvtxDomainRangePop(dom);
  }
  nvtxEventAttributes_t m = {0};
  m.version = NVTX_VERSION;
  m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  m.messageType = NVTX_MESSAGE_TYPE_ASCII;
  m.message.ascii = "dmark";
  nvtxDomainMarkEx(dom, &m);
  nvtxDomainMarkEx(dom, &m);
  for (int i = 0; i < 3; i++) {
    nvtxRangeId_t id = nvtxRangeStartA("async_io");
    pthread_t t;
    if (pthread_create(&t, NULL, nvtx_work_end, &id) != 0) return 1;
    pthread_join(t, NULL);
  }
  nvtxDomainDestroy(dom);
  return sink < 0;
}
#endif
