/* pb.c — the protobuf wire format (see pb.h). */
#include <string.h>

#include "analyze/export/pb.h"

void prof__exp_pb_tag(prof__buf *b, unsigned field, unsigned wire) {
  prof__buf_varint(b, (uint64_t)field << 3 | wire);
}

void prof__exp_pb_varint(prof__buf *b, unsigned field, uint64_t v) {
  prof__exp_pb_tag(b, field, PROF_PB_VARINT);
  prof__buf_varint(b, v);
}

void prof__exp_pb_fixed64(prof__buf *b, unsigned field, uint64_t u) {
  prof__exp_pb_tag(b, field, PROF_PB_I64);
  for (int i = 0; i < 8; i++) prof__buf_u8(b, (uint8_t)(u >> (8 * i)));
}

void prof__exp_pb_f64(prof__buf *b, unsigned field, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  prof__exp_pb_fixed64(b, field, u);
}

void prof__exp_pb_f32(prof__buf *b, unsigned field, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  prof__exp_pb_tag(b, field, PROF_PB_I32);
  for (int i = 0; i < 4; i++) prof__buf_u8(b, (uint8_t)(u >> (8 * i)));
}

void prof__exp_pb_bytes(prof__buf *b, unsigned field, const void *p, size_t n) {
  prof__exp_pb_tag(b, field, PROF_PB_LEN);
  prof__buf_varint(b, n);
  prof__buf_put(b, p, n);
}

void prof__exp_pb_msg(prof__buf *b, unsigned field, prof__buf *m) {
  prof__exp_pb_bytes(b, field, m->p, m->len);
  if (m->oom) b->oom = 1;
  prof__buf_free(m);
}
