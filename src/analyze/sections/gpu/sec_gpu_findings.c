/* sec_gpu_findings.c — what the GPU section concludes from its summary:
 * the findings (low utilisation, launch-bound, copies, input pipeline,
 * synchronisation, fp32 matmuls, exposed communication), the kernel-name
 * classes they rest on (fp32 matmul, NCCL/RCCL) and the theoretical
 * occupancy of a launch. sec_gpu.c builds the summary and calls
 * prof__sec_gpu_findings() at the end of finish().
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mlprof.h"
#include "analyze/sections/gpu/sec_gpu.h"

double prof__sec_gpu_occupancy(const gpu_device *d, const int32_t block[3], uint32_t regs, uint32_t smem) {
  if (!d || !d->max_warps_per_sm || block[0] <= 0 || block[1] <= 0 || block[2] <= 0) return -1;
  uint64_t threads = (uint64_t)block[0] * (uint64_t)block[1] * (uint64_t)block[2];
  uint64_t warps = (threads + 31) / 32;
  uint64_t blocks = d->max_warps_per_sm / warps;
  if (d->max_blocks_per_sm && d->max_blocks_per_sm < blocks) blocks = d->max_blocks_per_sm;
  if (regs && d->max_regs_per_sm) {
    uint64_t by_regs = d->max_regs_per_sm / (regs * 32ull * warps);
    if (by_regs < blocks) blocks = by_regs;
  }
  if (smem && d->max_smem_per_sm && d->max_smem_per_sm / smem < blocks) blocks = d->max_smem_per_sm / smem;
  return (double)(blocks * warps) / (double)d->max_warps_per_sm;
}

static int contains_ci(const char *s, const char *w) {
  size_t n = strlen(w);
  for (; *s; s++)
    if (strncasecmp(s, w, n) == 0) return 1;
  return 0;
}

int prof__sec_gpu_fp32_matmul_name(const char *name) {
  static const char *const fp32[] = {"sgemm", "gemm_f32", "gemmf32", "f32_gemm", "scudnn", "sconv",
                                     "fp32_gemm", "gemm_fp32", "_f32f32_", "float_gemm"};
  static const char *const tc[] = {"tensorop", "hmma", "xmma", "wmma", "mma_", "884", "1688", "16816",
                                   "tf32", "f16", "bf16", "fp16", "half", "s8", "imma", "_h_"};
  if (!name) return 0;
  if (contains_ci(name, "tf32")) return 0;
  /* cuBLAS on sm90: "sm90_xmma_gemm_f32f32_f32f32_f32_..." is an fp32-in, fp32-compute kernel. */
  if (contains_ci(name, "f32f32_f32f32")) return 1;
  for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++)
    if (contains_ci(name, tc[i])) return 0;
  for (size_t i = 0; i < sizeof fp32 / sizeof fp32[0]; i++)
    if (contains_ci(name, fp32[i])) return 1;
  return 0;
}

int prof__sec_gpu_comm_kernel_name(const char *name) {
  return name && (contains_ci(name, "nccl") || contains_ci(name, "rccl"));
}

/* ---- findings ------------------------------------------------------------- */

#define FIND(id, sev, val, title, rec, ...)                      \
  do {                                                           \
    char m_[320];                                                \
    snprintf(m_, sizeof m_, __VA_ARGS__);                        \
    prof__an_finding(an, id, sev, val, title, m_, rec);          \
  } while (0)

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

/* A saving of `ns` in all (over the steps) on the finding added last. */
#define SAVING(ns, ...)                                                                             \
  prof__an_finding_saving(an, an->nsteps ? (double)(ns) / (double)an->nsteps : 0,                 \
                          prof__an_confidence(an->nsteps, 0), __VA_ARGS__)

static const char *per_step(const prof__an *an, char *buf, size_t n, uint64_t ns) {
  return prof__an_fmt_ns(buf, n, an->nsteps ? ns / an->nsteps : 0);
}

static void findings_util(prof__an *an, const gpu_summary *s, uint64_t wall) {
  double busy = share(s->total.busy_ns, wall), host = share(s->total.idle_host_ns, wall);
  if (s->kernels && busy < GPU_LOW_UTIL_SHARE)
    FIND("gpu_low_utilization", busy < 0.25 ? "high" : "medium", busy, "The GPU was idle most of the step time",
         "Raise the work per launch (larger batch) and overlap data loading and copies with compute "
         "(prefetching loaders, non_blocking copies, CUDA streams).",
         "kernels ran %.1f%% of %.3f s of step time; idle %.1f%% waiting for the host, %.1f%% other",
         100 * busy, wall / 1e9, 100 * host, 100 * share(s->total.idle_other_ns, wall));
  if (s->kernels && busy < GPU_LOW_UTIL_SHARE) {
    char b[32];
    SAVING(s->total.idle_host_ns,
           "upper bound: the GPU idle time waiting for the host, %s per step, gone if the host launched ahead",
           per_step(an, b, sizeof b, s->total.idle_host_ns));
  }
  double mean = s->kernels ? (double)s->kernel_ns / (double)s->kernels : 0;
  if (s->kernels >= GPU_LAUNCH_MIN_KERNELS && mean < GPU_LAUNCH_MEAN_NS && host >= GPU_LAUNCH_HOST_WAIT)
    FIND("gpu_launch_bound", "high", mean, "Launch-bound: many tiny kernels, the GPU waits for launches",
         "Fuse small operations (torch.compile, fused optimizers), capture the step in a CUDA graph, "
         "or give each kernel more work.",
         "%llu kernels averaging %.1f us; GPU idle waiting for the host %.1f%% of step time",
         (unsigned long long)s->kernels, mean / 1e3, 100 * host);
  if (s->kernels >= GPU_LAUNCH_MIN_KERNELS && mean < GPU_LAUNCH_MEAN_NS && host >= GPU_LAUNCH_HOST_WAIT) {
    char b[32];
    SAVING(s->total.idle_host_ns,
           "upper bound: the GPU idle time waiting for launches, %s per step, gone with fused kernels or a CUDA graph",
           per_step(an, b, sizeof b, s->total.idle_host_ns));
  }
}

static uint64_t pageable_copies(const gpu_summary *s) {
  return s->copy[PROF_GPU_COPY_H2D].pageable + s->copy[PROF_GPU_COPY_D2H].pageable;
}

static void findings_io(prof__an *an, const gpu_summary *s, uint64_t wall) {
  double cp = share(s->total.bd[GPU_BD_MEMCPY], wall);
  if (cp >= GPU_COPY_SHARE)
    FIND("gpu_copy_heavy", cp >= 0.3 ? "high" : "medium", cp, "Copies between host and device take much of the step",
         "Use pinned host memory (pin_memory=True) and asynchronous copies on a side stream, keep tensors on "
         "the device between steps, and copy fewer, larger buffers.",
         "copies not hidden under kernels: %.1f%% of step time; %llu copies, %llu from pageable memory",
         100 * cp, (unsigned long long)s->copies, (unsigned long long)pageable_copies(s));
  if (cp >= GPU_COPY_SHARE) {
    char b[32];
    SAVING(s->total.bd[GPU_BD_MEMCPY],
           "the copy time not hidden under kernels, %s per step, hidden by pinned memory and asynchronous copies "
           "(%llu of %llu copies pageable, which block the host)",
           per_step(an, b, sizeof b, s->total.bd[GPU_BD_MEMCPY]), (unsigned long long)pageable_copies(s),
           (unsigned long long)s->copies);
  }
  double host = share(s->total.idle_host_ns, wall), data = share(s->total.bd[GPU_BD_DATA], wall);
  if (host >= GPU_INPUT_HOST_WAIT && data >= GPU_INPUT_DATA_SHARE)
    FIND("gpu_host_input_bound", "high", host, "The GPU waits for the host's input pipeline",
         "Load and augment data in parallel workers ahead of time (num_workers, prefetch), move decoding "
         "or augmentation to the GPU, and copy batches with non_blocking transfers.",
         "GPU idle waiting for the host %.1f%% of step time while data loading ran %.1f%%", 100 * host, 100 * data);
  if (host >= GPU_INPUT_HOST_WAIT && data >= GPU_INPUT_DATA_SHARE) {
    uint64_t w = s->total.idle_host_ns < s->total.bd[GPU_BD_DATA] ? s->total.idle_host_ns : s->total.bd[GPU_BD_DATA];
    char b[32];
    SAVING(w, "the GPU idle time waiting for the host, up to the host's data loading time: %s per step "
              "(min of the two), gone when batches are ready ahead",
           per_step(an, b, sizeof b, w));
  }
  double sy = share(s->total.sync_ns, wall);
  if (sy >= GPU_SYNC_SHARE)
    FIND("gpu_sync_heavy", sy >= 0.4 ? "high" : "medium", sy, "The host blocks on GPU synchronisation",
         "Remove implicit synchronisation (.item(), .cpu(), printing tensors, cudaDeviceSynchronize) from the "
         "step; read metrics every N steps and use events for timing.",
         "%llu synchronisations took %.1f%% of step time", (unsigned long long)s->syncs, 100 * sy);
  if (sy >= GPU_SYNC_SHARE) {
    char b[32];
    SAVING(s->total.sync_ns, "the time the step thread blocked in %llu synchronisations, %s per step",
           (unsigned long long)s->syncs, per_step(an, b, sizeof b, s->total.sync_ns));
  }
}

static void findings_precision(prof__an *an, const gpu_summary *s) {
  if (s->fp32_share < GPU_FP32_SHARE) return;
  FIND("gpu_fp32_matmul", "medium", s->fp32_share, "Matrix math runs in fp32 on a GPU with tensor cores",
       "Enable mixed precision (torch.autocast with bf16/fp16, or TF32 via "
       "torch.backends.cuda.matmul.allow_tf32) so matmuls and convolutions use tensor cores.",
       "fp32 matmul/convolution kernels took %.1f%% of kernel time on compute capability >= 7.0",
       100 * s->fp32_share);
}

static void findings_comm(prof__an *an, const gpu_summary *s, uint64_t wall) {
  const gpu_window *t = &s->total;
  uint64_t exposed = t->comm_kernel_ns - t->comm_overlap_ns;
  double ex = share(exposed, wall), ov = share(t->comm_overlap_ns, t->comm_kernel_ns);
  if (!t->comm_kernel_ns || ex < GPU_COMM_EXPOSED_SHARE || ov >= GPU_COMM_OVERLAP_MIN) return;
  FIND("gpu_comm_exposed", ex >= 0.3 ? "high" : "medium", ex,
       "Communication kernels run mostly without compute alongside",
       "Overlap the gradient all-reduce with the backward pass: bucket gradients (DDP bucket_cap_mb, "
       "gradient_as_bucket_view), launch collectives asynchronously (async_op=True) and wait only when "
       "the result is needed.",
       "NCCL/RCCL kernels ran %.1f%% of step time, %.1f%% of it overlapped with compute kernels; "
       "%.1f%% of step time was communication alone",
       100 * share(t->comm_kernel_ns, wall), 100 * ov, 100 * ex);
  char b[32];
  SAVING(exposed, "the communication time with no compute alongside, %s per step, hidden if overlapped with the "
                  "backward pass",
         per_step(an, b, sizeof b, exposed));
}

void prof__sec_gpu_findings(prof__an *an, const gpu_summary *s, uint64_t wall) {
  findings_util(an, s, wall);
  findings_io(an, s, wall);
  findings_precision(an, s);
  findings_comm(an, s, wall);
}
