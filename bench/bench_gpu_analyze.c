/* bench_gpu_analyze.c — the GPU section's analysis throughput.
 *
 * Writes a synthetic trace of N kernel records (default 10 M; --kernels N)
 * in steps of 1000 kernels with one range per step, plus a CPU-only trace
 * of the same number of range events as the baseline, then analyzes each
 * in a child process and reports records per second and the child's peak
 * RSS (wait4). Prints `name  value  baseline  ratio`; never fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "bench_util.h"
#include "trace/rec_gpu.h"

#define PER_STEP 1000

static void ev(prof__tw *w, uint64_t ts, int type, uint32_t name, uint64_t a) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts, e.type = (uint8_t)type, e.name = name, e.a = a;
  prof__tw_events(w, 1, &e, 1);
}

/* gpu = 1: kernels; gpu = 0: the same count of range begin/end pairs. */
static int write_trace(const char *path, uint64_t n, int gpu) {
  char err[256];
  prof__kv hdr[] = {{"program", "bench-gpu"}, {"gpu.capture", "cupti"}};
  prof__tw *w = prof__tw_open(path, hdr, 2, err);
  if (!w) return fprintf(stderr, "bench_gpu_analyze: %s\n", err), -1;
  prof__tw_string(w, 1, "step_body", 9);
  prof__tw_string(w, 2, "gemm_kernel", 11);
  prof__tw_string(w, 3, "tiny", 4);
  uint64_t t = 1000000, step = 0;
  for (uint64_t done = 0; done < n; step++) {
    ev(w, t, PROF_EV_STEP_BEGIN, 0, step);
    ev(w, t, PROF_EV_RANGE_BEGIN, 1, 0);
    prof__buf b = {0};
    prof__gpu_rec prev = {0};
    for (int k = 0; k < PER_STEP && done < n; k++, done++) {
      uint64_t s = t + 100 + (uint64_t)k * 3000;
      if (gpu) {
        prof__gpu_rec r = {.kind = PROF_GPU_KERNEL, .start = s, .end = s + 2000 + (k % 7) * 100,
                           .launch = s - 500, .name = 2, .range = 1, .tid = 1, .stream = 7,
                           .corr = (uint32_t)done + 1};
        r.grid[0] = r.block[0] = 128, r.grid[1] = r.grid[2] = r.block[1] = r.block[2] = 1;
        prof__rec_gpu_encode(&b, &r, &prev);
      } else {
        ev(w, s, PROF_EV_RANGE_BEGIN, 3, 0);
        ev(w, s + 2000, PROF_EV_RANGE_END, 3, 0);
      }
    }
    if (b.len) prof__tw_chunk(w, PROF_CHUNK_GPU, b.p, b.len);
    prof__buf_free(&b);
    t += PER_STEP * 3000 + 1000;
    ev(w, t - 500, PROF_EV_RANGE_END, 1, 0);
    ev(w, t - 500, PROF_EV_STEP_END, 0, step);
    if (step % 64 == 0) prof__tw_flush(w);
  }
  prof__kv f[] = {{"events_lost", "0"}};
  return prof__tw_close(w, f, 1);
}

typedef struct result {
  double seconds;
  long rss_kb;
  int ok;
} result;

static result analyze_child(const char *path) {
  result r = {0, 0, 0};
  uint64_t t0 = bench_now_ns();
  pid_t pid = fork();
  if (pid == 0) {
    prof__an *an;
    char err[256];
    _exit(prof__an_run_opts(&an, path, 1, err) == 0 ? 0 : 1);
  }
  int status = 0;
  struct rusage ru;
  if (pid > 0 && wait4(pid, &status, 0, &ru) == pid) {
    r.rss_kb = ru.ru_maxrss;
    r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  r.seconds = (double)(bench_now_ns() - t0) / 1e9;
  return r;
}

int main(int argc, char **argv) {
  uint64_t n = 10000000;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--kernels") == 0) n = strtoull(argv[++i], NULL, 10);
  char dir[400], gpu_path[512], cpu_path[512];
  if (bench_tmpdir(dir, sizeof dir)) return 0;
  snprintf(gpu_path, sizeof gpu_path, "%s/gpu.mlpt", dir);
  snprintf(cpu_path, sizeof cpu_path, "%s/cpu.mlpt", dir);
  if (write_trace(gpu_path, n, 1) || write_trace(cpu_path, n, 0)) {
    bench_rmdir(dir);
    return 0;
  }
  result g = analyze_child(gpu_path), c = analyze_child(cpu_path);
  bench_header();
  fprintf(stderr, "bench_gpu_analyze: %llu kernel records: %.2f s, peak RSS %.1f MB (%s); "
                  "CPU baseline %llu range pairs: %.2f s, %.1f MB\n",
          (unsigned long long)n, g.seconds, g.rss_kb / 1024.0, g.ok ? "ok" : "FAILED", (unsigned long long)n,
          c.seconds, c.rss_kb / 1024.0);
  bench_line("gpu_analyze_mrecords_per_s", n / g.seconds / 1e6, n / c.seconds / 1e6,
             "M kernel records/s vs M range pairs/s (CPU-only trace)");
  bench_line("gpu_analyze_peak_rss_mb", g.rss_kb / 1024.0, c.rss_kb / 1024.0, "MB, GPU trace vs CPU-only trace");
  bench_line("gpu_analyze_bytes_per_kernel", g.rss_kb * 1024.0 / (double)n, c.rss_kb * 1024.0 / (double)n,
             "peak RSS bytes per record");
  bench_rmdir(dir);
  return 0;
}
