/* bench_html.c — HTML report and Chrome export on a big synthetic trace.
 *
 * Writes a trace of N events (default 10 M: steps of nested compute/data
 * ranges on a main thread plus a loader thread, a counter per step), then
 * measures, after one analysis:
 *   - HTML report generation time and size (baseline: the JSON report);
 *   - Chrome export throughput in MB/s, and bytes per event against
 *     torch.profiler's JSON, about 110 bytes per CPU op event;
 *   - the same export gzip-compressed (.json.gz).
 * Output is counted, not stored.
 *
 *   bench_html [--events N] [--keep]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "analyze/export/gzfile.h"
#include "bench_util.h"
#include "mlprof.h"
#include "trace/trace.h"

#define TORCH_BYTES_PER_EVENT 110.0
#define STEPS 2000
#define BUF 4096

static const char *names[] = {"data", "forward", "backward", "optimizer", "attn", "mlp", "matmul", "softmax",
                              "layernorm", "allreduce", "read", "decode", "loss"};
#define NNAMES (sizeof names / sizeof names[0])

typedef struct gen {
  prof__tw *w;
  prof__event buf[BUF];
  size_t n;
  uint64_t emitted;
} gen;

static void put(gen *g, uint32_t tid, uint64_t ts, int type, uint32_t name, int cat, uint64_t a) {
  g->buf[g->n++] = (prof__event){.ts = ts, .type = (uint8_t)type, .cat = (uint8_t)cat, .name = name, .a = a};
  g->emitted++;
  if (g->n == BUF) {
    prof__tw_events(g->w, tid, g->buf, g->n);
    g->n = 0;
    prof__tw_flush(g->w);
  }
}

static void flush_tid(gen *g, uint32_t tid) {
  if (g->n) prof__tw_events(g->w, tid, g->buf, g->n);
  g->n = 0;
}

/* Main thread: per step a data range, then forward/backward with nested
 * layer ranges until the per-step event budget is spent. */
static int write_trace(const char *path, uint64_t events) {
  char err[256];
  prof__kv hdr[] = {{"program", "bench_html"}, {"pid", "1"}, {"clock", "CLOCK_MONOTONIC"}};
  gen *g = calloc(1, sizeof *g);
  if (!g || !(g->w = prof__tw_open(path, hdr, 3, err))) return -1;
  for (uint32_t i = 0; i < NNAMES; i++) prof__tw_string(g->w, i + 1, names[i], strlen(names[i]));
  uint64_t per_step = events / STEPS, ts = 1000;
  for (uint64_t s = 0; s < STEPS; s++) {
    uint64_t start = g->emitted;
    put(g, 1, ts, PROF_EV_STEP_BEGIN, 0, 0, s);
    put(g, 1, ts, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_DATA, 0);
    ts += 200000;
    put(g, 1, ts, PROF_EV_RANGE_END, 1, 0, 0);
    for (uint32_t top = 2; g->emitted - start + 8 < per_step; top = top == 2 ? 3 : 2) {
      put(g, 1, ts, PROF_EV_RANGE_BEGIN, top, PROF_CAT_COMPUTE, 0);
      for (int k = 0; k < 8 && g->emitted - start + 6 < per_step; k++) {
        uint32_t n = 5 + (uint32_t)(k % 5);
        put(g, 1, ts, PROF_EV_RANGE_BEGIN, n, PROF_CAT_COMPUTE, 0);
        ts += 1000 + 37 * (uint64_t)k;
        put(g, 1, ts, PROF_EV_RANGE_END, n, 0, 0);
      }
      ts += 500;
      put(g, 1, ts, PROF_EV_RANGE_END, top, 0, 0);
    }
    put(g, 1, ts, PROF_EV_COUNTER, 13, 0, prof__f64_bits(1.0 / (double)(s + 1)));
    ts += 1000;
    put(g, 1, ts, PROF_EV_STEP_END, 0, 0, s);
    ts += 100;
  }
  flush_tid(g, 1);
  prof__tw_thread(g->w, 1, "main", 0, 0);
  int rc = prof__tw_close(g->w, NULL, 0);
  printf("# trace: %llu events\n", (unsigned long long)g->emitted);
  free(g);
  return rc;
}

/* A stream that only counts bytes. */
static ssize_t count_write(void *c, const char *buf, size_t n) {
  (void)buf;
  *(uint64_t *)c += n;
  return (ssize_t)n;
}

static FILE *counter(uint64_t *bytes) {
  cookie_io_functions_t io = {.write = count_write};
  *bytes = 0;
  FILE *f = fopencookie(bytes, "w", io);
  if (f) setvbuf(f, NULL, _IOFBF, 1 << 16);
  return f;
}

static double timed_report(prof__an *an, const char *fmt, uint64_t *bytes) {
  FILE *f = counter(bytes);
  uint64_t t0 = bench_now_ns();
  prof__report_write(an, fmt, f);
  fclose(f);
  return (double)(bench_now_ns() - t0) / 1e9;
}

int main(int argc, char **argv) {
  uint64_t events = 10000000;
  int keep = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--events") && i + 1 < argc) events = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--keep")) keep = 1;
  }
  char dir[512], path[600], gz[640], err[256];
  if (bench_tmpdir(dir, sizeof dir)) return 0;
  snprintf(path, sizeof path, "%s/big.mlpt", dir);
  snprintf(gz, sizeof gz, "%s/big.chrome.json.gz", dir);
  if (write_trace(path, events)) {
    printf("# cannot write the trace\n");
    return 0;
  }
  prof__an *an;
  uint64_t t0 = bench_now_ns();
  if (prof__an_run_opts(&an, path, 1, err)) {
    printf("# analysis failed: %s\n", err);
    return 0;
  }
  double t_an = (double)(bench_now_ns() - t0) / 1e9;
  uint64_t hb, jb, cb;
  double t_html = timed_report(an, "html", &hb), t_json = timed_report(an, "json", &jb);
  FILE *f = counter(&cb);
  t0 = bench_now_ns();
  prof__export_chrome(an, f);
  fclose(f);
  double t_chrome = (double)(bench_now_ns() - t0) / 1e9;
  f = prof__gz_open(gz, err);
  double t_gz = 0;
  struct stat st = {0};
  if (f) {
    t0 = bench_now_ns();
    prof__export_chrome(an, f);
    fclose(f);
    t_gz = (double)(bench_now_ns() - t0) / 1e9;
    stat(gz, &st);
  }
  double ev = (double)an->events;
  bench_header();
  bench_line("analysis (s)", t_an, t_an, "s");
  bench_line("html report time vs json (s)", t_html, t_json, "s");
  bench_line("html report size vs json (KiB)", (double)hb / 1024, (double)jb / 1024, "KiB");
  bench_line("chrome export (MB/s)", (double)cb / 1e6 / t_chrome, (double)cb / 1e6 / t_chrome, "MB/s");
  bench_line("chrome export (Mevents/s)", ev / 1e6 / t_chrome, ev / 1e6 / t_chrome, "Mev/s");
  bench_line("chrome bytes/event vs torch.profiler", (double)cb / ev, TORCH_BYTES_PER_EVENT, "B/event");
  if (t_gz > 0) {
    bench_line("chrome .json.gz time vs plain (s)", t_gz, t_chrome, "s");
    bench_line("chrome .json.gz bytes/event vs plain", (double)st.st_size / ev, (double)cb / ev, "B/event");
  }
  prof__an_free(an);
  if (!keep) bench_rmdir(dir);
  else printf("# kept %s\n", dir);
  return 0;
}
