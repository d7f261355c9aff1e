/* startup_prog.c — the trivial linked program of bench_startup: one step
 * (prof_init, prof_start, prof_stop) and exit. Built twice: linked with
 * libmlprof, and with -DMLPROF_DISABLED (every prof_* call compiled out, no
 * library), the baseline its start-up and exit cost is measured against. */
#include <mlprof.h>

int main(void) {
  if (prof_init(NULL) == 0) {
    prof_start();
    prof_stop();
  }
  return 0;
}
