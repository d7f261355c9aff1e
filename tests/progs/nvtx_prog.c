/* nvtx_prog.c — a program annotated only with NVTX (header-only, -ldl):
 * run bare, under `mlprof run`, or (built with NVTX_PROG_LINKED) linked
 * with the shared libmlprof, which it starts itself after a first NVTX call
 * and which then needs no environment variable. argv[1]: the trace path
 * (linked build only).
 */
#include <stdio.h>

#include "nvtx_work.h"
#ifdef NVTX_PROG_LINKED
#include "mlprof.h"
#endif

int main(int argc, char **argv) {
#ifdef NVTX_PROG_LINKED
  /* NVTX first, profiler later: this first call initialises NVTX, which
   * looks for its tool now (the library names itself at load time). */
  nvtxMarkA("before prof_init");
  prof_config cfg = prof_config_default();
  cfg.output = argc > 1 ? argv[1] : "nvtx_linked.mlpt";
  cfg.report = 0;
  if (prof_init(&cfg) != 0 || prof_start() != 0) return 2;
#else
  (void)argc, (void)argv;
#endif
  int rc = nvtx_work();
#ifdef NVTX_PROG_LINKED
  prof_stop();
  prof_shutdown();
#endif
  printf("nvtx_prog done\n");
  return rc;
}
