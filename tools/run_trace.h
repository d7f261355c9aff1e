/* run_trace.h — `mlprof run`: where the program's traces may go, and which
 * of them the launcher reports (tools/run_trace.c). */
#ifndef MLPROF_RUN_TRACE_H
#define MLPROF_RUN_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* May the program write `trace`? Creates its folder as the library would
 * and checks that it is the user's own or root's (trace/outfile.h). 0, or 1
 * after one message saying the program runs without the profiler. */
int run_folder_refused(const char *trace);

/* CLOCK_REALTIME now, in ns: taken before the program starts. */
uint64_t run_clock_ns(void);

/* The traces the program `pid` wrote at `trace` or a numbered name after it
 * (trace/tracename.h) since `since_ns`: how many. The latest one's name
 * replaces trace[0..n) (each image after an exec writes its own; the last
 * names the one before it). Says so on stderr when there are several,
 * unless `quiet`. */
int run_find_trace(char *trace, size_t n, pid_t pid, uint64_t since_ns, int quiet);

/* Python programs (tools/run_python.c): put the folder of the
 * sitecustomize.py beside the library `lib` first on PYTHONPATH, so that
 * torch's record_function blocks are recorded as ranges. Nothing when it
 * is missing or MLPROF_TORCH_RANGES=0. */
void run_python_env(const char *lib);

#endif
