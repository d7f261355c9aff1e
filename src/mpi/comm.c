/* comm.c — the communication calls of the public API (prof_comm_id,
 * prof_comm_done_id) and prof_meta: what an MPI (or any other)
 * communication layer hands to the trace besides its ranges.
 *
 * This file has no MPI dependency; src/mpi/CMakeLists.txt compiles it into
 * libmlprof (both flavours) so that libmlprof_mpi, which only sees the
 * exported API, can record bytes, peers and clock facts.
 */
#include "mlprof.h"
#include "core/producer.h"
#include "trace/ev_comm.h"

PROF_API void prof_comm_id(uint32_t name_id, uint64_t bytes, int comm_size, int peer) {
  if (name_id == 0 || name_id > prof__intern_count()) {
    prof__misuse_count(PROF_MU_BAD_ID);
    return;
  }
  uint32_t size = comm_size > 0 ? (uint32_t)comm_size : 0;
  prof__emit_aux(PROF_EV_COMM, PROF_CAT_COMM, PROF_COMM_CALL, name_id, bytes,
                 prof__ev_comm_call_b(size, peer >= 0 ? peer : -1));
}

PROF_API void prof_comm_done_id(uint32_t name_id, uint64_t bytes, uint64_t hidden_ns) {
  if (name_id == 0 || name_id > prof__intern_count()) {
    prof__misuse_count(PROF_MU_BAD_ID);
    return;
  }
  prof__emit_aux(PROF_EV_COMM, PROF_CAT_COMM, PROF_COMM_DONE, name_id, bytes, hidden_ns);
}

PROF_API int prof_meta(const char *key, const char *value) {
  if (!key || !value) return PROF_EINVAL;
  if (!prof__session_running()) return PROF_ESTATE;
  return prof__meta_add(key, value);
}
