/* rec_gpu.c — packing and unpacking of GPU activity records (PROF_CHUNK_GPU
 * payloads). Varints throughout; start times are deltas against the
 * previous record of the same payload, end times are durations. The layout
 * per kind is in docs/trace-format-gpu.md.
 */
#include <string.h>

#include "mlprof.h"
#include "rec_gpu.h"

static void put_launch(prof__buf *b, const prof__gpu_rec *r) {
  prof__buf_u8(b, r->launch != 0);
  if (r->launch) prof__buf_svarint(b, (int64_t)(r->launch - r->start));
}

static void put_origin(prof__buf *b, const prof__gpu_rec *r) {
  prof__buf_varint(b, r->tid);
  prof__buf_varint(b, r->range);
  put_launch(b, r);
}

static void put_kernel(prof__buf *b, const prof__gpu_rec *r) {
  prof__buf_varint(b, r->name);
  for (int i = 0; i < 3; i++) prof__buf_svarint(b, r->grid[i]);
  for (int i = 0; i < 3; i++) prof__buf_svarint(b, r->block[i]);
  prof__buf_varint(b, r->regs);
  prof__buf_varint(b, r->smem_static);
  prof__buf_varint(b, r->smem_dynamic);
}

static void put_device(prof__buf *b, const prof__gpu_rec *r) {
  const uint32_t v[] = {r->name, r->cc_major, r->cc_minor, r->sm_count, r->max_threads_per_sm,
                        r->max_warps_per_sm, r->max_blocks_per_sm, r->max_regs_per_sm, r->max_smem_per_sm};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) prof__buf_varint(b, v[i]);
  prof__buf_varint(b, r->mem_bytes);
}

static void put_body(prof__buf *b, const prof__gpu_rec *r) {
  switch (r->kind) {
  case PROF_GPU_KERNEL:
    prof__buf_varint(b, r->stream);
    prof__buf_varint(b, r->corr);
    put_origin(b, r);
    put_kernel(b, r);
    break;
  case PROF_GPU_MEMCPY:
  case PROF_GPU_MEMSET:
    prof__buf_varint(b, r->stream);
    prof__buf_varint(b, r->corr);
    put_origin(b, r);
    prof__buf_u8(b, r->src_mem);
    prof__buf_u8(b, r->dst_mem);
    prof__buf_varint(b, r->bytes);
    break;
  case PROF_GPU_MEMORY:
    prof__buf_varint(b, r->stream);
    prof__buf_varint(b, r->corr);
    prof__buf_u8(b, r->src_mem);
    prof__buf_varint(b, r->bytes);
    prof__buf_varint(b, r->addr);
    break;
  case PROF_GPU_SYNC:
    prof__buf_varint(b, r->stream);
    prof__buf_varint(b, r->corr);
    prof__buf_varint(b, r->tid);
    break;
  case PROF_GPU_API:
    prof__buf_varint(b, r->corr);
    prof__buf_varint(b, r->name);
    prof__buf_varint(b, r->tid);
    prof__buf_varint(b, r->range);
    break;
  case PROF_GPU_DEVICE: put_device(b, r); break;
  case PROF_GPU_DROPPED: prof__buf_varint(b, r->bytes); break;
  default: break; /* OVERHEAD: the common part only */
  }
}

void prof__rec_gpu_encode(prof__buf *b, const prof__gpu_rec *r, prof__gpu_rec *prev) {
  if (!b || !r || !prev || r->kind < 1 || r->kind > PROF_GPU_KIND_MAX) return;
  if (b->len == 0) prof__buf_u8(b, PROF_GPU_FORMAT);
  uint64_t end = r->end < r->start ? r->start : r->end;
  prof__buf_u8(b, r->kind);
  prof__buf_u8(b, r->sub);
  prof__buf_varint(b, r->device);
  prof__buf_svarint(b, (int64_t)(r->start - prev->start));
  prof__buf_varint(b, end - r->start);
  put_body(b, r);
  prev->start = r->start;
}

int prof__rec_gpu_dec_init(prof__gpu_dec *d, const void *data, size_t len) {
  memset(d, 0, sizeof *d);
  if (!data || len == 0) {
    d->bad = 1;
    return PROF_EFORMAT;
  }
  d->cur.p = data;
  d->cur.end = (const uint8_t *)data + len;
  if (prof__cur_u8(&d->cur) != PROF_GPU_FORMAT) {
    d->bad = 1;
    return PROF_EVERSION;
  }
  return 0;
}

static uint32_t get_u32(prof__cur *c) {
  uint64_t v = prof__cur_varint(c);
  if (v > UINT32_MAX) c->bad = 1;
  return (uint32_t)v;
}

static int32_t get_i32(prof__cur *c) {
  int64_t v = prof__cur_svarint(c);
  if (v > INT32_MAX || v < INT32_MIN) c->bad = 1;
  return (int32_t)v;
}

static void get_origin(prof__cur *c, prof__gpu_rec *r) {
  r->tid = get_u32(c);
  r->range = get_u32(c);
  if (prof__cur_u8(c)) r->launch = r->start + (uint64_t)prof__cur_svarint(c);
}

static void get_kernel(prof__cur *c, prof__gpu_rec *r) {
  r->name = get_u32(c);
  for (int i = 0; i < 3; i++) r->grid[i] = get_i32(c);
  for (int i = 0; i < 3; i++) r->block[i] = get_i32(c);
  r->regs = get_u32(c);
  r->smem_static = get_u32(c);
  r->smem_dynamic = get_u32(c);
}

static void get_device(prof__cur *c, prof__gpu_rec *r) {
  uint32_t *v[] = {&r->name, &r->cc_major, &r->cc_minor, &r->sm_count, &r->max_threads_per_sm,
                   &r->max_warps_per_sm, &r->max_blocks_per_sm, &r->max_regs_per_sm, &r->max_smem_per_sm};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) *v[i] = get_u32(c);
  r->mem_bytes = prof__cur_varint(c);
}

static void get_body(prof__cur *c, prof__gpu_rec *r) {
  switch (r->kind) {
  case PROF_GPU_KERNEL:
    r->stream = get_u32(c);
    r->corr = get_u32(c);
    get_origin(c, r);
    get_kernel(c, r);
    break;
  case PROF_GPU_MEMCPY:
  case PROF_GPU_MEMSET:
    r->stream = get_u32(c);
    r->corr = get_u32(c);
    get_origin(c, r);
    r->src_mem = prof__cur_u8(c);
    r->dst_mem = prof__cur_u8(c);
    r->bytes = prof__cur_varint(c);
    break;
  case PROF_GPU_MEMORY:
    r->stream = get_u32(c);
    r->corr = get_u32(c);
    r->src_mem = prof__cur_u8(c);
    r->bytes = prof__cur_varint(c);
    r->addr = prof__cur_varint(c);
    break;
  case PROF_GPU_SYNC:
    r->stream = get_u32(c);
    r->corr = get_u32(c);
    r->tid = get_u32(c);
    break;
  case PROF_GPU_API:
    r->corr = get_u32(c);
    r->name = get_u32(c);
    r->tid = get_u32(c);
    r->range = get_u32(c);
    break;
  case PROF_GPU_DEVICE: get_device(c, r); break;
  case PROF_GPU_DROPPED: r->bytes = prof__cur_varint(c); break;
  default: break;
  }
}

int prof__rec_gpu_dec_next(prof__gpu_dec *d, prof__gpu_rec *r) {
  if (d->bad) return PROF_EFORMAT;
  if (d->cur.p >= d->cur.end) return 0;
  prof__cur *c = &d->cur;
  memset(r, 0, sizeof *r);
  r->kind = prof__cur_u8(c);
  r->sub = prof__cur_u8(c);
  r->device = get_u32(c);
  r->start = d->prev.start + (uint64_t)prof__cur_svarint(c);
  uint64_t dur = prof__cur_varint(c);
  r->end = r->start + dur;
  if (r->kind < 1 || r->kind > PROF_GPU_KIND_MAX || r->end < r->start) c->bad = 1;
  if (!c->bad) get_body(c, r);
  if (c->bad) {
    d->bad = 1;
    return PROF_EFORMAT;
  }
  d->prev.start = r->start;
  return 1;
}

const char *prof__rec_gpu_kind_name(int kind) {
  static const char *const n[] = {"?", "kernel", "memcpy", "memset", "memory", "sync", "api", "overhead",
                                  "device", "dropped"};
  return kind >= 1 && kind <= PROF_GPU_KIND_MAX ? n[kind] : "?";
}

const char *prof__rec_gpu_copy_name(int dir) {
  static const char *const n[] = {"other", "h2d", "d2h", "d2d", "h2h", "p2p"};
  return dir >= 0 && dir < PROF_GPU_COPY_COUNT ? n[dir] : "other";
}

const char *prof__rec_gpu_mem_name(int mem) {
  static const char *const n[] = {"unknown", "pageable", "pinned", "device", "array", "managed"};
  return mem >= 0 && mem <= PROF_GPU_MEM_MANAGED ? n[mem] : "unknown";
}
