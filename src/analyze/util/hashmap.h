/* hashmap.h — the analyzer's hash maps, open addressing with linear
 * probing and power-of-two tables (keys are stored +1 so that 0 marks an
 * empty slot):
 *   prof__map32   uint32 -> uint32 (ids to indices: names, ranges, kernels)
 *   prof__u64map  uint64 -> uint64 sums (weights keyed by packed ids)
 * Maps start zeroed ({0}); they allocate as they grow and are freed with
 * their _free function.
 */
#ifndef MLPROF_ANALYZE_HASHMAP_H
#define MLPROF_ANALYZE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct prof__map32 {
  uint64_t *slots; /* key+1 in the high half, value in the low half */
  size_t cap, count;
} prof__map32;

/* Fibonacci hashing: the top bits of key x 2^64/phi pick the slot, so every
 * bit of the key counts (middle bits would ignore a key's high half, and
 * keys that differ only there, such as id << 32 | name, would all probe
 * the same run of slots). Tables hold at least 64 slots. */
static inline size_t prof__map_slot(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll((unsigned long long)cap)));
}

/* The value of `key`, or UINT32_MAX when absent. Inline: the analyzer's
 * per-event paths (threads, names) look up one id per event. */
static inline uint32_t prof__map32_get(const prof__map32 *m, uint32_t key) {
  if (!m->cap) return UINT32_MAX;
  uint64_t want = (uint64_t)key + 1;
  for (size_t i = prof__map_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    uint64_t s = m->slots[i];
    if (!s) return UINT32_MAX;
    if ((s >> 32) == want) return (uint32_t)s;
  }
}
/* Set the value of `key`. 0, or -1 (no memory; the map is unchanged). */
int prof__map32_put(prof__map32 *m, uint32_t key, uint32_t value);
void prof__map32_free(prof__map32 *m);
/* Empty the map; its table (up to `keep` slots) stays for reuse, a larger
 * one is freed. */
void prof__map32_clear(prof__map32 *m, size_t keep);

typedef struct prof__u64map {
  uint64_t *k, *v; /* key stored + 1; 0 = empty */
  size_t cap, n;
} prof__u64map;

/* Add `add` to the value of `key` (created at 0). Returns 0 or -1 (no memory). */
int prof__u64map_add(prof__u64map *m, uint64_t key, uint64_t add);
/* The value of `key` to read and change in place (created at 0: a new key
 * reads 0), valid until the next insertion; NULL without memory. One
 * lookup where a get and an add took two. */
uint64_t *prof__u64map_at(prof__u64map *m, uint64_t key);
uint64_t prof__u64map_get(const prof__u64map *m, uint64_t key);
/* Remove `key` (nothing when absent), so a map of what is open stays small. */
void prof__u64map_del(prof__u64map *m, uint64_t key);
void prof__u64map_free(prof__u64map *m);

#endif
