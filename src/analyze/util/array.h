/* array.h — the analyzer's one growable-array helper: make room in a
 * heap array held as (pointer, count, capacity), doubling the capacity.
 * New slots are zeroed. Used by the trace model, the sections and the
 * exporters instead of each keeping its own realloc loop.
 */
#ifndef MLPROF_ANALYZE_ARRAY_H
#define MLPROF_ANALYZE_ARRAY_H

#include <stddef.h>

/* Room for `need` elements of `elem` bytes in the array `p` of capacity
 * *cap (at least 4 once grown: many arrays, such as per-thread range stacks,
 * stay small). Returns the array (moved or not; *cap updated), or NULL when memory
 * runs out, with `p` still valid and *cap unchanged. */
void *prof__arr_room(void *p, size_t *cap, size_t need, size_t elem);

/* The same on the pointer *arr in place: 0, or -1 (nothing changed).
 * Inline when there is room already: callers ask for each record, and the
 * call alone was 3 % of the analysis. */
int prof__arr_grow_slow(void **arr, size_t *cap, size_t need, size_t elem);
static inline int prof__arr_grow(void **arr, size_t *cap, size_t need, size_t elem) {
  return need <= *cap ? 0 : prof__arr_grow_slow(arr, cap, need, elem);
}

#endif
