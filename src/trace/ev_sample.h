/* ev_sample.h — the samples family of the event contract: the SAMPLE event
 * the CPU sampler writes (its call stacks travel in STACKS chunks,
 * trace/rec_stacks.h). The sampler (src/cpu) and the functions and graph
 * sections compile this one definition. Values are part of the format.
 *
 *   SAMPLE  name: stack id (0: none), a: innermost range name id on the
 *           sampled thread (low 32 bits; 0: none), b: weight (ns of CPU or
 *           wall time; 0 counts as 1), aux: PROF_SAMPLE_CPU or _WALL
 */
#ifndef PROF_EV_SAMPLE_H
#define PROF_EV_SAMPLE_H

#include <stdint.h>

#include "trace/event.h"

/* What a sample's weight measures (SAMPLE aux). */
enum { PROF_SAMPLE_CPU = 0, PROF_SAMPLE_WALL = 1, PROF_SAMPLE_NMODES = 2 };

/* The sample's clock as an index (0 CPU, 1 wall: anything non-zero). */
static inline int prof__ev_sample_mode(const prof__event *ev) { return ev->aux ? PROF_SAMPLE_WALL : PROF_SAMPLE_CPU; }
/* The innermost range the sampled thread was in (0: none). */
static inline uint32_t prof__ev_sample_range(const prof__event *ev) { return (uint32_t)(ev->a & 0xffffffffu); }
/* The weight, at least 1. */
static inline uint64_t prof__ev_sample_weight(const prof__event *ev) { return ev->b ? ev->b : 1; }

/* Forked Python workers sampled by the parent (src/cpu/workers.c): their
 * samples are CPU samples on a thread named PROF_WORKER_THREAD (the
 * worker's pid) in the range PROF_WORKER_RANGE; META pairs at the end
 * count the workers seen, their samples, samples dropped (full queue) and
 * reads of a worker's memory the kernel refused (ptrace rules). */
#define PROF_WORKER_THREAD "forked worker"
#define PROF_WORKER_RANGE "[forked worker]"
#define PROF_META_WORKERS "cpu.workers"
#define PROF_META_WORKER_SAMPLES "cpu.worker_samples"
#define PROF_META_WORKER_DROPPED "cpu.worker_samples_dropped"
#define PROF_META_WORKER_REFUSED "cpu.worker_reads_refused"

#endif /* PROF_EV_SAMPLE_H */
