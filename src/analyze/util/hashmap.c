/* hashmap.c — the analyzer's hash maps (see hashmap.h). */
#include <stdlib.h>
#include <string.h>

#include "analyze/util/hashmap.h"
#include "trace/hugepage.h"

/* ---- uint32 -> uint32 ------------------------------------------------------ */

static size_t fib_slot(uint64_t key, size_t cap) { return prof__map_slot(key, cap); }

static size_t slot32(uint32_t key, size_t cap) { return fib_slot(key, cap); }

static int grow32(prof__map32 *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  uint64_t *slots = prof__hugepage_calloc(cap * sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; i < m->cap; i++) {
    uint64_t s = m->slots[i];
    if (!s) continue;
    size_t j = slot32((uint32_t)((s >> 32) - 1), cap);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

int prof__map32_put(prof__map32 *m, uint32_t key, uint32_t value) {
  if ((m->count + 1) * 2 > m->cap && grow32(m)) return -1;
  uint64_t want = (uint64_t)key + 1;
  size_t i = slot32(key, m->cap);
  while (m->slots[i] && (m->slots[i] >> 32) != want) i = (i + 1) & (m->cap - 1);
  if (!m->slots[i]) m->count++;
  m->slots[i] = want << 32 | value;
  return 0;
}

void prof__map32_free(prof__map32 *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

void prof__map32_clear(prof__map32 *m, size_t keep) {
  if (m->cap > keep) {
    prof__map32_free(m);
  } else if (m->count) {
    memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->count = 0;
  }
}

/* ---- uint64 -> uint64 sums ------------------------------------------------- */

static size_t mslot(uint64_t k, size_t cap) { return fib_slot(k, cap); }

static int mgrow(prof__u64map *m) {
  size_t cap = m->cap ? m->cap * 2 : 256;
  uint64_t *k = prof__hugepage_calloc(cap * sizeof *k), *v = prof__hugepage_calloc(cap * sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->k[i]) continue;
    size_t s = mslot(m->k[i], cap);
    while (k[s]) s = (s + 1) & (cap - 1);
    k[s] = m->k[i];
    v[s] = m->v[i];
  }
  free(m->k);
  free(m->v);
  m->k = k;
  m->v = v;
  m->cap = cap;
  return 0;
}

uint64_t *prof__u64map_at(prof__u64map *m, uint64_t key) {
  if ((m->n + 1) * 2 > m->cap && mgrow(m) != 0) return NULL;
  uint64_t k = key + 1;
  size_t s = mslot(k, m->cap);
  while (m->k[s] && m->k[s] != k) s = (s + 1) & (m->cap - 1);
  if (!m->k[s]) {
    m->k[s] = k;
    m->n++;
  }
  return &m->v[s];
}

int prof__u64map_add(prof__u64map *m, uint64_t key, uint64_t add) {
  uint64_t *v = prof__u64map_at(m, key);
  if (!v) return -1;
  *v += add;
  return 0;
}

uint64_t prof__u64map_get(const prof__u64map *m, uint64_t key) {
  if (!m->cap) return 0;
  uint64_t k = key + 1;
  size_t s = mslot(k, m->cap);
  while (m->k[s]) {
    if (m->k[s] == k) return m->v[s];
    s = (s + 1) & (m->cap - 1);
  }
  return 0;
}

void prof__u64map_del(prof__u64map *m, uint64_t key) {
  if (!m->cap) return;
  size_t mask = m->cap - 1, s = mslot(key + 1, m->cap);
  while (m->k[s] && m->k[s] != key + 1) s = (s + 1) & mask;
  if (!m->k[s]) return;
  /* Backward shift: entries after the hole in its run move into it when
   * their home slot is not between the hole and them, so every key stays
   * reachable from its home without tombstones. */
  size_t hole = s;
  for (size_t j = (s + 1) & mask; m->k[j]; j = (j + 1) & mask) {
    if (((j - mslot(m->k[j], m->cap)) & mask) < ((j - hole) & mask)) continue;
    m->k[hole] = m->k[j];
    m->v[hole] = m->v[j];
    hole = j;
  }
  m->k[hole] = m->v[hole] = 0;
  m->n--;
}

void prof__u64map_free(prof__u64map *m) {
  free(m->k);
  free(m->v);
  memset(m, 0, sizeof *m);
}
