/* producers.c — the assembly of libmlprof: the producers built into the
 * library (producers.def, in start order) and the hook that writes the
 * reports in-process after the trace closes (the reader's
 * prof__report_files_by; only when the mlprof command cannot, reports.h). The
 * core sees both through core/producer.h; this room is the only one that
 * includes both the recorder and the reader.
 */
#include "analyze/analyze.h"
#include "core/producer.h"

#define PROF_MODULE(sym) extern const prof__module sym;
#include "producers.def"
#undef PROF_MODULE

const prof__module *const prof__producers[] = {
#define PROF_MODULE(sym) &sym,
#include "producers.def"
#undef PROF_MODULE
    NULL};

/* The fallback path: the reports say they were written in-process. */
static int report_in_process(const char *trace_path, char *err) {
  return prof__report_files_by(trace_path, "in-process", err);
}

const prof__report_fn prof__report_hook = report_in_process;
