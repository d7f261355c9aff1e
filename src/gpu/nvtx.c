/* nvtx.c — NVTX annotations captured as mlprof events; the only file that
 * includes the NVTX headers.
 *
 * NVTX 3 is header-only: the program's first NVTX call looks for a tool,
 * first through NVTX_INJECTION64_PATH (a library exporting
 * InitializeInjectionNvtx2; `mlprof run` and prof_start point it at
 * libmlprof), then through the symbol InitializeInjectionNvtx2_fnptr that a
 * statically linked tool defines (libmlprof.a does, here). The tool gets
 * NVTX's function tables and fills the slots it handles:
 *
 *   push/pop ranges       -> ranges on the calling thread (they nest)
 *   start/end ranges      -> ranges on one of 16 "nvtx-async" lanes: they
 *                            may end on another thread and need not nest
 *   marks                 -> marks
 *   domains               -> the domain's name prefixes the message ("dom:msg")
 *   registered strings    -> interned once at registration
 *   thread naming         -> the calling thread's name in the trace, and
 *                            META nvtx.thread.<tid> for any thread
 *
 * Messages are interned by content (a caller's buffer may be reused for
 * another string), registered strings by handle. Wide-character calls are
 * not captured (NVTX keeps them as no-ops). The per-call cost is measured
 * by bench/bench_nvtx.c.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/producer.h"
#include "trace/tids.h"
#include "gpu.h"
#include "mlprof.h"

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define PROF_HAVE_NVTX 1
#endif
#endif

/* Name the shared libmlprof in `var` unless it is set already; nothing when
 * libmlprof is linked statically (no library for a loader to open). */
int prof__gpu_point_env(const char *var) {
  if (getenv(var)) return 0;
  Dl_info info;
  if (!dladdr((void *)prof__gpu_point_env, &info) || !info.dli_fname || !strstr(info.dli_fname, ".so")) return 0;
  return setenv(var, info.dli_fname, 0) == 0;
}

#ifndef PROF_HAVE_NVTX

int prof__nvtx_available(void) { return 0; }
void prof__nvtx_session_start(void) {}
uint64_t prof__nvtx_async_dropped(void) { return 0; }

#else

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#define LANES 16u
#define DOMAINS 64u
#define STRINGS 4096u
#define MSG_MAX 256

/* A domain: its name (prefix) and interned names of its categories. */
struct nvtxDomainRegistration_st {
  char name[64];
};

/* A registered string: its interned id (the domain prefix included). */
struct nvtxStringRegistration_st {
  uint32_t id;
};

/* Start/end ranges: a lane holds one open range from start to end, then
 * waits (state DONE) for the writer to emit it. */
enum { LANE_FREE = 0, LANE_OPEN = 1, LANE_DONE = 2, LANE_BUSY = 3 };
typedef struct lane {
  uint32_t state;
  uint32_t name;
  uint64_t id;
  uint64_t start, end; /* ticks */
} lane;

static lane lanes[LANES];
/* Domains and registered strings live in fixed pools: no allocation on an
 * NVTX call, and handles stay valid until exit (NVTX may use them late). A
 * full pool answers NULL: NVTX's default domain / an unnamed range. */
static nvtxDomainRegistration domain_pool[DOMAINS];
static nvtxStringRegistration string_pool[STRINGS];
static uint32_t ndomains, nstrings;
static uint64_t next_range_id = 1;
static uint64_t async_dropped, async_emitted;
static int announced[LANES];
static int hooked;

int prof__nvtx_available(void) { return 1; }

/* ---- names ---------------------------------------------------------------- */

static uint32_t intern_msg(const nvtxDomainRegistration *dom, const char *msg) {
  if (!msg) return 0;
  if (!dom) return prof__intern(msg);
  char buf[MSG_MAX];
  snprintf(buf, sizeof buf, "%s:%s", dom->name, msg);
  return prof__intern(buf);
}

/* The name of an event: its registered or ASCII message; 0 for none or
 * a wide-character one. */
static uint32_t attr_name(const nvtxDomainRegistration *dom, const nvtxEventAttributes_t *a) {
  if (!a) return 0;
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: return intern_msg(dom, a->message.ascii);
  case NVTX_MESSAGE_TYPE_REGISTERED: return a->message.registered ? a->message.registered->id : 0;
  default: return 0;
  }
}

/* ---- push/pop and marks: the calling thread ------------------------------- */

static int depth_now(void) {
  prof__thread *t = prof__self;
  return t ? (int)t->depth : 0;
}

static int push_id(uint32_t id) {
  if (!id) id = prof__intern("nvtx");
  prof_range_push_id(id, PROF_CAT_COMPUTE);
  return depth_now() - 1;
}

static int pop(void) {
  int d = depth_now();
  if (d <= 0) return -1;
  prof_range_pop();
  return d - 1;
}

static int NVTX_API push_a(const char *m) { return push_id(intern_msg(NULL, m)); }
static int NVTX_API push_ex(const nvtxEventAttributes_t *a) { return push_id(attr_name(NULL, a)); }
static int NVTX_API pop_(void) { return pop(); }
static int NVTX_API dom_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return push_id(attr_name(d, a));
}
static int NVTX_API dom_pop(nvtxDomainHandle_t d) {
  (void)d;
  return pop();
}

static void mark_id(uint32_t id) {
  if (id) prof_mark_id(id);
}
static void NVTX_API mark_a(const char *m) { mark_id(intern_msg(NULL, m)); }
static void NVTX_API mark_ex(const nvtxEventAttributes_t *a) { mark_id(attr_name(NULL, a)); }
static void NVTX_API dom_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { mark_id(attr_name(d, a)); }

/* ---- start/end: lanes ------------------------------------------------------ */

static nvtxRangeId_t start_id(uint32_t name) {
  if (!name) name = prof__intern("nvtx");
  uint64_t seq = __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED);
  for (uint32_t k = 0; k < LANES; k++) {
    lane *l = &lanes[(seq + k) % LANES];
    uint32_t st = LANE_FREE;
    if (!__atomic_compare_exchange_n(&l->state, &st, LANE_BUSY, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) continue;
    l->name = name;
    l->start = prof__ticks();
    l->end = 0;
    uint64_t id = seq * LANES + (uint64_t)((seq + k) % LANES); /* the lane is in the id */
    __atomic_store_n(&l->id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&l->state, LANE_OPEN, __ATOMIC_RELEASE);
    return id;
  }
  __atomic_fetch_add(&async_dropped, 1, __ATOMIC_RELAXED);
  return 0; /* every lane open: counted, its end is ignored */
}

static void end_id(nvtxRangeId_t id) {
  if (!id) return;
  lane *l = &lanes[id % LANES];
  if (__atomic_load_n(&l->state, __ATOMIC_ACQUIRE) != LANE_OPEN || __atomic_load_n(&l->id, __ATOMIC_RELAXED) != id)
    return;
  l->end = prof__ticks();
  uint32_t st = LANE_OPEN;
  __atomic_compare_exchange_n(&l->state, &st, LANE_DONE, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static nvtxRangeId_t NVTX_API start_a(const char *m) { return start_id(intern_msg(NULL, m)); }
static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a) { return start_id(attr_name(NULL, a)); }
static void NVTX_API end_(nvtxRangeId_t id) { end_id(id); }
static nvtxRangeId_t NVTX_API dom_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return start_id(attr_name(d, a));
}
static void NVTX_API dom_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d;
  end_id(id);
}

/* Writer thread: emit finished start/end ranges, each lane on its own
 * pseudo thread (a lane's ranges never overlap and come out in order). */
static void lanes_hook(prof__tw *tw, int final, void *arg) {
  (void)final;
  (void)arg;
  if (!tw) return;
  for (uint32_t i = 0; i < LANES; i++) {
    lane *l = &lanes[i];
    if (__atomic_load_n(&l->state, __ATOMIC_ACQUIRE) != LANE_DONE) continue;
    uint32_t tid = PROF_TID_NVTX_LANE0 + i;
    if (!announced[i]) {
      char name[32];
      snprintf(name, sizeof name, "nvtx-async-%u", i);
      prof__tw_thread(tw, tid, name, 0, 0);
      announced[i] = 1;
    }
    prof__event ev[2];
    memset(ev, 0, sizeof ev);
    ev[0].type = PROF_EV_RANGE_BEGIN;
    ev[0].name = l->name;
    ev[0].cat = PROF_CAT_COMPUTE;
    ev[0].ts = prof__ticks_to_ns(l->start);
    ev[1].type = PROF_EV_RANGE_END;
    ev[1].name = l->name;
    ev[1].ts = prof__ticks_to_ns(l->end);
    prof__tw_events(tw, tid, ev, 2);
    async_emitted++;
    __atomic_store_n(&l->state, LANE_FREE, __ATOMIC_RELEASE);
  }
}

/* ---- domains, strings, names ----------------------------------------------- */

static nvtxDomainHandle_t NVTX_API dom_create(const char *name) {
  uint32_t i = __atomic_fetch_add(&ndomains, 1, __ATOMIC_RELAXED);
  if (i >= DOMAINS) return NULL;
  nvtxDomainRegistration *d = &domain_pool[i];
  snprintf(d->name, sizeof d->name, "%s", name ? name : "domain");
  return d;
}

static void NVTX_API dom_destroy(nvtxDomainHandle_t d) { (void)d; /* kept: strings may still point at it */ }

static nvtxStringHandle_t NVTX_API dom_register(nvtxDomainHandle_t d, const char *s) {
  uint32_t i = __atomic_fetch_add(&nstrings, 1, __ATOMIC_RELAXED);
  if (i >= STRINGS) return NULL;
  nvtxStringRegistration *r = &string_pool[i];
  r->id = intern_msg(d, s ? s : "");
  return r;
}

static void name_category(const nvtxDomainRegistration *d, uint32_t cat, const char *name) {
  char key[96];
  snprintf(key, sizeof key, "nvtx.category.%s%s%u", d ? d->name : "", d ? "." : "", cat);
  prof__meta_add(key, name ? name : "");
}

static void NVTX_API cat_a(uint32_t cat, const char *name) { name_category(NULL, cat, name); }
static void NVTX_API dom_cat_a(nvtxDomainHandle_t d, uint32_t cat, const char *name) { name_category(d, cat, name); }

static void NVTX_API name_thread_a(uint32_t tid, const char *name) {
  char key[40];
  snprintf(key, sizeof key, "nvtx.thread.%u", tid);
  prof__meta_add(key, name ? name : "");
  prof__thread *t = prof__self;
  if (!t && tid == (uint32_t)gettid()) t = prof__thread_get_slow(); /* first event of this thread */
  if (t && t->tid == tid && name) prof__thread_rename(t, name); /* our own thread: the writer announces it again */
}

static void NVTX_API initialize(const void *reserved) { (void)reserved; }

/* ---- injection ----------------------------------------------------------- */

static void fill(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (table && id < size && table[id]) *table[id] = fn;
}

#define FP(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static int NVTX_API nvtx_init(NvtxGetExportTableFunc_t get) {
  const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
  if (!cb || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable t = NULL;
  unsigned n = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t) return 0;
  fill(t, n, NVTX_CBID_CORE_MarkEx, FP(mark_ex));
  fill(t, n, NVTX_CBID_CORE_MarkA, FP(mark_a));
  fill(t, n, NVTX_CBID_CORE_RangeStartEx, FP(start_ex));
  fill(t, n, NVTX_CBID_CORE_RangeStartA, FP(start_a));
  fill(t, n, NVTX_CBID_CORE_RangeEnd, FP(end_));
  fill(t, n, NVTX_CBID_CORE_RangePushEx, FP(push_ex));
  fill(t, n, NVTX_CBID_CORE_RangePushA, FP(push_a));
  fill(t, n, NVTX_CBID_CORE_RangePop, FP(pop_));
  fill(t, n, NVTX_CBID_CORE_NameCategoryA, FP(cat_a));
  fill(t, n, NVTX_CBID_CORE_NameOsThreadA, FP(name_thread_a));
  t = NULL, n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
    fill(t, n, NVTX_CBID_CORE2_DomainMarkEx, FP(dom_mark));
    fill(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, FP(dom_start));
    fill(t, n, NVTX_CBID_CORE2_DomainRangeEnd, FP(dom_end));
    fill(t, n, NVTX_CBID_CORE2_DomainRangePushEx, FP(dom_push));
    fill(t, n, NVTX_CBID_CORE2_DomainRangePop, FP(dom_pop));
    fill(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, FP(dom_cat_a));
    fill(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, FP(dom_register));
    fill(t, n, NVTX_CBID_CORE2_DomainCreateA, FP(dom_create));
    fill(t, n, NVTX_CBID_CORE2_DomainDestroy, FP(dom_destroy));
    fill(t, n, NVTX_CBID_CORE2_Initialize, FP(initialize));
  }
  if (!__atomic_exchange_n(&hooked, 1, __ATOMIC_ACQ_REL)) prof__writer_hook_add(lanes_hook, NULL);
  prof__meta_add("nvtx.capture", "on");
  return 1;
}

/* The dynamic entry point (NVTX_INJECTION64_PATH=libmlprof.so). */
PROF_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) { return nvtx_init(get); }

/* The static one: NVTX's weak InitializeInjectionNvtx2_fnptr binds to this
 * definition when libmlprof's objects are linked into the program. */
PROF_API int (*InitializeInjectionNvtx2_fnptr)(NvtxGetExportTableFunc_t) = InitializeInjectionNvtx2;

uint64_t prof__nvtx_async_dropped(void) { return __atomic_load_n(&async_dropped, __ATOMIC_RELAXED); }

/* Programs linked with the shared libmlprof: NVTX_INJECTION64_PATH names
 * it, unless the user (or nsys) set one. NVTX looks for its tool once, at
 * the program's first NVTX call, which may come before prof_init: so the
 * library names itself when it is loaded (a constructor, before main for a
 * linked program; MLPROF_DISABLE=1 leaves the environment alone), and again
 * at prof_init for a library loaded after that. */
void prof__nvtx_session_start(void) { prof__gpu_point_env("NVTX_INJECTION64_PATH"); }

__attribute__((constructor)) static void nvtx_point_at_load(void) {
  if (prof__flag_parse(prof__env("DISABLE")) == 1) return;
  prof__gpu_point_env("NVTX_INJECTION64_PATH");
}

#endif /* PROF_HAVE_NVTX */
