/* workers.h — forked Python workers sampled from the parent (workers.c),
 * driven by the CPU module: started with it, run on its writer hook. */
#ifndef PROF_WORKERS_H
#define PROF_WORKERS_H

#include "trace/trace.h"

/* At CPU module start, after the Python frames were looked for: sample
 * forked workers at `hz` (CPU mode) when Python frames are on and
 * MLPROF_WORKERS is not 0. */
void prof__workers_start(unsigned hz);

/* Writer thread, every cycle (final: the last one): look for new workers,
 * sample those that ran since their last sample, say which ended. */
void prof__workers_cycle(prof__tw *tw, int final);

#endif
