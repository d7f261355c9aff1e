/* pool.c — the custom-pool API: prof_mem_pool, prof_mem_alloc,
 * prof_mem_free. Tensor arenas, caching allocators and GPU memory managers
 * report their blocks here; the blocks travel as ALLOC/FREE events with the
 * pool id in `aux` and appear in the same memory views as malloc'd ones.
 * Pool names reach the trace as META pairs "mem.pool.<id>".
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/producer.h"
#include "mem/mem.h"

#define MAX_POOLS 255

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static char pool_names[MAX_POOLS + 1][64];
static int npools;
static uint64_t pool_misuse;

uint64_t prof__mem_pool_misuse(void) { return __atomic_load_n(&pool_misuse, __ATOMIC_RELAXED); }

static int pool_find_or_add(const char *name) {
  for (int i = 1; i <= npools; i++)
    if (strncmp(pool_names[i], name, sizeof pool_names[i] - 1) == 0) return i;
  if (npools >= MAX_POOLS) return PROF_ENOMEM;
  int id = npools + 1;
  snprintf(pool_names[id], sizeof pool_names[id], "%s", name);
  __atomic_store_n(&npools, id, __ATOMIC_RELEASE);
  char key[32];
  snprintf(key, sizeof key, "mem.pool.%d", id);
  prof__meta_add(key, pool_names[id]);
  return id;
}

PROF_API int prof_mem_pool(const char *name) {
  if (!name || !*name) return PROF_EINVAL;
  if (!prof__session_running()) return PROF_ESTATE;
  prof__guard_begin();
  pthread_mutex_lock(&pool_mu);
  int id = pool_find_or_add(name);
  pthread_mutex_unlock(&pool_mu);
  prof__guard_end();
  return id;
}

static int pool_ok(int pool, const void *ptr) {
  if (ptr && pool >= 1 && pool <= __atomic_load_n(&npools, __ATOMIC_ACQUIRE)) return 1;
  __atomic_fetch_add(&pool_misuse, 1, __ATOMIC_RELAXED);
  return 0;
}

PROF_API void prof_mem_alloc(int pool, const void *ptr, size_t size) {
  if (!pool_ok(pool, ptr) || prof__mem_mode == PROF_MEM_OFF) return;
  prof__mem_pool_event(1, pool, ptr, size);
}

PROF_API void prof_mem_free(int pool, const void *ptr) {
  if (!pool_ok(pool, ptr) || prof__mem_mode == PROF_MEM_OFF) return;
  prof__mem_pool_event(0, pool, ptr, 0);
}
