/* pyframes.h — Python frames in CPU samples (pyframes.c): the sampling
 * handler's merge of the interrupted thread's Python frames into its
 * native stack, and the writer's resolution of the recorded code objects
 * into PROF_CHUNK_PYFRAMES. */
#ifndef PROF_PYFRAMES_H
#define PROF_PYFRAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"

/* Look for a CPython this build knows in the process (dlsym), at sampler
 * start on the thread of prof_init; without one the merge does nothing.
 * Not for signal handlers nor the writer thread (dlsym takes the loader's
 * lock, which dlclose holds while waiting for the writer). */
void prof__pyframes_init(void);

/* 1 once Python frames are being captured. */
int prof__pyframes_active(void);

/* Signal handler: rewrite pcs[0..depth) (innermost first) so each native
 * frame of the evaluation loop is replaced by the Python frames it runs,
 * as tagged addresses (PROF_PYFRAME_TAG in analyze/symbols.h). Returns the
 * new depth (<= max). Async-signal-safe: plain loads of the calling
 * thread's own frames, process_vm_readv for any other memory. */
int prof__pyframes_merge(uintptr_t *pcs, int depth, int max);

/* Writer thread, every cycle: resolve the Python frames of the stacks
 * interned since the last cycle and write them as PROF_CHUNK_PYFRAMES;
 * with final, add the counts to the trace's metadata. */
void prof__pyframes_cycle(prof__tw *tw, int final);

/* The Python frames of the main thread of `pid`, a fork of this process
 * that did not exec, as tagged addresses (innermost first, at most max).
 * Any thread; reads the child with process_vm_readv only. Returns the
 * count; 0 when the child cannot be read (gone, or reading it is not
 * allowed) or runs no Python. */
int prof__pyframes_remote(pid_t pid, uintptr_t *tags, int max);

/* Writer thread: resolve the tagged addresses of such a stack from the
 * child's memory (those not seen yet) and write them to tw as
 * PROF_CHUNK_PYFRAMES; the scan of the stack table then leaves them alone. */
void prof__pyframes_remote_resolve(pid_t pid, const uintptr_t *tags, int n, prof__tw *tw);

#endif
