/* ev_comm.h — the communication family of the event contract: COMM events
 * the MPI wrappers (src/mpi) write, read by the comm section, the ranks
 * merge and the multi-rank Chrome export (docs/multi-rank.md). Values are
 * part of the format.
 *
 *   COMM  name: operation name id, a: bytes, cat: PROF_CAT_COMM
 *         aux PROF_COMM_CALL: b = communicator size | (peer + 1) << 32
 *                             (peer + 1 = 0: no single peer)
 *         aux PROF_COMM_DONE: a nonblocking operation completed;
 *                             b = ns of it hidden behind other work
 */
#ifndef PROF_EV_COMM_H
#define PROF_EV_COMM_H

#include <stdint.h>

#include "trace/event.h"

enum { PROF_COMM_CALL = 0, PROF_COMM_DONE = 1 };

/* The `b` of a PROF_COMM_CALL. */
static inline uint64_t prof__ev_comm_call_b(uint32_t comm_size, int64_t peer) {
  return (uint64_t)comm_size | (uint64_t)(peer + 1) << 32;
}
/* Its communicator size and peer (-1: none). */
static inline uint32_t prof__ev_comm_size(uint64_t b) { return (uint32_t)b; }
static inline int64_t prof__ev_comm_peer(uint64_t b) { return (int64_t)(b >> 32) - 1; }

#endif /* PROF_EV_COMM_H */
