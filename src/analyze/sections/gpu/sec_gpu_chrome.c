/* sec_gpu_chrome.c — GPU activity in the Chrome Trace Event export.
 *
 * One process per GPU ("GPU <n>: <name>"), one track per stream; kernels,
 * copies and sets are complete events with the categories PyTorch's traces
 * use ("kernel", "gpu_memcpy", "gpu_memset"), runtime calls are
 * "cuda_runtime" events on their CPU thread, and a flow arrow (category
 * "ac2g", id = correlation id) joins each launch to its GPU work. Device
 * memory in use is a counter track of the GPU process. Every timed event
 * passes prof__chrome_keep() (the export's window and event cap). Kernels,
 * copies, sets and calls are written as ranges by export/chrome_range.h
 * (a zero-length one as a begin/end pair).
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/chrome_range.h"
#include "analyze/sections/gpu/sec_gpu.h"
#include "analyze/util/array.h"

#define GPU_PID_BASE 1000000000LL /* GPU processes: base + device id */

typedef struct track {
  uint32_t device, stream;
  prof__exp_crange_track last; /* the stream's last complete event */
} track;

typedef struct gx {
  prof__an *an;
  prof__json *j;
  uint64_t base;
  long long pid;
  track *tracks;
  size_t ntracks, cap;
  uint32_t devs[64];
  size_t ndevs;
  int64_t mem[64]; /* bytes in use, parallel to devs */
} gx;

static void put_us(gx *x, const char *key, uint64_t ns) {
  char buf[40];
  snprintf(buf, sizeof buf, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
  prof__json_key(x->j, key);
  prof__json_raw(x->j, buf);
}

static uint64_t rel(const gx *x, uint64_t t) { return t > x->base ? t - x->base : 0; }

static void head(gx *x, const char *name, const char *ph, const char *cat, long long pid, uint64_t tid) {
  prof__json_obj_begin(x->j);
  prof__json_kstr(x->j, "name", name);
  prof__json_kstr(x->j, "ph", ph);
  if (cat) prof__json_kstr(x->j, "cat", cat);
  prof__json_kint(x->j, "pid", pid);
  prof__json_kuint(x->j, "tid", tid);
}

static void meta(gx *x, const char *what, long long pid, uint64_t tid, const char *name) {
  head(x, what, "M", NULL, pid, tid);
  prof__json_key(x->j, "args");
  prof__json_obj_begin(x->j);
  prof__json_kstr(x->j, "name", name);
  prof__json_obj_end(x->j);
  prof__json_obj_end(x->j);
}

static size_t dev_index(gx *x, uint32_t device, const char *name) {
  for (size_t i = 0; i < x->ndevs; i++)
    if (x->devs[i] == device) return i;
  if (x->ndevs == 64) return 63;
  char buf[160];
  snprintf(buf, sizeof buf, "GPU %u%s%s", device, name ? ": " : "", name ? name : "");
  meta(x, "process_name", GPU_PID_BASE + device, 0, buf);
  x->devs[x->ndevs] = device;
  return x->ndevs++;
}

static track *see_track(gx *x, uint32_t device, uint32_t stream) {
  for (size_t i = 0; i < x->ntracks; i++)
    if (x->tracks[i].device == device && x->tracks[i].stream == stream) return &x->tracks[i];
  track *t = prof__arr_room(x->tracks, &x->cap, x->ntracks + 1, sizeof *t);
  if (!t) return NULL;
  x->tracks = t;
  x->tracks[x->ntracks++] = (track){device, stream, {0, 0}};
  dev_index(x, device, NULL);
  char buf[48];
  snprintf(buf, sizeof buf, "stream %u", stream);
  meta(x, "thread_name", GPU_PID_BASE + device, stream, buf);
  return &x->tracks[x->ntracks - 1];
}

static void flow(gx *x, const prof__gpu_rec *r) {
  if (!r->launch || !r->tid || !r->corr) return;
  head(x, "launch", "s", "ac2g", x->pid, r->tid);
  prof__json_kuint(x->j, "id", r->corr);
  put_us(x, "ts", rel(x, r->launch));
  prof__json_obj_end(x->j);
  head(x, "launch", "f", "ac2g", GPU_PID_BASE + r->device, r->stream);
  prof__json_kuint(x->j, "id", r->corr);
  prof__json_kstr(x->j, "bp", "e");
  put_us(x, "ts", rel(x, r->start));
  prof__json_obj_end(x->j);
}

static void ints(prof__json *j, const char *key, const int32_t v[3]) {
  prof__json_key(j, key);
  prof__json_arr_begin(j);
  for (int i = 0; i < 3; i++) prof__json_int(j, v[i]);
  prof__json_arr_end(j);
}

static void common_args(gx *x, const prof__gpu_rec *r) {
  prof__json_kuint(x->j, "device", r->device);
  prof__json_kuint(x->j, "stream", r->stream);
  prof__json_kuint(x->j, "correlation", r->corr);
  if (r->range) prof__json_kstr(x->j, "range", prof__an_str(x->an, r->range));
}

/* What the args writers of a range need. */
typedef struct op_ctx {
  gx *x;
  const prof__gpu_rec *r;
} op_ctx;

static void gpu_op_args(prof__json *j, const void *ctx) {
  const op_ctx *o = ctx;
  const prof__gpu_rec *r = o->r;
  common_args(o->x, r);
  if (r->kind == PROF_GPU_KERNEL) {
    ints(j, "grid", r->grid);
    ints(j, "block", r->block);
    prof__json_kuint(j, "registers per thread", r->regs);
    prof__json_kuint(j, "shared memory", (uint64_t)r->smem_static + r->smem_dynamic);
  } else {
    prof__json_kuint(j, "bytes", r->bytes);
    if (r->end > r->start)
      prof__json_knum(j, "memory bandwidth (GB/s)", (double)r->bytes / (double)(r->end - r->start));
  }
}

static void gpu_op(gx *x, const prof__gpu_rec *r) {
  char name[96];
  const char *cat = r->kind == PROF_GPU_KERNEL ? "kernel" : r->kind == PROF_GPU_MEMCPY ? "gpu_memcpy" : "gpu_memset";
  if (r->kind == PROF_GPU_MEMCPY)
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", prof__rec_gpu_copy_name(r->sub), prof__rec_gpu_mem_name(r->src_mem),
             prof__rec_gpu_mem_name(r->dst_mem));
  else if (r->kind == PROF_GPU_MEMSET)
    snprintf(name, sizeof name, "Memset (%s)", prof__rec_gpu_mem_name(r->src_mem));
  if (!prof__chrome_keep(x->an, r->start, r->end)) return;
  track *tk = see_track(x, r->device, r->stream);
  op_ctx o = {x, r};
  uint64_t b = rel(x, r->start), e = rel(x, r->end);
  /* Back to back with the stream's previous operation: 1 ns later (chrome_range.h).
   * Records are not sorted here, so only an exact touch moves. */
  if (tk && tk->last.any && b == tk->last.last_end && e > b + 1) b++;
  prof__exp_crange_write(x->j, GPU_PID_BASE + r->device, r->stream,
                         r->kind == PROF_GPU_KERNEL ? prof__an_str(x->an, r->name) : name, cat, b, e, gpu_op_args, &o);
  if (tk) prof__exp_crange_track_end(&tk->last, b, e);
  flow(x, r);
}

static void cpu_side_args(prof__json *j, const void *ctx) {
  const op_ctx *o = ctx;
  prof__json_kuint(j, "correlation", o->r->corr);
}

static void cpu_side(gx *x, const prof__gpu_rec *r) {
  const char *cat = r->kind == PROF_GPU_SYNC ? "cuda_sync" : r->sub == PROF_GPU_API_DRIVER ? "cuda_driver" : "cuda_runtime";
  const char *name = r->kind == PROF_GPU_SYNC ? "synchronize" : prof__an_str(x->an, r->name);
  if (!prof__chrome_keep(x->an, r->start, r->end)) return;
  op_ctx o = {x, r};
  prof__exp_crange_write(x->j, x->pid, r->tid, name, cat, rel(x, r->start), rel(x, r->end), cpu_side_args, &o);
}

static void memory(gx *x, const prof__gpu_rec *r) {
  size_t i = dev_index(x, r->device, NULL);
  x->mem[i] += r->sub == PROF_GPU_MEMOP_ALLOC ? (int64_t)r->bytes : -(int64_t)r->bytes;
  if (!prof__chrome_keep(x->an, r->start, r->start)) return; /* counted in x->mem all the same */
  head(x, "GPU memory allocated", "C", NULL, GPU_PID_BASE + r->device, 0);
  put_us(x, "ts", rel(x, r->start));
  prof__json_key(x->j, "args");
  prof__json_obj_begin(x->j);
  prof__json_kint(x->j, "bytes", x->mem[i]);
  prof__json_obj_end(x->j);
  prof__json_obj_end(x->j);
}

static void one(gx *x, const prof__gpu_rec *r) {
  switch (r->kind) {
  case PROF_GPU_KERNEL:
  case PROF_GPU_MEMCPY:
  case PROF_GPU_MEMSET: gpu_op(x, r); break;
  case PROF_GPU_API:
  case PROF_GPU_SYNC:
    if (r->tid) cpu_side(x, r);
    break;
  case PROF_GPU_MEMORY: memory(x, r); break;
  case PROF_GPU_DEVICE: {
    char buf[160]; /* named now even if the track was announced before */
    dev_index(x, r->device, NULL);
    snprintf(buf, sizeof buf, "GPU %u: %s", r->device, prof__an_str(x->an, r->name));
    meta(x, "process_name", GPU_PID_BASE + r->device, 0, buf);
    break;
  }
  default: break;
  }
}

int prof__sec_gpu_chrome(prof__an *an, prof__json *j, uint64_t base_ns, long long pid) {
  if (!an || !j) return PROF_EINVAL;
  int rc = prof__reader_rewind(an->reader);
  if (rc) return rc;
  gx x = {.an = an, .j = j, .base = base_ns, .pid = pid};
  prof__rec rec;
  while ((rc = prof__reader_next(an->reader, &rec)) == 1) {
    if (rec.kind != PROF_REC_CHUNK || rec.chunk_type != PROF_CHUNK_GPU) continue;
    prof__gpu_dec d;
    prof__gpu_rec r;
    if (prof__rec_gpu_dec_init(&d, rec.data, rec.len)) continue;
    while (prof__rec_gpu_dec_next(&d, &r) == 1) one(&x, &r);
  }
  free(x.tracks);
  return rc == PROF_ETRUNC ? 0 : rc;
}
