/* producers.c — the assembly of libmlprof: the producers built into the
 * library (producers.def, in start order) and the hook that writes the
 * reports after the trace closes (the reader's prof__report_files). The
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

const prof__report_fn prof__report_hook = prof__report_files;
