/* pb_read.h — a minimal protobuf reader for the tests that decode what the
 * exporters write (pprof, Perfetto): varints, fixed64 and length-delimited
 * fields, any malformation marking the reader bad. Include after cmocka.h. */
#ifndef TEST_PB_READ_H
#define TEST_PB_READ_H

#include <stdint.h>
#include <string.h>

typedef struct pb {
  const uint8_t *p, *end;
  int bad;
} pb;

static inline uint64_t pb_varint(pb *b) {
  uint64_t v = 0;
  for (int s = 0; s < 64; s += 7) {
    if (b->p >= b->end) break;
    uint8_t c = *b->p++;
    v |= (uint64_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
  b->bad = 1;
  return 0;
}

/* Next field: 0 at the end or on a malformation; wire 0 and 1 set *val,
 * wire 2 the sub-reader. */
static inline int pb_next(pb *b, int *field, int *wire, uint64_t *val, pb *sub) {
  if (b->p >= b->end || b->bad) return 0;
  *val = 0;
  uint64_t k = pb_varint(b);
  *field = (int)(k >> 3);
  *wire = (int)(k & 7);
  if (*wire == 0) {
    *val = pb_varint(b);
  } else if (*wire == 1) {
    if (b->end - b->p < 8) return b->bad = 1, 0;
    for (int i = 0; i < 8; i++) *val |= (uint64_t)b->p[i] << (8 * i);
    b->p += 8;
  } else if (*wire == 2) {
    uint64_t n = pb_varint(b);
    if (n > (uint64_t)(b->end - b->p)) return b->bad = 1, 0;
    *sub = (pb){b->p, b->p + n, 0};
    b->p += n;
  } else {
    b->bad = 1;
  }
  if (*field <= 0) b->bad = 1;
  return !b->bad;
}

#endif
