/* rec_gpu.h — GPU activity records as mlprof stores them, independent of CUPTI.
 *
 * The CUPTI module (src/gpu/cupti.c, the only file that sees cupti.h)
 * translates CUPTI's activity structs into prof__gpu_rec and packs them into
 * PROF_CHUNK_GPU payloads with prof__rec_gpu_encode(); the analyzer unpacks them
 * with prof__gpu_decode(). docs/trace-format-gpu.md is the byte-level
 * specification of the payload; keep the two in step.
 */
#ifndef PROF_REC_GPU_H
#define PROF_REC_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "tids.h"
#include "trace.h"

#define PROF_GPU_FORMAT 1 /* first byte of every GPU chunk payload */

/* Thread id under which the GPU module reports dropped CUPTI records as the
 * lost-event count of a pseudo thread "mlprof-cupti" (OS tids stay below
 * 2^22, so this never collides). */
#define PROF_GPU_PSEUDO_TID PROF_TID_CUPTI

/* Record kinds. Values are part of the trace format: never renumber. */
enum {
  PROF_GPU_KERNEL = 1,
  PROF_GPU_MEMCPY = 2,
  PROF_GPU_MEMSET = 3,
  PROF_GPU_MEMORY = 4,   /* device memory allocation or release */
  PROF_GPU_SYNC = 5,     /* cudaDeviceSynchronize, stream/event waits */
  PROF_GPU_API = 6,      /* a runtime or driver API call on a CPU thread */
  PROF_GPU_OVERHEAD = 7, /* CUPTI's own overhead (buffer flushes, ...) */
  PROF_GPU_DEVICE = 8,   /* device properties */
  PROF_GPU_DROPPED = 9,  /* activity records CUPTI dropped (running total) */
  PROF_GPU_KIND_MAX = 9
};

/* Copy directions (PROF_GPU_MEMCPY sub), our numbering. */
enum {
  PROF_GPU_COPY_OTHER = 0,
  PROF_GPU_COPY_H2D = 1,
  PROF_GPU_COPY_D2H = 2,
  PROF_GPU_COPY_D2D = 3,
  PROF_GPU_COPY_H2H = 4,
  PROF_GPU_COPY_P2P = 5,
  PROF_GPU_COPY_COUNT = 6
};

/* Memory kinds (memcpy src/dst, memset, memory records), our numbering. */
enum {
  PROF_GPU_MEM_UNKNOWN = 0,
  PROF_GPU_MEM_PAGEABLE = 1,
  PROF_GPU_MEM_PINNED = 2,
  PROF_GPU_MEM_DEVICE = 3,
  PROF_GPU_MEM_ARRAY = 4,
  PROF_GPU_MEM_MANAGED = 5
};

/* API domains (PROF_GPU_API sub). */
enum { PROF_GPU_API_RUNTIME = 1, PROF_GPU_API_DRIVER = 2 };

/* Memory operations (PROF_GPU_MEMORY sub). */
enum { PROF_GPU_MEMOP_ALLOC = 1, PROF_GPU_MEMOP_FREE = 2 };

/* One activity record. Times are CLOCK_MONOTONIC ns, the trace's time base.
 * Fields a kind does not use are 0. */
typedef struct prof__gpu_rec {
  uint8_t kind;      /* PROF_GPU_* */
  uint8_t sub;       /* copy direction, sync type, memory op, API domain, overhead kind */
  uint8_t src_mem;   /* memcpy: source memory kind; memset/memory: memory kind */
  uint8_t dst_mem;   /* memcpy: destination memory kind */
  uint32_t device;
  uint32_t stream;
  uint32_t corr;     /* CUPTI correlation id (kernel, copy, set, sync, API) */
  uint64_t start, end; /* memory records: start = end = the event time */
  uint64_t bytes;    /* copies, sets, memory records; DROPPED: the count */
  uint64_t addr;     /* memory records: address */
  uint32_t name;     /* string id: kernel name, API function name, device name */
  uint32_t tid;      /* launching / calling CPU thread (OS tid), 0 if unknown */
  uint32_t range;    /* innermost range on that thread at launch (string id), 0: none */
  uint64_t launch;   /* kernels/copies/sets: start of the launching API call, 0 if unknown */
  int32_t grid[3], block[3];
  uint32_t regs;     /* registers per thread */
  uint32_t smem_static, smem_dynamic; /* bytes per block */
  /* PROF_GPU_DEVICE only */
  uint32_t cc_major, cc_minor, sm_count, max_threads_per_sm, max_warps_per_sm;
  uint32_t max_blocks_per_sm, max_regs_per_sm, max_smem_per_sm;
  uint64_t mem_bytes;
} prof__gpu_rec;

/* Append one record to a payload being built. An empty buffer gets the
 * format byte first. Records are delta-encoded against the previous one of
 * the same payload (`prev`, zeroed by the caller at the payload's start). */
void prof__rec_gpu_encode(prof__buf *b, const prof__gpu_rec *r, prof__gpu_rec *prev);

/* A decoder over one payload. */
typedef struct prof__gpu_dec {
  prof__cur cur;
  prof__gpu_rec prev;
  int bad; /* set on a malformed payload; decoding stops */
} prof__gpu_dec;

/* Start decoding `data[0..len)`. Returns 0, or PROF_EVERSION for an unknown
 * format byte, PROF_EFORMAT for an empty payload. */
int prof__rec_gpu_dec_init(prof__gpu_dec *d, const void *data, size_t len);
/* Next record: 1 with *r filled, 0 at the end, PROF_EFORMAT on a malformed
 * payload (records before it were delivered). */
int prof__rec_gpu_dec_next(prof__gpu_dec *d, prof__gpu_rec *r);

/* Names for reports and exporters ("h2d", "kernel", "pinned", ...). */
const char *prof__rec_gpu_kind_name(int kind);
const char *prof__rec_gpu_copy_name(int dir);
const char *prof__rec_gpu_mem_name(int mem);

#endif /* PROF_REC_GPU_H */
