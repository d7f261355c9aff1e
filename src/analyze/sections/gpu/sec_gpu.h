/* sec_gpu.h — the GPU report section's results (JSON key "gpu"), shared by
 * its source files (sec_gpu.c computes, sec_gpu_report.c writes text and
 * JSON, sec_gpu_html.c the HTML panel, sec_gpu_chrome.c adds GPU tracks to
 * the Chrome export) and read by the tests.
 */
#ifndef PROF_SEC_GPU_H
#define PROF_SEC_GPU_H

#include <stdint.h>

#include "analyze/analyze.h"
#include "trace/rec_gpu.h"

/* Step-time breakdown with GPU categories: each instant of a step counted
 * once, in this priority order. GPU_BD_KERNEL holds compute kernels only;
 * communication kernels (NCCL/RCCL) go to GPU_BD_COMM with the CPU's
 * communication ranges. */
enum {
  GPU_BD_KERNEL = 0,
  GPU_BD_MEMCPY,
  GPU_BD_MEMSET,
  GPU_BD_COMM,
  GPU_BD_RUNTIME,
  GPU_BD_DATA,
  GPU_BD_COMPUTE,
  GPU_BD_OTHER,
  GPU_BD_COUNT
};

/* Thresholds of the findings (docs/gpu.md explains them). */
#define GPU_LOW_UTIL_SHARE 0.50      /* kernel busy share of step time below this */
#define GPU_LAUNCH_MEAN_NS 20000     /* mean kernel shorter than 20 us ... */
#define GPU_LAUNCH_MIN_KERNELS 100   /* ... over at least this many kernels ... */
#define GPU_LAUNCH_HOST_WAIT 0.20    /* ... with host-wait idle at least this share */
#define GPU_COPY_SHARE 0.15          /* copy time not hidden under kernels */
#define GPU_INPUT_HOST_WAIT 0.30     /* host-wait idle share ... */
#define GPU_INPUT_DATA_SHARE 0.15    /* ... while the host loads data this share */
#define GPU_SYNC_SHARE 0.20          /* synchronisation share of step time */
#define GPU_FP32_SHARE 0.20          /* fp32 matmul share of kernel time, cc >= 7.0 */
#define GPU_COMM_EXPOSED_SHARE 0.10  /* communication kernels not under compute, share of step time ... */
#define GPU_COMM_OVERLAP_MIN 0.50    /* ... with less than this share of them overlapped */

typedef struct gpu_window {
  uint64_t number;       /* step number (0 for the whole-trace window) */
  uint64_t begin, end;
  uint64_t busy_ns;      /* union of kernel intervals */
  uint64_t memcpy_ns, memset_ns; /* unions of copies, sets (overlap with kernels included) */
  uint64_t busy_ns_dev[16]; /* per device (summary.busy_devices[]); busy_ns is their mean */
  uint64_t idle_host_ns; /* no kernel running, next kernel launched after the previous ended */
  uint64_t idle_other_ns;
  uint64_t idle_unattributed_ns; /* ended by a kernel whose launch is unknown (no launch record) */
  uint64_t sync_ns;      /* union of synchronisation on the step's thread (all threads without steps) */
  uint64_t kernels;      /* kernels starting in the window */
  uint64_t bd[GPU_BD_COUNT];
  uint64_t comm_kernel_ns;  /* union of communication (NCCL/RCCL) kernels */
  uint64_t comm_overlap_ns; /* time communication and compute kernels both ran */
} gpu_window;

typedef struct gpu_kstat {
  uint32_t name, device;
  uint64_t calls, total_ns, min_ns, max_ns;
  int32_t grid[3], block[3];
  uint32_t regs, smem;   /* of the longest call */
  double occupancy;      /* estimated, -1 when device properties are missing */
} gpu_kstat;

typedef struct gpu_rstat {
  uint32_t range;        /* string id, 0: launched outside any range */
  uint64_t kernels, kernel_ns, copies, copy_ns;
} gpu_rstat;

typedef struct gpu_copy {
  uint64_t count, bytes, ns, pageable, pinned;
} gpu_copy;

typedef struct gpu_device {
  uint32_t id, name, cc_major, cc_minor, sm_count, max_threads_per_sm, max_warps_per_sm;
  uint32_t max_blocks_per_sm, max_regs_per_sm, max_smem_per_sm;
  uint64_t mem_bytes, mem_peak; /* mem_peak: device and managed memory, never pinned host memory */
} gpu_device;

typedef struct gpu_summary {
  int have_data;         /* any GPU record, or a gpu.status */
  const char *status;    /* gpu.status from META, or NULL */
  const char *status_detail;
  uint64_t records, bad_chunks, dropped;
  uint64_t kernels, copies, sets, syncs, api_calls, overheads;
  uint64_t kernel_ns, overhead_ns, api_ns;
  uint64_t comm_kernels;  /* communication kernel records (prof__sec_gpu_comm_kernel_name) */
  gpu_window *windows;   /* one per step, or one whole-trace window */
  size_t nwindows;
  int whole_trace;       /* 1: no steps, windows[0] is the traced span */
  gpu_window total;      /* sums over the windows */
  gpu_kstat *kstats;     /* sorted by total time, largest first */
  size_t nkstats;
  gpu_rstat *rstats;     /* sorted by kernel time, largest first */
  size_t nrstats;
  uint32_t busy_devices[16]; /* device ids that ran kernels, in first-seen order */
  size_t nbusy_devices;
  uint64_t kernels_unattributed; /* kernel records without a launch time */
  gpu_copy copy[PROF_GPU_COPY_COUNT];
  uint64_t sync_by_type[5];
  gpu_device devices[16];
  size_t ndevices;
  double fp32_share;     /* share of kernel time in fp32 matmul kernels */
} gpu_summary;

/* The results of the GPU section of `an` (NULL when the section is absent). */
const gpu_summary *prof__sec_gpu_summary(prof__an *an);
/* Name of a breakdown bucket: "kernel", "memcpy", ... "other". */
const char *prof__sec_gpu_bd_name(int b);
/* Is this kernel name an fp32 matmul/convolution that tensor cores could run
 * in reduced precision? */
int prof__sec_gpu_fp32_matmul_name(const char *name);
/* Is this kernel name a communication kernel (contains "nccl" or "rccl",
 * any case)? */
int prof__sec_gpu_comm_kernel_name(const char *name);
/* Estimated occupancy (0..1) of a launch, -1 without device properties. */
double prof__sec_gpu_occupancy(const gpu_device *d, const int32_t block[3], uint32_t regs, uint32_t smem);
/* The section's findings from its finished summary; `wall` is the summed
 * step time (sec_gpu_findings.c). */
void prof__sec_gpu_findings(prof__an *an, const gpu_summary *s, uint64_t wall);

/* Chrome export: write the GPU events (one process per device, one track
 * per stream, runtime calls on their CPU threads, flow arrows launch ->
 * kernel) as elements of the open "traceEvents" array. Reads the trace
 * again from the start. `base_ns` is the exporter's time zero, `pid` the
 * process id used for CPU threads. Each timed event asks
 * prof__chrome_keep() first (window and event cap of an export in
 * progress; a flow arrow goes with its GPU operation). Returns 0 or a
 * negative error. */
int prof__sec_gpu_chrome(prof__an *an, prof__json *j, uint64_t base_ns, long long pid);
/* The section's chrome hook: prof__sec_gpu_chrome() with the exporter's time
 * zero and pid, when the trace has GPU records (sec_gpu_html.c). */
void prof__sec_gpu_chrome_hook(prof__an *an, void *st, prof__json *j);

/* Report writers (sec_gpu_report.c; the HTML panel in sec_gpu_html.c). */
void prof__sec_gpu_text(prof__an *an, void *st, FILE *out);
void prof__sec_gpu_json(prof__an *an, void *st, prof__json *j);
void prof__sec_gpu_html(prof__an *an, void *st, FILE *out);

#endif /* PROF_SEC_GPU_H */
