/* meta.c — the queue of META pairs (prof__meta_add, session.h): any thread
 * queues a key/value pair, copied; the writer's next cycle writes every
 * queued pair as one META chunk (prof__meta_emit, meta.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "meta.h"
#include "session.h"

static pthread_mutex_t meta_mu = PTHREAD_MUTEX_INITIALIZER;
static prof__kv *meta_q;
static size_t meta_n, meta_cap;

int prof__meta_add(const char *key, const char *value) {
  if (!key || !value) return PROF_EINVAL;
  prof__guard_begin();
  pthread_mutex_lock(&meta_mu);
  int rc = 0;
  if (meta_n == meta_cap) {
    size_t c = meta_cap ? meta_cap * 2 : 16;
    prof__kv *q = realloc(meta_q, c * sizeof *q);
    if (!q) rc = PROF_ENOMEM;
    else {
      meta_q = q;
      meta_cap = c;
    }
  }
  if (!rc) {
    meta_q[meta_n].key = strdup(key);
    meta_q[meta_n].value = strdup(value);
    if (meta_q[meta_n].key && meta_q[meta_n].value) meta_n++;
    else rc = PROF_ENOMEM;
  }
  pthread_mutex_unlock(&meta_mu);
  prof__guard_end();
  return rc;
}

int prof__meta_emit(prof__tw *tw) {
  pthread_mutex_lock(&meta_mu);
  int rc = meta_n ? prof__tw_meta(tw, meta_q, meta_n) : 0;
  for (size_t i = 0; i < meta_n; i++) {
    free((char *)meta_q[i].key);
    free((char *)meta_q[i].value);
  }
  meta_n = 0;
  pthread_mutex_unlock(&meta_mu);
  return rc;
}

void prof__meta_fork_child(void) { pthread_mutex_init(&meta_mu, NULL); }
