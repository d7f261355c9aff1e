/* assembly.h — the one interface between the core and the assembly
 * (src/lib), which builds libmlprof from the core, the producers and the
 * reader. prof_init lives in the assembly: it hands the core the producers
 * of this build and the reader's report writer, explicitly, each time it
 * starts the session. The core declares nothing the assembly defines.
 */
#ifndef PROF_ASSEMBLY_H
#define PROF_ASSEMBLY_H

#include "mlprof.h"
#include "producer.h"
#include "reports.h"

typedef struct prof__assembly {
  /* The producers built into the library, in start order, NULL-terminated
   * (src/lib/producers.def); MLPROF_MODULES selects among them. */
  const prof__module *const *producers;
  /* Writes a closed trace's reports in this process: the fallback when the
   * mlprof command cannot (reports.h). NULL: this build has no analyzer. */
  prof__report_fn report_in_process;
} prof__assembly;

/* prof_init's work (include/mlprof.h) with the assembly `a`; the first call
 * that starts a session takes its producers (later ones keep them). */
int prof__session_init(const prof_config *c, const prof__assembly *a);

#endif /* PROF_ASSEMBLY_H */
