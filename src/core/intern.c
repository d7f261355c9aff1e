/* intern.c — the process-wide name table.
 *
 * Names are interned by content into dense ids starting at 1; the trace's
 * string table maps them back. The table takes a lock and may allocate, so
 * the hot path reaches it only on a miss of the per-thread pointer cache
 * (session.h), i.e. once per name and thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "trace/trace.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **names;        /* names[id], id >= 1 */
static uint32_t nnames;     /* highest id */
static uint32_t cap_names;
static uint32_t *slots;     /* open-addressing hash: id or 0 */
static uint32_t nslots;

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int rehash(uint32_t want) {
  uint32_t *ns = calloc(want, sizeof *ns);
  if (!ns) return 0;
  for (uint32_t id = 1; id <= nnames; id++) {
    uint64_t i = hash(names[id], strlen(names[id])) & (want - 1);
    while (ns[i]) i = (i + 1) & (want - 1);
    ns[i] = id;
  }
  free(slots);
  slots = ns;
  nslots = want;
  return 1;
}

static uint32_t intern_locked(const char *s, size_t n) {
  if (nslots == 0 && !rehash(1024)) return 0;
  uint64_t h = hash(s, n);
  uint64_t i = h & (nslots - 1);
  for (; slots[i]; i = (i + 1) & (nslots - 1)) {
    const char *c = names[slots[i]];
    if (strncmp(c, s, n) == 0 && c[n] == 0) return slots[i];
  }
  if (nnames + 1 >= cap_names) {
    uint32_t nc = cap_names ? cap_names * 2 : 1024;
    char **nn = realloc(names, nc * sizeof *nn);
    if (!nn) return 0;
    names = nn;
    cap_names = nc;
  }
  char *copy = malloc(n + 1);
  if (!copy) return 0;
  memcpy(copy, s, n);
  copy[n] = 0;
  uint32_t id = nnames + 1;
  names[id] = copy;
  __atomic_store_n(&nnames, id, __ATOMIC_RELEASE);
  slots[i] = id;
  if ((uint64_t)nnames * 2 > nslots) rehash(nslots * 2);
  return id;
}

uint32_t prof__intern_len(const char *s, size_t len) {
  if (!s) return 0;
  prof__guard_begin();
  pthread_mutex_lock(&lock);
  uint32_t id = intern_locked(s, len);
  pthread_mutex_unlock(&lock);
  prof__guard_end();
  return id;
}

uint32_t prof__intern(const char *s) { return s ? prof__intern_len(s, strlen(s)) : 0; }

int prof__intern_copy(uint32_t id, char *out, size_t n) {
  int ok = 0;
  pthread_mutex_lock(&lock);
  if (id >= 1 && id <= nnames && n) {
    snprintf(out, n, "%s", names[id]);
    ok = 1;
  }
  pthread_mutex_unlock(&lock);
  return ok;
}

uint32_t prof__intern_count(void) { return __atomic_load_n(&nnames, __ATOMIC_ACQUIRE); }

int prof__intern_emit(struct prof__tw *w, uint32_t *written) {
  int rc = 0;
  pthread_mutex_lock(&lock);
  while (*written < nnames && rc == 0) {
    uint32_t id = *written + 1;
    rc = prof__tw_string(w, id, names[id], strlen(names[id]));
    if (rc == 0) *written = id;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

uint32_t prof__name_miss(prof__thread *t, const char *p, unsigned slot) {
  uint32_t id = prof__intern(p);
  if (id) {
    t->cache[slot].p = p;
    t->cache[slot].id = id;
  }
  return id;
}
