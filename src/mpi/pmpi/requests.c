/* requests.c — nonblocking requests in flight (Isend/Irecv until the Wait
 * or Test that completes them), so the completion can report how long the
 * transfer ran hidden behind other work. A fixed open-addressing table
 * under a mutex: a full table stops tracking new requests (never blocks,
 * never grows); handles freed with MPI_Request_free stay until the table
 * is reused after them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wrap.h"

#define REQ_SLOTS 4096

typedef struct req_slot {
  uint64_t key; /* handle bits + 1; 0 = empty, UINT64_MAX = deleted */
  uint64_t t0, bytes;
  int op;
} req_slot;

static req_slot slots[REQ_SLOTS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t key_of(MPI_Request r) {
  uint64_t k = 0;
  memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  return k + 1;
}

static size_t hash_of(uint64_t k) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 52) % REQ_SLOTS; }

void prof__mpiw_req_start(MPI_Request req, int op, uint64_t bytes, uint64_t t0) {
  if (req == MPI_REQUEST_NULL || !prof__mpiw_ids[op]) return;
  uint64_t k = key_of(req);
  pthread_mutex_lock(&mu);
  size_t h = hash_of(k);
  for (size_t i = 0; i < REQ_SLOTS; i++) {
    req_slot *s = &slots[(h + i) % REQ_SLOTS];
    if (s->key == 0 || s->key == UINT64_MAX || s->key == k) {
      *s = (req_slot){k, t0, bytes, op};
      break;
    }
  }
  pthread_mutex_unlock(&mu);
}

void prof__mpiw_req_done(MPI_Request req, uint64_t call_t0) {
  if (req == MPI_REQUEST_NULL) return;
  uint64_t k = key_of(req);
  req_slot found = {0};
  pthread_mutex_lock(&mu);
  size_t h = hash_of(k);
  for (size_t i = 0; i < REQ_SLOTS; i++) {
    req_slot *s = &slots[(h + i) % REQ_SLOTS];
    if (s->key == 0) break;
    if (s->key == k) {
      found = *s;
      s->key = UINT64_MAX;
      break;
    }
  }
  pthread_mutex_unlock(&mu);
  if (!found.key || !prof__mpiw_ids[found.op]) return;
  uint64_t hidden = call_t0 > found.t0 ? call_t0 - found.t0 : 0;
  prof_comm_done_id(prof__mpiw_ids[found.op], found.bytes, hidden);
}

void prof__mpiw_reqs_copy(prof__mpiw_reqs *c, const MPI_Request *reqs, int n) {
  c->n = 0;
  c->v = c->small;
  if (n <= 0 || !reqs) return;
  if (n > 16) {
    c->v = malloc((size_t)n * sizeof *c->v);
    if (!c->v) {
      c->v = c->small; /* cannot copy: completions go unrecorded */
      return;
    }
  }
  memcpy(c->v, reqs, (size_t)n * sizeof *c->v);
  c->n = n;
}

void prof__mpiw_reqs_free(prof__mpiw_reqs *c) {
  if (c->v != c->small) free(c->v);
  c->v = c->small;
  c->n = 0;
}
