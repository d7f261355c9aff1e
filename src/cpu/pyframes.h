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
 * count; 0 when the child is gone or runs no Python (now: an exiting
 * worker has finalized its interpreter); -1 when the kernel refuses to let
 * this process read it (ptrace rules). */
int prof__pyframes_remote(pid_t pid, uintptr_t *tags, int max);

/* A Python frame of a child, described from its memory. */
typedef struct prof__pyframe_desc {
  uint64_t key; /* the tagged address */
  char *file, *name; /* malloc'd */
  int line;
} prof__pyframe_desc;

/* The sampling thread of cpu/workers.c (one thread), right after
 * prof__pyframes_remote, while the child surely lives: describe from the
 * child's memory the tagged addresses of tags[0..n) that this function
 * has not described before. Returns their count and *out, a malloc'd
 * array (NULL when the count is 0) that prof__pyframes_remote_resolve or
 * prof__pyframes_desc_free takes over. A short-lived worker (a
 * multiprocessing Pool's) is gone when the writer comes to resolve its
 * frames: without this, those frames stayed unknown and the report named
 * their callers instead. */
int prof__pyframes_remote_describe(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc **out);

/* The sampling thread, as it ends: forget what it described. */
void prof__pyframes_remote_describe_end(void);

/* Free n descriptions and their array. */
void prof__pyframes_desc_free(prof__pyframe_desc *d, int n);

/* Writer thread: write the descriptions d[0..nd) (taking them over) and
 * the tagged addresses of tags[0..n) not seen yet, resolved from the
 * child's memory if it still lives, to tw as PROF_CHUNK_PYFRAMES; the scan
 * of the stack table then leaves them alone. */
void prof__pyframes_remote_resolve(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc *d, int nd,
                                   prof__tw *tw);

#endif
