/* ev_cpuctr.h — the per-thread CPU counter family of the event contract:
 * COUNTER events the CPU module (src/cpu/counters.c) writes for each thread
 * and that the counters and functions sections read. Values are part of
 * the format.
 *
 *   COUNTER  name: "cpuctr/<counter>" (a string id), a: the thread's
 *            cumulative value as double bits, on the thread it measures;
 *            cat: PROF_CPUCTR_CAT_BOUNDARY for the step thread's CPU clock
 *            read by the step hook right before STEP_BEGIN and right after
 *            STEP_END (0: the writer's periodic reading)
 */
#ifndef PROF_EV_CPUCTR_H
#define PROF_EV_CPUCTR_H

#define PROF_CPUCTR_PREFIX "cpuctr/"
#define PROF_CPUCTR_CPU_NS PROF_CPUCTR_PREFIX "cpu_ns"             /* thread CPU time, ns */
#define PROF_CPUCTR_PAGE_FAULTS PROF_CPUCTR_PREFIX "page_faults"
#define PROF_CPUCTR_CTX_SWITCHES PROF_CPUCTR_PREFIX "ctx_switches"
#define PROF_CPUCTR_RUNQ_NS PROF_CPUCTR_PREFIX "runq_ns"           /* time runnable, waiting for a core */

#define PROF_CPUCTR_CAT_BOUNDARY 1u

#endif /* PROF_EV_CPUCTR_H */
