/* run_trace.c — `mlprof run`: the output folder check before the program
 * starts (the launcher learns the traces it wrote from the library:
 * run_reports.c). See run_trace.h.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli_base.h"
#include "run_trace.h"
#include "trace/outfile.h"
#include "trace/tracename.h"

int run_folder_refused(const char *trace) {
  char dir[PATH_MAX], err[PROF_ERR_MAX];
  prof__trace_folder(trace, dir, sizeof dir);
  if (prof__mkdirs(dir, err) == 0) return 0;
  cli_error("run", "%s; the program runs without the profiler", err);
  return 1;
}
