/* guard.c — the "inside the profiler" guard: a per-thread depth that marks
 * the calling thread's allocations as the profiler's own, so memory
 * profiling (src/mem) neither counts nor records them. The core's
 * allocating paths (writer thread, thread registration, name table) and
 * producers that allocate beside the host (CUPTI buffers) bracket their work
 * with it.
 */
#include "session.h"

__thread int prof__guard_depth __attribute__((tls_model("initial-exec")));

void prof__guard_begin(void) { prof__guard_depth++; }

void prof__guard_end(void) {
  if (prof__guard_depth > 0) prof__guard_depth--;
}
