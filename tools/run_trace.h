/* run_trace.h — `mlprof run`: whether the program's traces may go where
 * they are to go (tools/run_trace.c). */
#ifndef MLPROF_RUN_TRACE_H
#define MLPROF_RUN_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* May the program write `trace`? Creates its folder as the library would
 * and checks that it is the user's own or root's (trace/outfile.h). 0, or 1
 * after one message saying the program runs without the profiler. */
int run_folder_refused(const char *trace);

/* Python programs (tools/run_python.c): put the folder of the
 * sitecustomize.py beside the library `lib` first on PYTHONPATH, so that
 * torch's record_function blocks are recorded as ranges. Nothing when it
 * is missing or MLPROF_TORCH_RANGES=0. */
void run_python_env(const char *lib);

#endif
