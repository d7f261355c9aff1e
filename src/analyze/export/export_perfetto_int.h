/* export_perfetto_int.h — what the parts of the Perfetto exporter share:
 * the field numbers of Perfetto's trace protos that it writes, the export
 * state, and the packet, track and interning helpers of export_perfetto.c
 * used by the call-stack part (export_perfetto_stacks.c) and the GPU part
 * (export_perfetto_gpu.c). Internal to those three files.
 *
 * Everything goes on one packet sequence (PF_SEQ): its first packet clears
 * the incremental state, and every packet that refers to interned data
 * (names, categories, frames, call stacks) says it needs that state. Data is
 * interned in the packet that first refers to it.
 */
#ifndef PROF_EXPORT_PERFETTO_INT_H
#define PROF_EXPORT_PERFETTO_INT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "analyze/export/chrome_range.h"
#include "analyze/export/export_perfetto.h"
#include "analyze/export/pb.h"
#include "analyze/util/hashmap.h"

/* Field numbers, from Perfetto's protos/perfetto/trace (trace.proto,
 * trace_packet.proto, the track_event/ and profiling/ protos and
 * interned_data/interned_data.proto). */
enum { PF_TRACE_PACKET = 1 };
enum {
  PF_PKT_TIMESTAMP = 8, PF_PKT_SEQ_ID = 10, PF_PKT_TRACK_EVENT = 11, PF_PKT_INTERNED = 12,
  PF_PKT_SEQ_FLAGS = 13, PF_PKT_TRACK_DESC = 60, PF_PKT_PERF_SAMPLE = 66
};
enum { PF_SEQ_CLEARED = 1, PF_SEQ_NEEDS_STATE = 2 };
enum { /* TrackDescriptor */
  PF_TD_UUID = 1, PF_TD_NAME = 2, PF_TD_PROCESS = 3, PF_TD_THREAD = 4, PF_TD_PARENT = 5, PF_TD_COUNTER = 8
};
enum { PF_PD_PID = 1, PF_PD_NAME = 6 };                 /* ProcessDescriptor */
enum { PF_THD_PID = 1, PF_THD_TID = 2, PF_THD_NAME = 5 }; /* ThreadDescriptor */
enum { PF_CD_UNIT = 3 };                                /* CounterDescriptor */
enum { PF_UNIT_SIZE_BYTES = 3 };
enum { /* TrackEvent */
  PF_TE_CATEGORY_IIDS = 3, PF_TE_TYPE = 9, PF_TE_NAME_IID = 10, PF_TE_TRACK = 11, PF_TE_NAME = 23,
  PF_TE_DOUBLE_VALUE = 44, PF_TE_FLOW_IDS = 47, PF_TE_TERMINATING_FLOW_IDS = 48
};
enum { PF_SLICE_BEGIN = 1, PF_SLICE_END = 2, PF_INSTANT = 3, PF_COUNTER = 4 };
enum { /* InternedData */
  PF_IN_CATEGORIES = 1, PF_IN_EVENT_NAMES = 2, PF_IN_FUNCTION_NAMES = 5, PF_IN_FRAMES = 6, PF_IN_CALLSTACKS = 7,
  PF_IN_BUILD_IDS = 16, PF_IN_MAPPING_PATHS = 17, PF_IN_SOURCE_PATHS = 18, PF_IN_MAPPINGS = 19
};
enum { PF_IID = 1, PF_IID_NAME = 2 }; /* EventCategory, EventName, InternedString (str) */
enum { PF_MAP_IID = 1, PF_MAP_BUILD_ID = 2, PF_MAP_START = 4, PF_MAP_END = 5, PF_MAP_PATHS = 7 };
enum { PF_FR_IID = 1, PF_FR_NAME = 2, PF_FR_MAPPING = 3, PF_FR_REL_PC = 4, PF_FR_SOURCE = 5, PF_FR_LINE = 6, PF_FR_KIND = 7 };
enum { PF_FR_KIND_INTERPRETED = 3 };
enum { PF_CS_IID = 1, PF_CS_FRAMES = 2 }; /* Callstack */
enum { PF_PS_PID = 2, PF_PS_TID = 3, PF_PS_CALLSTACK = 4, PF_PS_CPU_MODE = 5 }; /* PerfSample */
enum { PF_CPU_MODE_USER = 2 };

#define PF_SEQ 1 /* the one packet sequence */
/* Event names made here (GPU copies, ...) get iids from here up, above every
 * string id of a trace. */
#define PF_DYN_IID (1ull << 32)

/* Event categories, interned in the first packet (iid = index + 1). The
 * first PROF_CAT_COUNT are the range categories; -1 (PF_CAT_NONE): none. */
enum { PF_CAT_NONE = -1, PF_CAT_FIRST = 0 };
enum {
  PF_CAT_STEP = PROF_CAT_COUNT, PF_CAT_MARK, PF_CAT_KERNEL, PF_CAT_MEMCPY, PF_CAT_MEMSET, PF_CAT_RUNTIME,
  PF_CAT_DRIVER, PF_CAT_SYNC, PF_CAT_LAUNCH, PF_NCATS
};

/* Strings (or byte keys) to iids 1, 2, ...; keys are copied. */
typedef struct pf_interner {
  prof__u64map map; /* hash (+ probe) -> index + 1 */
  char **keys;
  size_t *lens;
  size_t n, cap;
} pf_interner;

/* The iid of key[0..n) (1-based); *fresh set when it was just added. 0
 * when memory ran out. */
uint64_t prof__pf_intern(pf_interner *t, const void *key, size_t n, int *fresh);
void prof__pf_interner_free(pf_interner *t);

struct pf;

typedef struct pf_thread {
  struct pf *p;
  prof__exp_crange_stack open;
  uint32_t tid;
  uint64_t last_ts;
  uint64_t uuid;
  uint64_t gpu_uuid[3];                /* child tracks: runtime calls, driver calls, waits (0: none yet) */
  prof__exp_crange_track gpu_last[3];
} pf_thread;

typedef struct pf_stream {
  uint32_t device, stream;
  uint64_t uuid;
  prof__exp_crange_track last;
  uint64_t last_begin;
} pf_stream;

typedef struct pf_device {
  uint32_t id;
  uint64_t uuid, mem_uuid;
  int64_t mem;
} pf_device;

typedef struct pf {
  prof__an *an;
  FILE *out;
  prof__buf pkt, ev, msg, intern, tmp; /* scratch, reused for every packet */
  int needs_state;                     /* the packet refers to interned data */
  long long pid;
  uint64_t proc_uuid, steps_uuid, next_uuid;
  pf_thread *th;                       /* parallel to an->threads */
  prof__u64map names_sent;             /* string id -> 1: EventName written */
  pf_interner dyn_names;               /* names made here: iid PF_DYN_IID + index */
  prof__u64map counters;               /* name id << 32 | (thread index + 1 or 0) -> track uuid */
  /* CPU samples (export_perfetto_stacks.c) */
  int sample_mode;                     /* PROF_SAMPLE_CPU or _WALL: the report's; -1: none */
  prof__u64map stacks_sent;            /* stack id -> 1 */
  pf_interner funcs, files, paths, builds, frames;
  uint8_t *maps_sent;                  /* by mapping iid */
  size_t nmaps;
  /* GPU (export_perfetto_gpu.c) */
  pf_stream *streams;
  size_t nstreams, streams_cap;
  prof__u64map stream_at;              /* device << 32 | stream -> index + 1 */
  pf_device devs[64];
  size_t ndevs;
  int gpu_api_flows;                   /* flows begin at runtime API calls (else at launch instants) */
  prof__pf_stats st;
  int err;
} pf;

/* A TrackEvent: `sid` (a string id of the trace), else `dyn` (a name made
 * here, interned), else `lit` (written in full) names it. */
typedef struct pf_te {
  int type;
  uint64_t track;
  uint32_t sid;
  const char *dyn, *lit;
  int cat;          /* index into the category table, PF_CAT_NONE: none */
  uint64_t flow_out, flow_in;
  int has_value;
  double value;
} pf_te;

/* Packets (export_perfetto.c). Between begin and end, `pkt` holds the
 * packet's fields and `intern` its InternedData. */
void prof__pf_pkt_begin(pf *p, uint64_t ts);
void prof__pf_pkt_end(pf *p);
void prof__pf_track_event(pf *p, uint64_t ts, const pf_te *e);
/* A TrackDescriptor packet: a named track under `parent` (0: none), a
 * counter track when `counter` (unit bytes when `bytes`). */
void prof__pf_track(pf *p, uint64_t uuid, uint64_t parent, const char *name, int counter, int bytes);
/* A track for a process (pid, name). */
void prof__pf_process_track(pf *p, uint64_t uuid, long long pid, const char *name);
/* An interned entry (iid, bytes) of InternedData field `field`, in the
 * packet being built. */
void prof__pf_interned_str(pf *p, unsigned field, uint64_t iid, const void *s, size_t n);
uint64_t prof__pf_new_uuid(pf *p);

/* CPU samples (export_perfetto_stacks.c): a SAMPLE event as a PerfSample
 * packet with an interned call stack. */
void prof__pf_sample(pf *p, uint32_t tid, const prof__event *ev);
void prof__pf_stacks_free(pf *p);

/* GPU activity (export_perfetto_gpu.c): the records of one GPU chunk. */
void prof__pf_gpu_init(pf *p);
void prof__pf_gpu_chunk(pf *p, const uint8_t *data, size_t len);
void prof__pf_gpu_free(pf *p);

#endif
