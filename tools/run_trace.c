/* run_trace.c — `mlprof run`: the output folder check before the program
 * starts, and finding the traces it wrote after it ended. See run_trace.h.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "run_trace.h"
#include "trace/outfile.h"
#include "trace/tracename.h"

int run_folder_refused(const char *trace) {
  char dir[PATH_MAX], err[256];
  const char *slash = strrchr(trace, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == trace) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - trace), trace);
  if (prof__mkdirs(dir, err) == 0) return 0;
  cli_error("run", "%s; the program runs without the profiler", err);
  return 1;
}

uint64_t run_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int run_find_trace(char *trace, size_t n, pid_t pid, uint64_t since_ns, int quiet) {
  char latest[PATH_MAX];
  int count = prof__trace_find(trace, (long)pid, since_ns, latest, sizeof latest);
  if (count == 0) return 0;
  if (count > 1 && !quiet)
    fprintf(stderr, "mlprof: the program wrote %d traces (each image after an exec writes its own); the report is "
            "of the last one, which names the one before it\n", count);
  snprintf(trace, n, "%s", latest);
  return count;
}
