/* export_perfetto_gpu.c — GPU activity in the Perfetto export, read from
 * the GPU chunks in the same pass as the events.
 *
 * Each device is a process ("GPU <n>: <name>", pid 1000000000 + n, as in
 * the Chrome export) with one track per stream ("stream <s>") holding its
 * kernels, copies and sets as slices, and a counter track of the device
 * memory allocated. Runtime and driver API calls and waits are slices on
 * tracks of their own under their CPU thread ("CUDA runtime", "CUDA
 * driver", "GPU waits"), apart from the thread's ranges so that neither
 * can end the other's slices. A flow (id: the correlation id) joins each
 * runtime API call to the GPU work it launched; a trace without API call
 * records gets a "launch" instant at each launch time on the launching
 * thread's runtime track instead, where the flow begins.
 *
 * Records of a stream may come out of order: a slice that begins exactly
 * where the stream's last one ended begins 1 ns later, and one that ends
 * exactly where it began ends 1 ns earlier, so that one end never closes
 * the other slice (trace_processor orders equal times by file position).
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_perfetto_int.h"
#include "analyze/sections/gpu/sec_gpu.h"
#include "analyze/util/array.h"
#include "trace/rec_gpu.h"

#define GPU_PID_BASE 1000000000LL

static const char *const api_track_names[3] = {"CUDA runtime", "CUDA driver", "GPU waits"};

void prof__pf_gpu_init(pf *p) {
  const gpu_summary *s = prof__sec_gpu_summary(p->an);
  p->gpu_api_flows = s && s->api_calls > 0;
}

static pf_device *device(pf *p, uint32_t id) {
  for (size_t i = 0; i < p->ndevs; i++)
    if (p->devs[i].id == id) return &p->devs[i];
  if (p->ndevs == sizeof p->devs / sizeof p->devs[0]) return NULL;
  pf_device *d = &p->devs[p->ndevs++];
  *d = (pf_device){.id = id, .uuid = prof__pf_new_uuid(p)};
  const gpu_summary *s = prof__sec_gpu_summary(p->an);
  const char *name = NULL;
  for (size_t i = 0; s && i < s->ndevices; i++)
    if (s->devices[i].id == id && s->devices[i].name) name = prof__an_str(p->an, s->devices[i].name);
  char buf[160];
  snprintf(buf, sizeof buf, "GPU %u%s%s", id, name ? ": " : "", name ? name : "");
  prof__pf_process_track(p, d->uuid, GPU_PID_BASE + (id & 0x3fffffff), buf); /* an int32 pid */
  return d;
}

static pf_stream *stream_of(pf *p, uint32_t dev, uint32_t stream) {
  uint64_t key = (uint64_t)dev << 32 | stream, at = prof__u64map_get(&p->stream_at, key);
  if (at) return &p->streams[at - 1];
  pf_device *d = device(p, dev);
  if (!d) return NULL;
  pf_stream *s = prof__arr_room(p->streams, &p->streams_cap, p->nstreams + 1, sizeof *s);
  if (!s) {
    p->err = PROF_ENOMEM;
    return NULL;
  }
  p->streams = s;
  if (prof__u64map_add(&p->stream_at, key, p->nstreams + 1)) {
    p->err = PROF_ENOMEM;
    return NULL;
  }
  s = &p->streams[p->nstreams++];
  *s = (pf_stream){.device = dev, .stream = stream, .uuid = prof__pf_new_uuid(p)};
  char buf[48];
  snprintf(buf, sizeof buf, "stream %u", stream);
  prof__pf_track(p, s->uuid, d->uuid, buf, 0, 0);
  return s;
}

/* A slice [b, e] on a track whose last slice is `last` (began at *last_begin). */
static void slice(pf *p, uint64_t track, prof__exp_crange_track *last, uint64_t *last_begin, pf_te te, uint64_t b,
                  uint64_t e) {
  if (e < b) e = b;
  if (last->any && b == last->last_end && e > b + 1) b++;
  if (last_begin && *last_begin && e == *last_begin && e > b + 1) e--;
  te.type = PF_SLICE_BEGIN;
  te.track = track;
  prof__pf_track_event(p, b, &te);
  te = (pf_te){.type = PF_SLICE_END, .track = track, .cat = PF_CAT_NONE};
  prof__pf_track_event(p, e, &te);
  prof__exp_crange_track_end(last, b, e);
  if (last_begin) *last_begin = b;
}

/* The API track `k` (0 runtime, 1 driver, 2 waits) of CPU thread tid, or NULL. */
static pf_thread *api_thread(pf *p, uint32_t tid, int k) {
  size_t ti = tid ? prof__an_thread_index(p->an, tid) : SIZE_MAX;
  if (ti == SIZE_MAX) return NULL;
  pf_thread *t = &p->th[ti];
  if (!t->gpu_uuid[k]) {
    t->gpu_uuid[k] = prof__pf_new_uuid(p);
    prof__pf_track(p, t->gpu_uuid[k], t->uuid, api_track_names[k], 0, 0);
  }
  return t;
}

static void launch_instant(pf *p, const prof__gpu_rec *r) {
  pf_thread *t = api_thread(p, r->tid, 0);
  if (!t) return;
  pf_te te = {.type = PF_INSTANT, .track = t->gpu_uuid[0], .dyn = "launch", .cat = PF_CAT_LAUNCH, .flow_out = r->corr};
  prof__pf_track_event(p, r->launch, &te);
}

static void gpu_op(pf *p, const prof__gpu_rec *r) {
  pf_stream *s = stream_of(p, r->device, r->stream);
  if (!s) return;
  char name[96];
  pf_te te = {.cat = PF_CAT_KERNEL};
  if (r->kind == PROF_GPU_KERNEL) {
    te.sid = r->name;
    if (!te.sid) te.lit = "kernel";
  } else if (r->kind == PROF_GPU_MEMCPY) {
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", prof__rec_gpu_copy_name(r->sub),
             prof__rec_gpu_mem_name(r->src_mem), prof__rec_gpu_mem_name(r->dst_mem));
    te.dyn = name;
    te.cat = PF_CAT_MEMCPY;
  } else {
    snprintf(name, sizeof name, "Memset (%s)", prof__rec_gpu_mem_name(r->src_mem));
    te.dyn = name;
    te.cat = PF_CAT_MEMSET;
  }
  int flow = r->corr && (p->gpu_api_flows || (r->launch && r->tid));
  if (flow && !p->gpu_api_flows) launch_instant(p, r);
  if (flow) te.flow_in = r->corr;
  slice(p, s->uuid, &s->last, &s->last_begin, te, r->start, r->end);
}

static void cpu_side(pf *p, const prof__gpu_rec *r) {
  int k = r->kind == PROF_GPU_SYNC ? 2 : r->sub == PROF_GPU_API_DRIVER ? 1 : 0;
  pf_thread *t = api_thread(p, r->tid, k);
  if (!t) return;
  pf_te te = {.cat = k == 2 ? PF_CAT_SYNC : k == 1 ? PF_CAT_DRIVER : PF_CAT_RUNTIME};
  if (k == 2) te.dyn = "synchronize";
  else te.sid = r->name;
  if (!te.sid && !te.dyn) te.lit = "?";
  if (k == 0 && r->corr) te.flow_out = r->corr;
  slice(p, t->gpu_uuid[k], &t->gpu_last[k], NULL, te, r->start, r->end);
}

static void memory(pf *p, const prof__gpu_rec *r) {
  pf_device *d = device(p, r->device);
  if (!d) return;
  if (!d->mem_uuid) {
    d->mem_uuid = prof__pf_new_uuid(p);
    prof__pf_track(p, d->mem_uuid, d->uuid, "GPU memory allocated", 1, 1);
  }
  d->mem += r->sub == PROF_GPU_MEMOP_ALLOC ? (int64_t)r->bytes : -(int64_t)r->bytes;
  pf_te te = {.type = PF_COUNTER, .track = d->mem_uuid, .cat = PF_CAT_NONE, .has_value = 1, .value = (double)d->mem};
  prof__pf_track_event(p, r->start, &te);
}

void prof__pf_gpu_chunk(pf *p, const uint8_t *data, size_t len) {
  prof__gpu_dec d;
  prof__gpu_rec r;
  if (prof__rec_gpu_dec_init(&d, data, len)) return;
  while (!p->err && prof__rec_gpu_dec_next(&d, &r) == 1) switch (r.kind) {
    case PROF_GPU_KERNEL:
    case PROF_GPU_MEMCPY:
    case PROF_GPU_MEMSET: gpu_op(p, &r); break;
    case PROF_GPU_API:
    case PROF_GPU_SYNC: cpu_side(p, &r); break;
    case PROF_GPU_MEMORY: memory(p, &r); break;
    default: break;
    }
}

void prof__pf_gpu_free(pf *p) {
  free(p->streams);
  p->streams = NULL;
  prof__u64map_free(&p->stream_at);
}
