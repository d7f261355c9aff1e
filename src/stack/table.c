/* table.c — the process-wide, lock-free, preallocated stack table.
 *
 * Stacks are interned into an open-addressing hash of slot -> id; each id
 * owns an entry (hash, depth, offset into one shared address pool). Insertion
 * claims a slot with one compare-and-swap and never blocks: a slot another
 * thread (or the code this signal interrupted) is still filling is waited
 * for a few hundred pauses at most, then probed past, so at worst the same
 * stack gets two ids (harmless: the analysis merges by content). Memory is mapped
 * once (lazily, untouched pages cost nothing) and never grows: a full table
 * returns 0 and the stack is counted as lost. The writer thread emits the
 * entries published since its last call as PROF_CHUNK_STACKS, encoded by
 * the trace's codec (trace/rec_stacks.h).
 */
#include <string.h>
#include <sys/mman.h>

#include "stack.h"
#include "trace/rec_stacks.h"

#define SLOT_BITS 17                       /* 131072 slots */
#define NSLOTS (1u << SLOT_BITS)
#define MAX_STACKS (NSLOTS / 2)            /* load factor <= 0.5 */
#define POOL_PCS (MAX_STACKS * 24u)        /* mean depth 24 at capacity */
#define MAX_PROBES 64
#define SLOT_BUSY 0xFFFFFFFFu              /* claimed, being filled */
#define SLOT_DEAD 0xFFFFFFFEu              /* claimed, gave up (pool full) */

typedef struct entry {
  uint64_t hash;
  uint32_t off;   /* index into pool */
  uint16_t depth;
  uint8_t ready;  /* set (release) when the entry is complete */
  uint8_t pad;
} entry;

static struct {
  uint32_t *slots;   /* 0: empty, else id (or BUSY/DEAD) */
  entry *entries;    /* by id; entry 0 unused */
  uintptr_t *pool;
  uint32_t next_id;  /* next id to hand out (starts at 1) */
  uint32_t pool_used;
  uint64_t lost;
  uint32_t emitted;  /* writer: ids [1, emitted) written */
  int state;         /* 0 not mapped, 1 mapping, 2 ready, -1 failed */
} T;

#if defined(__x86_64__) || defined(__i386__)
#define PROF__PAUSE() __builtin_ia32_pause()
#else
#define PROF__PAUSE() __asm__ volatile("" ::: "memory")
#endif

/* Anonymous memory: no file behind it to run out of blocks or be truncated,
 * so a store never faults with SIGBUS (the only mapped files in the
 * recorder are the live page, reserved before it is mapped, src/live). */
static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Map the table (first use; mmap is async-signal-safe). */
static int table_ready(void) {
  int s = __atomic_load_n(&T.state, __ATOMIC_ACQUIRE);
  if (s == 2) return 1;
  if (s != 0) return 0; /* failed, or another context is mapping: count a loss */
  int expected = 0;
  if (!__atomic_compare_exchange_n(&T.state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return 0;
  T.slots = map(NSLOTS * sizeof(uint32_t));
  T.entries = map((MAX_STACKS + 1) * sizeof(entry));
  T.pool = map(POOL_PCS * sizeof(uintptr_t));
  if (!T.slots || !T.entries || !T.pool) {
    __atomic_store_n(&T.state, -1, __ATOMIC_RELEASE);
    return 0;
  }
  T.next_id = 1;
  T.emitted = 1;
  __atomic_store_n(&T.state, 2, __ATOMIC_RELEASE);
  return 1;
}

static uint64_t hash_pcs(const uintptr_t *pcs, int depth) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)depth;
  for (int i = 0; i < depth; i++) {
    h ^= (uint64_t)pcs[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h ? h : 1;
}

static int same(const entry *e, uint64_t h, const uintptr_t *pcs, int depth) {
  if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE)) return 0;
  return e->hash == h && e->depth == depth &&
         memcmp(T.pool + e->off, pcs, (size_t)depth * sizeof *pcs) == 0;
}

/* Fill a claimed slot; returns the id or 0 (pool or ids exhausted). */
static uint32_t fill(uint32_t *slot, uint64_t h, const uintptr_t *pcs, int depth) {
  uint32_t off = __atomic_fetch_add(&T.pool_used, (uint32_t)depth, __ATOMIC_RELAXED);
  uint32_t id = 0;
  if (off + (uint32_t)depth <= POOL_PCS) id = __atomic_fetch_add(&T.next_id, 1, __ATOMIC_RELAXED);
  if (!id || id > MAX_STACKS) {
    __atomic_store_n(slot, SLOT_DEAD, __ATOMIC_RELEASE);
    return 0;
  }
  memcpy(T.pool + off, pcs, (size_t)depth * sizeof *pcs);
  entry *e = &T.entries[id];
  e->hash = h;
  e->off = off;
  e->depth = (uint16_t)depth;
  __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
  __atomic_store_n(slot, id, __ATOMIC_RELEASE);
  return id;
}

uint32_t prof__stack_intern(const uintptr_t *pcs, int depth) {
  if (!pcs || depth <= 0) return 0;
  if (depth > PROF_STACK_MAX_DEPTH) depth = PROF_STACK_MAX_DEPTH;
  if (!table_ready()) goto lost;
  uint64_t h = hash_pcs(pcs, depth);
  for (uint32_t i = 0; i < MAX_PROBES; i++) {
    uint32_t *slot = &T.slots[(h + i) & (NSLOTS - 1)];
    uint32_t v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (v == 0) {
      if (__atomic_compare_exchange_n(slot, &v, SLOT_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        uint32_t id = fill(slot, h, pcs, depth);
        if (id) return id;
        goto lost;
      }
    }
    for (int spin = 0; v == SLOT_BUSY && spin < 256; spin++) {
      PROF__PAUSE();
      v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    }
    if (v == SLOT_BUSY || v == SLOT_DEAD || v == 0) continue;
    if (v <= MAX_STACKS && same(&T.entries[v], h, pcs, depth)) return v;
  }
lost:
  __atomic_fetch_add(&T.lost, 1, __ATOMIC_RELAXED);
  return 0;
}

int prof__stack_get(uint32_t id, const uintptr_t **pcs) {
  if (__atomic_load_n(&T.state, __ATOMIC_ACQUIRE) != 2 || id == 0 || id > MAX_STACKS) return 0;
  if (id >= __atomic_load_n(&T.next_id, __ATOMIC_ACQUIRE)) return 0;
  const entry *e = &T.entries[id];
  if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE)) return 0;
  if (pcs) *pcs = T.pool + e->off;
  return e->depth;
}

uint64_t prof__stack_lost(void) { return __atomic_load_n(&T.lost, __ATOMIC_RELAXED); }

uint32_t prof__stack_scan(uint32_t from, void (*fn)(const uintptr_t *pcs, int depth, void *arg), void *arg) {
  if (__atomic_load_n(&T.state, __ATOMIC_ACQUIRE) != 2) return from;
  uint32_t end = __atomic_load_n(&T.next_id, __ATOMIC_ACQUIRE);
  if (end > MAX_STACKS + 1) end = MAX_STACKS + 1;
  uint32_t id = from ? from : 1;
  for (; id < end && __atomic_load_n(&T.entries[id].ready, __ATOMIC_ACQUIRE); id++)
    fn(T.pool + T.entries[id].off, T.entries[id].depth, arg);
  return id;
}

int prof__stack_any(void) {
  return __atomic_load_n(&T.state, __ATOMIC_ACQUIRE) == 2 && __atomic_load_n(&T.next_id, __ATOMIC_ACQUIRE) > 1;
}

/* Encode the entries published since the last call as one STACKS body
 * (trace/rec_stacks.h). Returns the entries written, or PROF_ENOMEM (they
 * will be written again next time). */
int prof__stack_encode_new(prof__buf *b, uint32_t max_count) {
  if (__atomic_load_n(&T.state, __ATOMIC_ACQUIRE) != 2) return 0;
  uint32_t end = __atomic_load_n(&T.next_id, __ATOMIC_ACQUIRE);
  if (end > MAX_STACKS + 1) end = MAX_STACKS + 1;
  uint32_t id = T.emitted;
  prof__rec_list l = {{0}, 0};
  while (id < end && l.n < max_count && __atomic_load_n(&T.entries[id].ready, __ATOMIC_ACQUIRE)) {
    prof__rec_stacks_put(&l, id, T.pool + T.entries[id].off, T.entries[id].depth);
    id++;
  }
  uint32_t n = l.n;
  int rc = n ? prof__rec_list_end(&l, b) : 0;
  prof__rec_list_free(&l);
  if (rc) return rc;
  T.emitted = id;
  return (int)n;
}
