/* bench_export.c — the Perfetto export against the Chrome JSON export.
 *
 * Writes a synthetic GPU training trace (--steps N, default 2000): per step
 * a "forward" range holding "matmul", a "backward" range, a loss counter,
 * 200 kernels launched from the step thread (a runtime API call record and
 * a kernel record each, as CUPTI gives them) and 20 CPU samples with a
 * 3-frame stack; then, each in a child process, analyzes it and exports it
 * as Chrome JSON and as a Perfetto trace, and reports the output sizes, the
 * export times and the memory each export adds to what the analysis holds
 * (the child's peak RSS during the export, VmHWM reset just before it, less
 * its RSS before it; the analysis itself is bench_analyze's subject). The Perfetto export runs again on a
 * trace 4x as long to show that what it adds does not grow with the trace.
 * Prints `name  value  baseline  ratio`; never fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/export/export_perfetto.h"
#include "analyze/sections/stacks/symbols.h"
#include "bench_util.h"
#include "mlprof.h"
#include "trace/rec_gpu.h"
#include "trace/rec_stacks.h"

#define KERNELS 200
#define SAMPLES 20
#define PY(i) (PROF_PYFRAME_TAG | ((uint64_t)(i) << 47) | 0x1000u)

static void ev(prof__tw *w, uint64_t ts, int type, uint32_t name, uint64_t a, uint64_t b) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts, e.type = (uint8_t)type, e.name = name, e.a = a, e.b = b;
  prof__tw_events(w, 1, &e, 1);
}

static void stacks(prof__tw *w) {
  static const char *const names[] = {"main", "train_step", "matmul_fwd"};
  prof__rec_list l = {0};
  for (int i = 0; i < 3; i++) {
    prof__rec_pyframe f = {PY(i + 1), "/work/train.py", 14, names[i], strlen(names[i]), 10 + i};
    prof__rec_pyframes_put(&l, &f);
  }
  prof__rec_list_write(&l, w, PROF_CHUNK_PYFRAMES);
  prof__rec_list_free(&l);
  uintptr_t pcs[] = {PY(3), PY(2), PY(1)};
  prof__rec_stacks_put(&l, 1, pcs, 3);
  prof__rec_list_write(&l, w, PROF_CHUNK_STACKS);
  prof__rec_list_free(&l);
}

static void gpu_step(prof__tw *w, uint64_t t, uint64_t step) {
  prof__buf b = {0};
  prof__gpu_rec prev = {0};
  for (uint32_t k = 0; k < KERNELS; k++) {
    uint64_t s = t + 1000 + (uint64_t)k * 4000;
    uint32_t corr = (uint32_t)(step * KERNELS + k + 1);
    prof__gpu_rec api = {.kind = PROF_GPU_API, .sub = PROF_GPU_API_RUNTIME, .name = 5, .tid = 1, .start = s - 600,
                         .end = s - 300, .corr = corr};
    prof__gpu_rec r = {.kind = PROF_GPU_KERNEL, .start = s, .end = s + 2500 + (k % 7) * 100, .launch = s - 600,
                       .name = 4, .range = 2, .tid = 1, .stream = 7, .corr = corr};
    r.grid[0] = r.block[0] = 128, r.grid[1] = r.grid[2] = r.block[1] = r.block[2] = 1;
    prof__rec_gpu_encode(&b, &api, &prev);
    prof__rec_gpu_encode(&b, &r, &prev);
  }
  prof__tw_chunk(w, PROF_CHUNK_GPU, b.p, b.len);
  prof__buf_free(&b);
}

static int write_trace(const char *path, uint64_t steps) {
  char err[256];
  prof__kv hdr[] = {{"program", "bench-export"}, {"pid", "1"}, {"gpu.capture", "cupti"}, {"cpu.sample_hz", "1000"}};
  prof__tw *w = prof__tw_open(path, hdr, 4, err);
  if (!w) return fprintf(stderr, "bench_export: %s\n", err), -1;
  const char *s[] = {NULL, "forward", "matmul", "backward", "gemm_kernel", "cudaLaunchKernel", "loss"};
  for (uint32_t i = 1; i < 7; i++) prof__tw_string(w, i, s[i], strlen(s[i]));
  prof__tw_thread(w, 1, "main", 0, 0);
  stacks(w);
  uint64_t t = 1000000, len = KERNELS * 4000 + 4000;
  for (uint64_t n = 0; n < steps; n++, t += len) {
    ev(w, t, PROF_EV_STEP_BEGIN, 0, n, 0);
    ev(w, t + 100, PROF_EV_RANGE_BEGIN, 1, 0, 0);
    ev(w, t + 200, PROF_EV_RANGE_BEGIN, 2, 0, 0);
    for (int k = 0; k < SAMPLES; k++) {
      prof__event e = {.ts = t + 300 + (uint64_t)k * 1000, .type = PROF_EV_SAMPLE, .name = 1, .a = 2, .b = 1};
      prof__tw_events(w, 1, &e, 1);
    }
    ev(w, t + len / 2, PROF_EV_RANGE_END, 2, 0, 0);
    ev(w, t + len / 2 + 100, PROF_EV_RANGE_END, 1, 0, 0);
    ev(w, t + len / 2 + 200, PROF_EV_RANGE_BEGIN, 3, 0, 0);
    ev(w, t + len - 300, PROF_EV_RANGE_END, 3, 0, 0);
    ev(w, t + len - 200, PROF_EV_COUNTER, 6, prof__f64_bits(1.0 / (double)(n + 1)), 0);
    ev(w, t + len - 100, PROF_EV_STEP_END, 0, n, 0);
    gpu_step(w, t, n);
    if (n % 32 == 0) prof__tw_flush(w);
  }
  prof__kv f[] = {{"events_lost", "0"}};
  return prof__tw_close(w, f, 1);
}

/* A "VmRSS:"-style line of /proc/self/status in kB, 0 when unreadable. */
static double status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double v = 0;
  size_t n = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0) v = atof(line + n);
  if (f) fclose(f);
  return v;
}

/* Reset the peak RSS (VmHWM) to the current RSS. */
static void reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) fputs("5", f), fclose(f);
}

typedef struct result {
  double export_s;
  double add_kb; /* peak RSS added by the export */
  long rss_kb;
  long long bytes;
  int ok;
} result;

/* Analyze `path` and export it (format 'c' Chrome JSON, 'p' Perfetto) to
 * `out` in a child; the child reports the export's seconds through a pipe. */
static result export_child(const char *path, const char *out, int format) {
  result r = {0, 0, 0, 0, 0};
  int fd[2];
  if (pipe(fd)) return r;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    prof__an *an;
    char err[256];
    if (prof__an_run_opts(&an, path, 1, err)) _exit(1);
    FILE *f = fopen(out, "w");
    if (!f) _exit(1);
    double rss0 = status_kb("VmRSS:");
    reset_peak();
    uint64_t t0 = bench_now_ns();
    int rc = format == 'c' ? prof__export_chrome(an, f) : prof__export_perfetto(an, f, NULL);
    rc |= fclose(f);
    double s[2] = {(double)(bench_now_ns() - t0) / 1e9, 0};
    s[1] = status_kb("VmHWM:") - rss0;
    if (write(fd[1], s, sizeof s) != (ssize_t)sizeof s) _exit(1);
    _exit(rc ? 1 : 0);
  }
  close(fd[1]);
  double s[2] = {0, 0};
  if (pid > 0 && read(fd[0], s, sizeof s) == (ssize_t)sizeof s) r.export_s = s[0], r.add_kb = s[1];
  close(fd[0]);
  int status = 0;
  struct rusage ru;
  if (pid > 0 && wait4(pid, &status, 0, &ru) == pid) {
    r.rss_kb = ru.ru_maxrss;
    r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  struct stat st;
  if (stat(out, &st) == 0) r.bytes = (long long)st.st_size;
  return r;
}

static long long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

int main(int argc, char **argv) {
  uint64_t steps = 2000;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--steps") == 0) steps = strtoull(argv[++i], NULL, 10);
  if (!steps) steps = 1;
  char dir[400], small[512], big[512], json[512], pf[512], pf4[512];
  if (bench_tmpdir(dir, sizeof dir)) return 0;
  snprintf(small, sizeof small, "%s/small.mlpt", dir);
  snprintf(big, sizeof big, "%s/big.mlpt", dir);
  snprintf(json, sizeof json, "%s/small.json", dir);
  snprintf(pf, sizeof pf, "%s/small.pftrace", dir);
  snprintf(pf4, sizeof pf4, "%s/big.pftrace", dir);
  if (write_trace(small, steps) || write_trace(big, 4 * steps)) {
    bench_rmdir(dir);
    return 0;
  }
  result c = export_child(small, json, 'c'), p = export_child(small, pf, 'p');
  unlink(json);
  result p4 = export_child(big, pf4, 'p');
  bench_header();
  fprintf(stderr,
          "bench_export: %llu steps (%d kernels, %d samples each), trace %.2f MB: Chrome JSON %.1f MB in %.2f s (%s), "
          "Perfetto %.1f MB in %.2f s (%s); peak RSS %.1f MB (analysis and export); 4x the steps: Perfetto %.1f MB, "
          "peak RSS %.1f MB (%s)\n",
          (unsigned long long)steps, KERNELS, SAMPLES, file_size(small) / 1e6, c.bytes / 1e6, c.export_s,
          c.ok ? "ok" : "FAILED", p.bytes / 1e6, p.export_s, p.ok ? "ok" : "FAILED", p.rss_kb / 1024.0, p4.bytes / 1e6,
          p4.rss_kb / 1024.0, p4.ok ? "ok" : "FAILED");
  bench_line("export_perfetto_mb", p.bytes / 1e6, c.bytes / 1e6, "MB written, Perfetto vs Chrome JSON (JSON: no samples)");
  bench_line("export_perfetto_s", p.export_s, c.export_s, "s to export, Perfetto vs Chrome JSON");
  bench_line("export_perfetto_added_rss_mb", p.add_kb / 1024.0, c.add_kb / 1024.0,
             "MB the export adds to the analysis' peak RSS, Perfetto vs Chrome JSON");
  bench_line("export_perfetto_added_rss_4x_mb", p4.add_kb / 1024.0, p.add_kb / 1024.0,
             "MB added by the Perfetto export, 4x longer trace vs the trace");
  bench_rmdir(dir);
  return 0;
}
