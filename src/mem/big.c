/* big.c — large heap blocks, off the allocator's hot path: the blocks made
 * before the first session started (so their bytes and call sites are not
 * missing from the report) and the heap's high-water mark with its time (so
 * the peak is placed where it happened, not at the next writer period).
 *
 * Only blocks of at least PROF_MEM_BIG_BYTES usable bytes come here (one
 * compare on the hot path). Nothing here allocates or blocks: both tables
 * are static and taken with try-locks; a block that meets the list busy for
 * too long is not listed and counted (`unlisted`), a high-water mark that
 * meets the writer taking it is left for the next large block or the
 * writer's own reading.
 */
#include "core/clock.h"
#include "core/guard.h"
#include "core/producer.h"
#include "mem/mem.h"

#define TRIES 4096

int prof__mem_early_n;

/* Blocks listed before the first session start. */
static struct {
  int busy, closed;
  struct {
    uintptr_t addr, ra;
    size_t size;
  } b[PROF_MEM_EARLY_MAX];
  uint64_t unlisted;
} EB;

/* The high-water mark since the writer last took it (live < 0: none). */
static struct {
  int busy;
  int64_t live;
  uint64_t ticks;
} HW = {0, -1, 0};

static prof__mem_start START;

static int try_lock(int *busy) {
  for (int i = 0; i < TRIES; i++)
    if (!__atomic_exchange_n(busy, 1, __ATOMIC_ACQUIRE)) return 1;
  return 0;
}

static void unlock(int *busy) { __atomic_store_n(busy, 0, __ATOMIC_RELEASE); }

static void early_list(const void *p, size_t req, const void *ra) {
  if (!try_lock(&EB.busy)) {
    __atomic_fetch_add(&EB.unlisted, 1, __ATOMIC_RELAXED);
    return;
  }
  int n = __atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED);
  if (__atomic_load_n(&EB.closed, __ATOMIC_RELAXED)) { /* the session began meanwhile: its events see this block */
  } else if (n < PROF_MEM_EARLY_MAX) {
    EB.b[n].addr = (uintptr_t)p;
    EB.b[n].ra = (uintptr_t)ra;
    EB.b[n].size = req;
    __atomic_store_n(&prof__mem_early_n, n + 1, __ATOMIC_RELAXED);
  } else {
    __atomic_fetch_add(&EB.unlisted, 1, __ATOMIC_RELAXED);
  }
  unlock(&EB.busy);
}

static void high_water(void) {
  prof__mem_totals t;
  prof__mem_totals_get(&t);
  if (t.live <= __atomic_load_n(&HW.live, __ATOMIC_RELAXED) || __atomic_exchange_n(&HW.busy, 1, __ATOMIC_ACQUIRE))
    return;
  if (t.live > __atomic_load_n(&HW.live, __ATOMIC_RELAXED)) {
    __atomic_store_n(&HW.live, t.live, __ATOMIC_RELAXED);
    __atomic_store_n(&HW.ticks, prof__ticks(), __ATOMIC_RELAXED);
  }
  unlock(&HW.busy);
}

void prof__mem_big_alloc(const void *p, size_t req, const void *ra) {
  if (!__atomic_load_n(&EB.closed, __ATOMIC_ACQUIRE)) early_list(p, req, ra);
  else if (__atomic_load_n(&prof__enabled, __ATOMIC_RELAXED)) high_water();
}

void prof__mem_big_free(const void *p) {
  if (!try_lock(&EB.busy)) return; /* left listed: counted as live at the start */
  int n = __atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED);
  for (int i = 0; i < n; i++) {
    if (EB.b[i].addr != (uintptr_t)p) continue;
    EB.b[i] = EB.b[n - 1];
    __atomic_store_n(&prof__mem_early_n, n - 1, __ATOMIC_RELAXED);
    break;
  }
  unlock(&EB.busy);
}

void prof__mem_session_begins(void) {
  if (__atomic_load_n(&EB.closed, __ATOMIC_ACQUIRE)) return;
  int locked = try_lock(&EB.busy);
  __atomic_store_n(&EB.closed, 1, __ATOMIC_RELEASE);
  int n = locked ? __atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED) : 0;
  prof__mem_totals t;
  prof__mem_totals_get(&t);
  START.live = t.live;
  START.blocks = (int64_t)(t.allocs - t.frees);
  START.unlisted = __atomic_load_n(&EB.unlisted, __ATOMIC_RELAXED) +
                   (locked ? 0 : (uint64_t)__atomic_load_n(&prof__mem_early_n, __ATOMIC_RELAXED));
  for (int i = 0; i < n && prof__mem_mode >= PROF_MEM_SAMPLED; i++) { /* counts mode records no block */
    prof__mem_event_early((const void *)EB.b[i].addr, EB.b[i].size, EB.b[i].ra);
    START.listed++;
    START.listed_bytes += EB.b[i].size;
  }
  __atomic_store_n(&prof__mem_early_n, 0, __ATOMIC_RELAXED);
  if (locked) unlock(&EB.busy);
  __atomic_store_n(&HW.live, t.live, __ATOMIC_RELAXED);
  __atomic_store_n(&HW.ticks, prof__ticks(), __ATOMIC_RELAXED);
}

void prof__mem_start_get(prof__mem_start *s) { *s = START; }

int prof__mem_high_water_take(int64_t *live, uint64_t *ticks) {
  if (__atomic_exchange_n(&HW.busy, 1, __ATOMIC_ACQUIRE)) return 0;
  *live = __atomic_load_n(&HW.live, __ATOMIC_RELAXED);
  *ticks = __atomic_load_n(&HW.ticks, __ATOMIC_RELAXED);
  int got = *live >= 0;
  __atomic_store_n(&HW.live, -1, __ATOMIC_RELAXED);
  unlock(&HW.busy);
  return got;
}
