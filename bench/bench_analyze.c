/* bench_analyze.c — analyzer speed and memory on large traces.
 *
 * Writes a synthetic trace with the internal trace writer: a fixed number of
 * steps on a main thread (data loading, a forward and a backward pass over
 * repeated blocks, an all-reduce, the optimizer, a loss counter) and
 * loader threads producing read/decode/augment/collate ranges, a few dozen
 * names in all. Events per step grow with the trace size; the number of
 * steps does not, so the analyzer's memory should not grow either.
 * Each analysis runs in a child process: its time gives events/s and
 * wait4() gives its peak RSS. Two sizes are run: --events N (default 50 M)
 * and N/10. Each trace is analysed serially (MLPROF_ANALYZE_THREADS=1) and
 * with the decode thread (=2), alternating, --reps times each (default 3):
 * the best time of each mode gives its events/s, so the parallel line's
 * baseline is the serial analyzer of the same run.
 *
 * The events go out in chunks of --chunk-kb KiB (default 64), as the
 * library's writer writes them (core/bgwriter.c flushes at 64 KiB). The
 * large trace is also written in 8 MiB chunks, the format's largest (what
 * this bench wrote before), and analysed the same way: a whole chunk is
 * decompressed at once, so large chunks make the decode thread bursty and
 * the analysing thread wait (the last lines compare the two).
 *
 *   bench_analyze [--events N] [--steps N] [--threads N] [--reps N]
 *                 [--chunk-kb N] [--keep]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "bench_util.h"
#include "mlprof.h"
#include "trace/trace.h"

enum { BLOCKS = 8, BUF_EVENTS = 4096, MAX_THREADS = 8 };

/* Names: ids are positions in this table + 1. */
static const char *names[] = {
  "data", "shuffle", "gather", "augment", "forward", "backward", "allreduce", "optimizer",
  "loss", "attn", "mlp", "attn_grad", "mlp_grad", "read", "decode", "collate",
  "block0", "block1", "block2", "block3", "block4", "block5", "block6", "block7",
  "block0_grad", "block1_grad", "block2_grad", "block3_grad", "block4_grad",
  "block5_grad", "block6_grad", "block7_grad", "queue_depth"};
enum {
  N_DATA = 1, N_SHUFFLE, N_GATHER, N_AUGMENT, N_FORWARD, N_BACKWARD, N_ALLREDUCE, N_OPTIM,
  N_LOSS, N_ATTN, N_MLP, N_ATTN_G, N_MLP_G, N_READ, N_DECODE, N_COLLATE, N_BLOCK0,
  N_BLOCK0_G = N_BLOCK0 + BLOCKS, N_QDEPTH = N_BLOCK0_G + BLOCKS
};

typedef struct gen {
  prof__tw *w;
  uint32_t tid;
  uint64_t ts, emitted;
  prof__event buf[BUF_EVENTS];
  size_t n;
  int failed;
} gen;

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(uint64_t lo, uint64_t hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + rng % (hi - lo + 1);
}

/* Pending event bytes that make a chunk (--chunk-kb). */
static size_t chunk_bytes = 64u << 10;
#define BIG_CHUNK_BYTES (8u << 20)

static void gen_flush(gen *g) {
  if (g->n && prof__tw_events(g->w, g->tid, g->buf, g->n) != 0) g->failed = 1;
  g->n = 0;
  if (prof__tw_pending(g->w) >= chunk_bytes && prof__tw_flush(g->w) != 0) g->failed = 1;
}

static void emit(gen *g, int type, int cat, uint32_t name, uint64_t a) {
  prof__event *e = &g->buf[g->n++];
  memset(e, 0, sizeof *e);
  e->ts = g->ts;
  e->type = (uint8_t)type;
  e->cat = (uint8_t)cat;
  e->name = name;
  e->a = a;
  g->emitted++;
  if (g->n == BUF_EVENTS) gen_flush(g);
}

static void leaf(gen *g, uint32_t name, int cat, uint64_t lo_ns, uint64_t hi_ns) {
  emit(g, PROF_EV_RANGE_BEGIN, cat, name, 0);
  g->ts += rnd(lo_ns, hi_ns);
  emit(g, PROF_EV_RANGE_END, cat, name, 0);
  g->ts += rnd(20, 200);
}

static void open_r(gen *g, uint32_t name, int cat) {
  emit(g, PROF_EV_RANGE_BEGIN, cat, name, 0);
  g->ts += rnd(20, 100);
}

static void close_r(gen *g, uint32_t name, int cat) {
  emit(g, PROF_EV_RANGE_END, cat, name, 0);
  g->ts += rnd(20, 100);
}

/* One training step of the main thread with `layers` forward/backward blocks. */
static void main_step(gen *g, uint64_t step, uint64_t layers) {
  emit(g, PROF_EV_STEP_BEGIN, 0, 0, step);
  open_r(g, N_DATA, PROF_CAT_DATA);
  leaf(g, N_SHUFFLE, PROF_CAT_DATA, 500, 2000);
  leaf(g, N_GATHER, PROF_CAT_DATA, 2000, 8000);
  leaf(g, N_AUGMENT, PROF_CAT_DATA, 3000, 12000);
  close_r(g, N_DATA, PROF_CAT_DATA);
  open_r(g, N_FORWARD, PROF_CAT_COMPUTE);
  for (uint64_t l = 0; l < layers; l++) {
    open_r(g, (uint32_t)(N_BLOCK0 + l % BLOCKS), PROF_CAT_COMPUTE);
    leaf(g, N_ATTN, PROF_CAT_COMPUTE, 5000, 20000);
    leaf(g, N_MLP, PROF_CAT_COMPUTE, 4000, 15000);
    close_r(g, (uint32_t)(N_BLOCK0 + l % BLOCKS), PROF_CAT_COMPUTE);
  }
  close_r(g, N_FORWARD, PROF_CAT_COMPUTE);
  open_r(g, N_BACKWARD, PROF_CAT_COMPUTE);
  for (uint64_t l = layers; l-- > 0;) {
    open_r(g, (uint32_t)(N_BLOCK0_G + l % BLOCKS), PROF_CAT_COMPUTE);
    leaf(g, N_MLP_G, PROF_CAT_COMPUTE, 8000, 30000);
    leaf(g, N_ATTN_G, PROF_CAT_COMPUTE, 10000, 40000);
    close_r(g, (uint32_t)(N_BLOCK0_G + l % BLOCKS), PROF_CAT_COMPUTE);
  }
  close_r(g, N_BACKWARD, PROF_CAT_COMPUTE);
  leaf(g, N_ALLREDUCE, PROF_CAT_COMM, 20000, 90000);
  leaf(g, N_OPTIM, PROF_CAT_COMPUTE, 5000, 20000);
  emit(g, PROF_EV_COUNTER, 0, N_LOSS, prof__f64_bits(2.0 / (1.0 + (double)step * 1e-3)));
  emit(g, PROF_EV_STEP_END, 0, 0, step);
  g->ts += rnd(100, 1000);
}

/* Loader threads catch up with the main thread's clock, `batches` per step. */
static void loader_step(gen *g, uint64_t until_ts, uint64_t batches) {
  for (uint64_t b = 0; b < batches && g->ts < until_ts; b++) {
    leaf(g, N_READ, PROF_CAT_IO, 2000, 20000);
    leaf(g, N_DECODE, PROF_CAT_DATA, 5000, 30000);
    leaf(g, N_AUGMENT, PROF_CAT_DATA, 3000, 12000);
    leaf(g, N_COLLATE, PROF_CAT_DATA, 1000, 5000);
    emit(g, PROF_EV_COUNTER, 0, N_QDEPTH, prof__f64_bits((double)rnd(0, 16)));
  }
  if (g->ts < until_ts) g->ts = until_ts;
}

/* Write a trace of about `events` events; returns events written or 0. */
static uint64_t write_trace(const char *path, uint64_t events, uint64_t steps, int threads) {
  char err[256];
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  prof__kv kv[] = {{"program", "bench_analyze"}, {"pid", pid}, {"version", MLPROF_VERSION_STRING}};
  prof__tw *w = prof__tw_open(path, kv, 3, err);
  if (!w) { printf("bench_analyze: %s\n", err); return 0; }
  for (uint32_t i = 0; i < sizeof names / sizeof names[0]; i++)
    prof__tw_string(w, i + 1, names[i], strlen(names[i]));
  static gen g[MAX_THREADS];
  for (int t = 0; t < threads; t++) {
    memset(&g[t], 0, sizeof g[t]);
    g[t].w = w;
    g[t].tid = (uint32_t)(t + 1);
    g[t].ts = 1000000000ull;
  }
  /* main step: ~30 fixed events + 12 per layer; loaders: 9 per batch. */
  uint64_t per_step = events / steps, loaders = (uint64_t)(threads - 1);
  uint64_t loader_share = loaders ? per_step / 4 : 0;
  uint64_t layers = per_step > 30 + loader_share ? (per_step - 30 - loader_share) / 12 : 1;
  uint64_t batches = loaders ? loader_share / (9 * loaders) + 1 : 0;
  for (uint64_t s = 0; s < steps; s++) {
    main_step(&g[0], s, layers ? layers : 1);
    for (int t = 1; t < threads; t++) loader_step(&g[t], g[0].ts, batches);
  }
  uint64_t total = 0;
  int failed = 0;
  for (int t = 0; t < threads; t++) {
    gen_flush(&g[t]);
    total += g[t].emitted;
    failed |= g[t].failed;
    prof__tw_thread(w, g[t].tid, t ? "loader" : "main", 0, 1);
  }
  if (prof__tw_close(w, NULL, 0) != 0 || failed) {
    printf("bench_analyze: writing %s failed\n", path);
    return 0;
  }
  return total;
}

typedef struct an_result {
  int rc;
  double secs;
  uint64_t events, steps;
  long maxrss_kb;
} an_result;

/* Analyze in a child with MLPROF_ANALYZE_THREADS=threads; its peak RSS
 * comes from wait4(). */
static an_result analyze_child(const char *path, int threads) {
  an_result res = {.rc = -1};
  int fd[2];
  if (pipe(fd) != 0) return res;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    setenv("MLPROF_ANALYZE_THREADS", threads == 1 ? "1" : "2", 1);
    char err[256] = "";
    prof__an *an = NULL;
    uint64_t t0 = bench_now_ns();
    res.rc = prof__an_run(&an, path, err);
    res.secs = (double)(bench_now_ns() - t0) * 1e-9;
    if (an) {
      res.events = an->events;
      res.steps = an->nsteps;
      prof__an_free(an);
    }
    if (res.rc != 0) fprintf(stderr, "bench_analyze: %s\n", err);
    ssize_t wr = write(fd[1], &res, sizeof res);
    _exit(wr == (ssize_t)sizeof res ? 0 : 1);
  }
  close(fd[1]);
  if (pid < 0) { close(fd[0]); return res; }
  if (read(fd[0], &res, sizeof res) != (ssize_t)sizeof res) res.rc = -1;
  close(fd[0]);
  struct rusage ru;
  int status;
  if (wait4(pid, &status, 0, &ru) == pid) res.maxrss_kb = ru.ru_maxrss;
  return res;
}

typedef struct run_result {
  uint64_t events;
  double write_secs, bytes;
  an_result an;     /* serial: the fastest run */
  an_result par;    /* with the decode thread: the fastest run */
} run_result;

/* Keep the faster of two results (a failed one never wins). */
static void keep_best(an_result *best, const an_result *r, int first) {
  if (first || (r->rc == 0 && (best->rc != 0 || r->secs < best->secs))) {
    long rss = best->maxrss_kb > r->maxrss_kb ? best->maxrss_kb : r->maxrss_kb;
    *best = *r;
    if (!first) best->maxrss_kb = rss; /* peak RSS: the largest of the runs */
  } else if (r->maxrss_kb > best->maxrss_kb) {
    best->maxrss_kb = r->maxrss_kb;
  }
}

static run_result run_size(const char *dir, uint64_t events, uint64_t steps, int threads,
                           int reps, int keep) {
  run_result r = {0};
  char path[1024];
  snprintf(path, sizeof path, "%s/analyze-%llu-%zuk.mlpt", dir, (unsigned long long)events, chunk_bytes >> 10);
  uint64_t t0 = bench_now_ns();
  r.events = write_trace(path, events, steps, threads);
  r.write_secs = (double)(bench_now_ns() - t0) * 1e-9;
  struct stat sb;
  r.bytes = stat(path, &sb) == 0 ? (double)sb.st_size : 0;
  for (int i = 0; r.events && i < reps; i++) {
    an_result s = analyze_child(path, 1), q = analyze_child(path, 2);
    keep_best(&r.an, &s, i == 0);
    keep_best(&r.par, &q, i == 0);
  }
  if (keep) printf("kept %s\n", path);
  else unlink(path);
  return r;
}

static void print_run(const char *label, const run_result *r) {
  printf("  %s: %llu events (%.1f MB, %.2f bytes/event) written in %.2f s; analyzed serially in %.2f s "
         "(rc %d, %llu events, %llu steps), peak RSS %.1f MB; with the decode thread in %.2f s (rc %d, "
         "%llu events), peak RSS %.1f MB\n",
         label, (unsigned long long)r->events, r->bytes / 1e6,
         r->events ? r->bytes / (double)r->events : 0, r->write_secs, r->an.secs, r->an.rc,
         (unsigned long long)r->an.events, (unsigned long long)r->an.steps,
         (double)r->an.maxrss_kb / 1024.0, r->par.secs, r->par.rc, (unsigned long long)r->par.events,
         (double)r->par.maxrss_kb / 1024.0);
}

int main(int argc, char **argv) {
  uint64_t events = 50000000, steps = 20000;
  int threads = 3, keep = 0, reps = 3;
  long chunk_kb = 64;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(argv[i], "--keep")) { keep = 1; continue; }
    if (!strcmp(argv[i], "--events")) events = strtoull(v, NULL, 10);
    else if (!strcmp(argv[i], "--steps")) steps = strtoull(v, NULL, 10);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(v);
    else if (!strcmp(argv[i], "--chunk-kb")) chunk_kb = atol(v);
    i++;
  }
  if (events < 10000) events = 10000;
  if (steps < 10) steps = 10;
  if (steps > events / 1000) steps = events / 1000; /* the small trace keeps >= 100 events a step */
  if (threads < 1 || threads > MAX_THREADS) threads = 3;
  if (reps < 1 || reps > 20) reps = 3;
  if (chunk_kb < 1 || chunk_kb > (long)(BIG_CHUNK_BYTES >> 10)) chunk_kb = 64;
  chunk_bytes = (size_t)chunk_kb << 10;

  char dir[512];
  if (bench_tmpdir(dir, sizeof dir) != 0) { perror("bench_analyze: mkdtemp"); return 0; }
  run_result small = run_size(dir, events / 10, steps, threads, reps, keep);
  run_result big = run_size(dir, events, steps, threads, reps, keep);
  chunk_bytes = BIG_CHUNK_BYTES;
  run_result bigc = run_size(dir, events, steps, threads, reps, keep);
  if (!keep) bench_rmdir(dir);
  printf("chunks of %ld KiB (the last line: of 8 MiB)\n", chunk_kb);
  print_run("small", &small);
  print_run("large", &big);
  print_run("large, 8 MiB chunks", &bigc);
  if (small.an.rc != 0 || big.an.rc != 0 || !small.an.secs || !big.an.secs || small.par.rc != 0 ||
      big.par.rc != 0 || !small.par.secs || !big.par.secs || bigc.an.rc != 0 || bigc.par.rc != 0 || !bigc.par.secs) {
    printf("bench_analyze: analysis failed; no figures\n");
    return 0;
  }
  bench_header();
  bench_line("analyze_events_per_s", (double)big.events / big.par.secs,
             (double)small.events / small.par.secs, "large vs small trace (default: decode thread)");
  bench_line("analyze_peak_rss_mb", (double)big.par.maxrss_kb / 1024.0,
             (double)small.par.maxrss_kb / 1024.0, "large vs small trace (10x events, decode thread)");
  bench_line("analyze_serial_peak_rss_mb", (double)big.an.maxrss_kb / 1024.0,
             (double)small.an.maxrss_kb / 1024.0, "large vs small trace (10x events, serial)");
  bench_line("analyze_par_events_per_s_large", (double)big.events / big.par.secs,
             (double)big.events / big.an.secs, "decode thread vs serial, large trace");
  bench_line("analyze_par_events_per_s_small", (double)small.events / small.par.secs,
             (double)small.events / small.an.secs, "decode thread vs serial, small trace");
  bench_line("analyze_par_peak_rss_mb_large", (double)big.par.maxrss_kb / 1024.0,
             (double)big.an.maxrss_kb / 1024.0, "decode thread vs serial, large trace");
  bench_line("analyze_par_peak_rss_mb_small", (double)small.par.maxrss_kb / 1024.0,
             (double)small.an.maxrss_kb / 1024.0, "decode thread vs serial, small trace");
  bench_line("trace_write_events_per_s", (double)big.events / big.write_secs,
             (double)small.events / small.write_secs, "internal writer, large vs small");
  bench_line("analyze_events_per_s_8mib_chunks", (double)bigc.events / bigc.par.secs,
             (double)big.events / big.par.secs, "large trace, 8 MiB chunks vs --chunk-kb (decode thread)");
  bench_line("analyze_peak_rss_mb_8mib_chunks", (double)bigc.par.maxrss_kb / 1024.0,
             (double)big.par.maxrss_kb / 1024.0, "large trace, 8 MiB chunks vs --chunk-kb (decode thread)");
  return 0;
}
