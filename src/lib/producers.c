/* producers.c — the assembly of libmlprof, and prof_init: the producers
 * built into the library (producers.def, in start order) and the hook that
 * writes the reports in-process after the trace closes (the reader's
 * prof__report_files_by; only when the mlprof command cannot, reports.h).
 * prof_init hands both to the core (core/assembly.h), so whatever starts a
 * session (the program, the preload constructor, a first prof_start) links
 * them, statically too. This room is the only one that includes both the
 * recorder and the reader.
 */
#include "analyze/analyze.h"
#include "core/assembly.h"

#define PROF_MODULE(sym) extern const prof__module sym;
#include "producers.def"
#undef PROF_MODULE

static const prof__module *const producers[] = {
#define PROF_MODULE(sym) &sym,
#include "producers.def"
#undef PROF_MODULE
    NULL};

/* The fallback path: the reports say they were written in-process. */
static int report_in_process(const char *trace_path, char *err) {
  return prof__report_files_by(trace_path, "in-process", err);
}

static const prof__assembly assembly = {.producers = producers, .report_in_process = report_in_process};

PROF_API int prof_init(const prof_config *c) { return prof__session_init(c, &assembly); }
