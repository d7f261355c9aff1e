/* bench_nvtx.c — cost of NVTX calls captured by libmlprof, against mlprof's
 * own API in the same run.
 *
 * The program is linked with the shared libmlprof and annotated with NVTX
 * (header-only); prof_start points NVTX at libmlprof, as for any linked
 * program. Each line compares one NVTX call pattern with the native call
 * that records the same events (prof_range_push/pop, prof_mark), measured
 * in alternating rounds; medians are compared. ASCII messages are interned
 * by content on every call (a caller may reuse its buffer), registered
 * strings are not: the registered line shows the floor.
 *
 *   bench_nvtx [--calls N] [--rounds N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "bench_util.h"
#include "mlprof.h"

static nvtxDomainHandle_t dom;
static nvtxStringHandle_t reg;

static double time_loop(int what, long n) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) {
    switch (what) {
    case 0: prof_range_push("bench"), prof_range_pop(); break;
    case 1: nvtxRangePushA("bench"), nvtxRangePop(); break;
    case 2: nvtxDomainRangePushEx(dom, &a), nvtxDomainRangePop(dom); break;
    case 3: prof_mark("bench"); break;
    case 4: nvtxMarkA("bench"); break;
    case 5: nvtxRangeEnd(nvtxRangeStartA("bench")); break;
    default: break;
    }
  }
  return (double)(bench_now_ns() - t0) / (double)n;
}

int main(int argc, char **argv) {
  long calls = 20000;
  int rounds = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--calls")) calls = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
  }
  if (calls < 1000) calls = 1000;
  if (rounds < 1 || rounds > 1000) rounds = 21;
  char dir[512];
  if (bench_tmpdir(dir, sizeof dir) != 0) { perror("bench_nvtx: mkdtemp"); return 0; }
  prof_config cfg = prof_config_default();
  cfg.output = dir;
  cfg.report = 0;
  if (prof_init(&cfg) != 0 || prof_start() != 0) {
    printf("bench_nvtx: profiler not running; nothing measured\n");
    bench_rmdir(dir);
    return 0;
  }
  dom = nvtxDomainCreateA("bench");
  reg = nvtxDomainRegisterStringA(dom, "bench");
  double *v[6];
  for (int w = 0; w < 6; w++) v[w] = calloc((size_t)rounds, sizeof(double));
  for (int w = 0; w < 6; w++) time_loop(w, calls), usleep(20000); /* warm-up: first use of each name */
  for (int r = 0; r < rounds; r++) {
    for (int w = 0; w < 6; w++) {
      v[w][r] = time_loop(w, calls);
      usleep(20000); /* let the writer drain the ring: a dropped event would be cheaper */
    }
  }
  prof_stats st = {.size = sizeof st};
  prof_stats_get(&st);
  prof_stop();
  prof_shutdown();
  bench_rmdir(dir);
  double m[6];
  for (int w = 0; w < 6; w++) m[w] = bench_median(v[w], (size_t)rounds), free(v[w]);
  bench_header();
  bench_line("nvtx_push_pop_ascii_ns", m[1], m[0], "ns/pair vs prof_range_push/pop");
  bench_line("nvtx_push_pop_registered_ns", m[2], m[0], "ns/pair vs prof_range_push/pop");
  bench_line("nvtx_mark_ascii_ns", m[4], m[3], "ns/call vs prof_mark");
  bench_line("nvtx_start_end_ns", m[5], m[0], "ns/pair vs prof_range_push/pop");
  printf("(%d rounds of %ld calls, median; events lost: %llu)\n", rounds, calls,
         (unsigned long long)st.events_lost);
  return 0;
}
