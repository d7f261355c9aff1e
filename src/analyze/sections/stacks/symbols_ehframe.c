/* symbols_ehframe.c — function boundaries from a module's .eh_frame, for
 * code without symbols (a stripped program or library).
 *
 * Every function the compiler emitted unwind information for has one FDE
 * in .eh_frame, a section that is loaded at run time and so survives
 * `strip`: its initial location and address range are the function's
 * start and end. symbols.c names an address without a symbol after the
 * FDE that covers it ("module+0xSTART"), so all the samples of one
 * function land on one name. The section is read as found in the file
 * (format: the LSB's "Exception Frame" chapter, DWARF's CFA encodings);
 * anything malformed ends the walk with what was read so far.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/symbols_ehframe.h"

/* DW_EH_PE_* pointer encodings: the low nibble is the format, the next
 * bits how the value is applied. */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10

typedef struct cur {
  const uint8_t *p, *end;
  int bad;
} cur;

static uint64_t get_n(cur *c, size_t n) {
  if (c->bad || (size_t)(c->end - c->p) < n) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)c->p[i] << (8 * i); /* little endian: x86-64, aarch64 */
  c->p += n;
  return v;
}

static uint64_t get_uleb(cur *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; !c->bad; shift += 7) {
    if (c->p >= c->end || shift > 63) break;
    uint8_t b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  c->bad = 1;
  return 0;
}

static int64_t get_sleb(cur *c) {
  uint64_t v = 0;
  unsigned shift = 0;
  for (; !c->bad; shift += 7) {
    if (c->p >= c->end || shift > 63) {
      c->bad = 1;
      return 0;
    }
    uint8_t b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (shift + 7 < 64 && (v >> (shift + 6)) & 1) v |= ~0ull << (shift + 7);
  return (int64_t)v;
}

/* A value in encoding `enc` at c; `at` is its link-time address (for
 * pc-relative values). Sets c->bad for encodings a function start does
 * not use here (indirect, data- or text-relative). */
static uint64_t get_encoded(cur *c, uint8_t enc, uint64_t at) {
  uint64_t v;
  switch (enc & PE_FORMAT) {
  case 0x00: v = get_n(c, 8); break;                              /* absptr (64-bit) */
  case 0x01: v = get_uleb(c); break;                              /* uleb128 */
  case 0x02: v = get_n(c, 2); break;                              /* udata2 */
  case 0x03: v = get_n(c, 4); break;                              /* udata4 */
  case 0x04: v = get_n(c, 8); break;                              /* udata8 */
  case 0x09: v = (uint64_t)get_sleb(c); break;                    /* sleb128 */
  case 0x0a: v = (uint64_t)(int64_t)(int16_t)get_n(c, 2); break;  /* sdata2 */
  case 0x0b: v = (uint64_t)(int64_t)(int32_t)get_n(c, 4); break;  /* sdata4 */
  case 0x0c: v = get_n(c, 8); break;                              /* sdata8 */
  default: c->bad = 1; return 0;
  }
  if (enc & PE_INDIRECT) c->bad = 1;
  switch (enc & PE_APPLY) {
  case 0: break;
  case PE_PCREL: v += at; break;
  default: c->bad = 1;
  }
  return v;
}

/* The FDE pointer encoding of the CIE at c (its id already read), or
 * PE_OMIT when it cannot be read. */
static uint8_t cie_encoding(cur c) {
  uint8_t version = (uint8_t)get_n(&c, 1);
  const uint8_t *aug = c.p;
  while (c.p < c.end && *c.p) c.p++;
  if (c.p >= c.end) return PE_OMIT;
  size_t aug_len = (size_t)(c.p - aug);
  c.p++;
  if (aug_len >= 2 && aug[0] == 'e' && aug[1] == 'h') get_n(&c, 8); /* old GCC's eh data */
  get_uleb(&c);                                                      /* code alignment */
  get_sleb(&c);                                                      /* data alignment */
  if (version == 1) get_n(&c, 1);                                    /* return address register */
  else get_uleb(&c);
  if (c.bad) return PE_OMIT;
  if (!aug_len || aug[0] != 'z') return 0; /* no augmentation data: absolute pointers */
  get_uleb(&c);                            /* augmentation data length */
  for (size_t i = 1; i < aug_len && !c.bad; i++) {
    switch (aug[i]) {
    case 'R': return (uint8_t)get_n(&c, 1);
    case 'L': get_n(&c, 1); break;
    case 'P': {
      uint8_t penc = (uint8_t)get_n(&c, 1);
      get_encoded(&c, penc & PE_FORMAT, 0); /* only skipped: its format gives its size */
      break;
    }
    case 'S': case 'B': case 'G': break;
    default: return 0; /* unknown: the FDE encoding, if any, cannot be reached */
    }
  }
  return c.bad ? PE_OMIT : 0;
}

static int cmp_range(const void *a, const void *b) {
  const prof__fnrange *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return (x->size > y->size) - (x->size < y->size);
}

prof__fnrange *prof__ehframe_ranges(const uint8_t *sec, size_t len, uint64_t sec_addr, size_t *n) {
  *n = 0;
  size_t cap = len / 16 + 1, k = 0;
  prof__fnrange *v = calloc(cap, sizeof *v);
  if (!v) return NULL;
  for (size_t off = 0; off + 4 <= len && k < cap;) {
    cur c = {sec + off, sec + len, 0};
    uint64_t size = get_n(&c, 4);
    if (size == 0) break; /* terminator */
    if (size == 0xffffffffu) size = get_n(&c, 8);
    size_t body = (size_t)(c.p - sec);
    if (c.bad || size > len - body) break;
    c.end = sec + body + size;
    uint32_t id = (uint32_t)get_n(&c, 4);
    off = body + (size_t)size;
    if (!id || id > body) continue; /* a CIE, or a pointer out of the section */
    const uint8_t *cie = sec + body - id;
    cur cc = {cie, sec + len, 0};
    uint64_t csize = get_n(&cc, 4);
    if (csize == 0xffffffffu) csize = get_n(&cc, 8);
    size_t cbody = (size_t)(cc.p - sec);
    if (cc.bad || csize > len - cbody || csize < 4) continue;
    cc.end = sec + cbody + csize;
    if (get_n(&cc, 4) != 0) continue; /* not a CIE */
    uint8_t enc = cie_encoding(cc);
    if (enc == PE_OMIT) continue;
    uint64_t start = get_encoded(&c, enc, sec_addr + (uint64_t)(c.p - sec));
    uint64_t range = get_encoded(&c, enc & PE_FORMAT, 0);
    if (c.bad || !start || !range) continue;
    v[k].start = start;
    v[k].size = range;
    k++;
  }
  qsort(v, k, sizeof *v, cmp_range);
  *n = k;
  return v;
}

const prof__fnrange *prof__fnrange_find(const prof__fnrange *v, size_t n, uint64_t a) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].start <= a) lo = mid + 1;
    else hi = mid;
  }
  /* the nearest start at or below a, or one of the few before it when
   * ranges overlap (a function split into hot and cold parts has two) */
  for (size_t k = lo; k-- > 0 && lo - k <= 4;)
    if (a - v[k].start < v[k].size) return &v[k];
  return NULL;
}
