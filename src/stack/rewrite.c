/* rewrite.c — the rewrite a producer may install for captured stacks
 * (stack.h): the CPU module installs the merge of Python frames
 * (cpu/pyframes.c) when it found an interpreter, so the stacks of memory
 * allocations carry the Python lines that made them, as CPU samples do.
 * One function pointer, set and read atomically. */
#include "stack/stack.h"

static prof__stack_rewrite_fn rewrite_fn;

void prof__stack_set_rewrite(prof__stack_rewrite_fn fn) { __atomic_store_n(&rewrite_fn, fn, __ATOMIC_RELEASE); }

int prof__stack_rewrite(uintptr_t *pcs, int depth, int max) {
  prof__stack_rewrite_fn fn = __atomic_load_n(&rewrite_fn, __ATOMIC_ACQUIRE);
  return fn && depth > 0 ? fn(pcs, depth, max) : depth;
}
