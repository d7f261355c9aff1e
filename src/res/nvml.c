/* nvml.c — the one door to NVIDIA's management library.
 *
 * libnvidia-ml.so.1 is opened with dlopen when the session starts, so
 * mlprof has no link-time dependency on it and runs unchanged on machines
 * without a GPU driver. The few entry points used are declared here with
 * their documented C types; NVML's header is not needed to build. NVML
 * reports device-wide figures: with several processes on one GPU, the
 * utilisation is everyone's.
 *
 * Only the devices the job can use are sampled: CUDA_VISIBLE_DEVICES is
 * honoured (indices, GPU-<uuid> and MIG-<uuid>, unique UUID prefixes; the
 * list ends at the first entry that names no device, as CUDA's does), so a
 * one-GPU job on an 8-GPU node is not averaged with seven idle GPUs. A MIG
 * instance has no utilisation counter: its samples carry memory only.
 * nvmlInit runs from the session's start on the caller's thread (the
 * resource module's header/start hooks), never on the writer thread.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "res.h"

typedef int nv_ret;               /* nvmlReturn_t: 0 is success */
typedef struct nv_dev *nv_dev;    /* nvmlDevice_t */
typedef struct { unsigned gpu, memory; } nv_util;
typedef struct { unsigned long long total, free, used; } nv_mem;

#define NV_CLOCK_SM 1       /* nvmlClockType_t NVML_CLOCK_SM */
#define NV_TEMPERATURE_GPU 0

static struct {
  void *lib;
  int count;
  nv_dev dev[PROF_RES_MAX_GPUS];
  nv_ret (*init)(void);
  nv_ret (*shutdown)(void);
  nv_ret (*get_count)(unsigned *);
  nv_ret (*get_handle)(unsigned, nv_dev *);
  nv_ret (*get_util)(nv_dev, nv_util *);
  nv_ret (*get_mem)(nv_dev, nv_mem *);
  nv_ret (*get_power)(nv_dev, unsigned *);
  nv_ret (*get_clock)(nv_dev, int, unsigned *);
  nv_ret (*get_temp)(nv_dev, int, unsigned *);
  nv_ret (*get_name)(nv_dev, char *, unsigned);
  nv_ret (*get_uuid)(nv_dev, char *, unsigned);
  nv_ret (*by_uuid)(const char *, nv_dev *);
} N;

static void *sym(const char *name) { return dlsym(N.lib, name); }

static int load_symbols(void) {
  *(void **)&N.init = sym("nvmlInit_v2");
  *(void **)&N.shutdown = sym("nvmlShutdown");
  *(void **)&N.get_count = sym("nvmlDeviceGetCount_v2");
  *(void **)&N.get_handle = sym("nvmlDeviceGetHandleByIndex_v2");
  *(void **)&N.get_util = sym("nvmlDeviceGetUtilizationRates");
  *(void **)&N.get_mem = sym("nvmlDeviceGetMemoryInfo");
  *(void **)&N.get_power = sym("nvmlDeviceGetPowerUsage");
  *(void **)&N.get_clock = sym("nvmlDeviceGetClockInfo");
  *(void **)&N.get_temp = sym("nvmlDeviceGetTemperature");
  *(void **)&N.get_name = sym("nvmlDeviceGetName");
  *(void **)&N.get_uuid = sym("nvmlDeviceGetUUID");
  *(void **)&N.by_uuid = sym("nvmlDeviceGetHandleByUUID");
  return N.init && N.shutdown && N.get_count && N.get_handle ? 0 : -1;
}

static int fail(char *msg, size_t n, const char *why) {
  snprintf(msg, n, "%s", why);
  if (N.lib) dlclose(N.lib);
  memset(&N, 0, sizeof N);
  return -1;
}

/* The device one CUDA_VISIBLE_DEVICES entry names, or 0. */
static int entry_device(const char *e, size_t len, unsigned count, nv_dev *out) {
  char want[96];
  if (!len || len >= sizeof want) return 0;
  memcpy(want, e, len);
  want[len] = 0;
  if (want[0] >= '0' && want[0] <= '9') {
    char *end;
    unsigned long i = strtoul(want, &end, 10);
    return !*end && i < count && N.get_handle((unsigned)i, out) == 0;
  }
  if (strncmp(want, "MIG-", 4) == 0) return N.by_uuid && N.by_uuid(want, out) == 0;
  if (strncmp(want, "GPU-", 4) != 0 || !N.get_uuid) return 0;
  int found = 0; /* a prefix must name exactly one GPU */
  for (unsigned i = 0; i < count; i++) {
    nv_dev d;
    char uuid[96];
    if (N.get_handle(i, &d) != 0 || N.get_uuid(d, uuid, sizeof uuid) != 0) continue;
    if (strncmp(uuid, want, len) == 0) {
      *out = d;
      found++;
    }
  }
  return found == 1;
}

static void visible(const char *cvd, unsigned count) {
  for (const char *p = cvd; *p && N.count < PROF_RES_MAX_GPUS;) {
    while (*p == ' ' || *p == ',') p++;
    size_t len = strcspn(p, ",");
    while (len && p[len - 1] == ' ') len--;
    if (!len) break;
    nv_dev d;
    if (!entry_device(p, len, count, &d)) break; /* CUDA ignores the rest of the list too */
    int dup = 0;
    for (int i = 0; i < N.count; i++) dup |= N.dev[i] == d;
    if (!dup) N.dev[N.count++] = d;
    p += strcspn(p, ",");
  }
}

int prof__res_nvml_open(const char *lib, char *msg, size_t n) {
  if (N.lib) return N.count;
  const char *path = lib && *lib ? lib : "libnvidia-ml.so.1";
  /* Without the driver's control device NVML cannot work: skip the dlopen,
   * whose search of the library path every program would pay at start. */
  if (!(lib && *lib) && access("/dev/nvidiactl", F_OK) != 0) {
    snprintf(msg, n, "no NVIDIA driver (no /dev/nvidiactl)");
    return -1;
  }
  N.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!N.lib) {
    snprintf(msg, n, "%s not found (no NVIDIA driver)", path);
    return -1;
  }
  if (load_symbols()) return fail(msg, n, "NVML lacks nvmlInit_v2 or device functions (driver too old)");
  nv_ret rc = N.init();
  if (rc != 0) {
    char why[96];
    snprintf(why, sizeof why, "nvmlInit_v2 failed (NVML error %d)", rc);
    return fail(msg, n, why);
  }
  unsigned count = 0;
  if (N.get_count(&count) != 0 || count == 0) {
    N.shutdown();
    return fail(msg, n, "NVML found no GPU");
  }
  const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
  if (cvd) {
    visible(cvd, count);
  } else {
    for (unsigned i = 0; i < count && N.count < PROF_RES_MAX_GPUS; i++)
      if (N.get_handle(i, &N.dev[N.count]) == 0) N.count++;
  }
  if (!N.count) {
    N.shutdown();
    return fail(msg, n, cvd ? "CUDA_VISIBLE_DEVICES names no GPU" : "NVML could not open any GPU");
  }
  snprintf(msg, n, "NVML, %d GPU%s%s", N.count, N.count > 1 ? "s" : "", cvd ? " (CUDA_VISIBLE_DEVICES)" : "");
  return N.count;
}

int prof__res_nvml_read(int i, prof__res_gpu *g) {
  memset(g, 0, sizeof *g);
  if (!N.lib || i < 0 || i >= N.count) return -1;
  nv_dev d = N.dev[i];
  nv_util u;
  nv_mem m;
  unsigned v;
  if (N.get_util && N.get_util(d, &u) == 0) {
    g->util_pct = u.gpu;
    g->mem_util_pct = u.memory;
    g->have |= 3u;
  }
  if (N.get_mem && N.get_mem(d, &m) == 0) {
    g->mem_used_bytes = (double)m.used;
    g->mem_total_bytes = (double)m.total;
    g->have |= 12u;
  }
  if (N.get_power && N.get_power(d, &v) == 0) g->power_w = v / 1000.0, g->have |= 16u;
  if (N.get_clock && N.get_clock(d, NV_CLOCK_SM, &v) == 0) g->sm_mhz = v, g->have |= 32u;
  if (N.get_temp && N.get_temp(d, NV_TEMPERATURE_GPU, &v) == 0) g->temp_c = v, g->have |= 64u;
  return g->have ? 0 : -1;
}

void prof__res_nvml_name(int i, char *buf, size_t n) {
  if (!n) return;
  buf[0] = 0;
  if (!N.lib || i < 0 || i >= N.count || !N.get_name || n < 2) return;
  if (N.get_name(N.dev[i], buf, (unsigned)(n > 96 ? 96 : n)) != 0) buf[0] = 0;
  buf[n - 1] = 0;
}

void prof__res_nvml_close(void) {
  if (!N.lib) return;
  N.shutdown();
  dlclose(N.lib);
  memset(&N, 0, sizeof N);
}
