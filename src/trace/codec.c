/* codec.c — byte-level building blocks of the trace format: growable
 * buffers, LEB128 varints, zigzag signed varints, bounds-checked cursors and
 * CRC-32C. Shared by the trace writer, the reader and producers' chunk
 * codecs. */
#include <stdlib.h>
#include <string.h>

#include "trace.h"

void prof__buf_free(prof__buf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

int prof__buf_reserve(prof__buf *b, size_t extra) {
  if (b->oom) return 0;
  if (b->len + extra <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void prof__buf_put(prof__buf *b, const void *p, size_t n) {
  if (!n || !prof__buf_reserve(b, n)) return;
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

void prof__buf_u8(prof__buf *b, uint8_t v) {
  if (!prof__buf_reserve(b, 1)) return;
  b->p[b->len++] = v;
}

void prof__buf_varint(prof__buf *b, uint64_t v) {
  if (!prof__buf_reserve(b, 10)) return;
  uint8_t *q = b->p + b->len;
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q++ = (uint8_t)v;
  b->len = (size_t)(q - b->p);
}

void prof__buf_svarint(prof__buf *b, int64_t v) {
  prof__buf_varint(b, prof__zigzag(v));
}

void prof__buf_str(prof__buf *b, const char *s, size_t len) {
  prof__buf_varint(b, len);
  prof__buf_put(b, s, len);
}

uint8_t prof__cur_u8(prof__cur *c) {
  if (c->p >= c->end) {
    c->bad = 1;
    return 0;
  }
  return *c->p++;
}

uint64_t prof__cur_varint(prof__cur *c) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (c->p >= c->end) break;
    uint8_t byte = *c->p++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  c->bad = 1;
  return 0;
}

int64_t prof__cur_svarint(prof__cur *c) {
  return prof__unzigzag(prof__cur_varint(c));
}

const char *prof__cur_str(prof__cur *c, size_t *len) {
  uint64_t n = prof__cur_varint(c);
  if (c->bad || n > (uint64_t)(c->end - c->p)) {
    c->bad = 1;
    *len = 0;
    return NULL;
  }
  const char *s = (const char *)c->p;
  c->p += n;
  *len = (size_t)n;
  return s;
}

/* CRC-32C (Castagnoli), reflected polynomial 0x82F63B78. x86-64 CPUs with
 * SSE4.2 compute it in hardware (the crc32 instruction implements exactly
 * this polynomial); elsewhere a table does it a byte at a time. The table is
 * computed by the compiler (CRC_ENTRY: eight shift-and-xor rounds), so the
 * codec keeps no state. */
#define CRC_POLY 0x82F63B78u
#define CRC_ROUND(c) (((c) >> 1) ^ ((0u - ((c) & 1u)) & CRC_POLY))
#define CRC_ENTRY(i) CRC_ROUND(CRC_ROUND(CRC_ROUND(CRC_ROUND(CRC_ROUND(CRC_ROUND(CRC_ROUND(CRC_ROUND((uint32_t)(i)))))))))
#define CRC_4(i) CRC_ENTRY(i), CRC_ENTRY((i) + 1), CRC_ENTRY((i) + 2), CRC_ENTRY((i) + 3)
#define CRC_16(i) CRC_4(i), CRC_4((i) + 4), CRC_4((i) + 8), CRC_4((i) + 12)
#define CRC_64(i) CRC_16(i), CRC_16((i) + 16), CRC_16((i) + 32), CRC_16((i) + 48)
static const uint32_t crc_table[256] = {CRC_64(0), CRC_64(64), CRC_64(128), CRC_64(192)};

/* Whether the CPU has the crc32 instruction. libgcc fills the CPU model at
 * load time; __builtin_cpu_init makes sure of it and is idempotent. */
static int crc_hw(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return 0;
#endif
}

static uint32_t crc_table_run(uint32_t crc, const uint8_t *q, size_t n) {
  while (n--) crc = crc_table[(crc ^ *q++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw_run(uint32_t crc, const uint8_t *q, size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, q, 8);
    c = __builtin_ia32_crc32di(c, w);
    q += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *q++);
  return c32;
}
#endif

uint32_t prof__crc32c(uint32_t crc, const void *p, size_t n) {
#if defined(__x86_64__)
  if (crc_hw()) return ~crc_hw_run(~crc, p, n);
#endif
  return ~crc_table_run(~crc, p, n);
}

/* The table path, for tests that compare both. */
uint32_t prof__crc32c_sw(uint32_t crc, const void *p, size_t n) {
  return ~crc_table_run(~crc, p, n);
}
