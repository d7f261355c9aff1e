/* test_ehframe.c — function boundaries from .eh_frame, which name the code
 * of a stripped module by function (symbols_ehframe.c): the FDEs of this
 * very program give its functions' starts and ends; hand-built CIEs with
 * pc-relative, absolute and 64-bit-length entries decode; truncated and
 * scrambled sections never read out of bounds (ASan) and give no range
 * outside what they hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/symbols_ehframe.h"
#include "helpers.h"

volatile int eh_sink;
__attribute__((noinline)) void eh_first(void) {
  for (int i = 0; i < 16; i++) eh_sink += i;
}
__attribute__((noinline)) void eh_second(int n) {
  for (int i = 0; i < n; i++) eh_sink ^= i * 3;
  eh_first();
}

typedef struct section {
  uint8_t *data;
  size_t len;
  uint64_t addr;
} section;

/* This program's .eh_frame, read from its file. */
static section own_eh_frame(void) {
  size_t len = 0;
  uint8_t *f = (uint8_t *)th_read_file("/proc/self/exe", &len);
  assert_non_null(f);
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
  const char *names = (const char *)f + sh[eh->e_shstrndx].sh_offset;
  section s = {0};
  for (int i = 0; i < eh->e_shnum; i++)
    if (strcmp(names + sh[i].sh_name, ".eh_frame") == 0) {
      s.len = sh[i].sh_size;
      s.addr = sh[i].sh_addr;
      s.data = malloc(s.len);
      assert_non_null(s.data);
      memcpy(s.data, f + sh[i].sh_offset, s.len);
    }
  free(f);
  assert_non_null(s.data);
  return s;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  *(uintptr_t *)arg = info->dlpi_addr;
  return 1; /* the program itself comes first */
}

static uint64_t link_addr(void (*fn)(void)) {
  uintptr_t bias = 0;
  dl_iterate_phdr(first_object, &bias);
  return (uint64_t)((uintptr_t)fn - bias);
}

static void own_functions_have_their_bounds(void **state) {
  (void)state;
  section s = own_eh_frame();
  size_t n = 0;
  prof__fnrange *v = prof__ehframe_ranges(s.data, s.len, s.addr, &n);
  assert_non_null(v);
  assert_true(n >= 10);
  void (*fns[])(void) = {eh_first, (void (*)(void))eh_second};
  for (size_t i = 0; i < 2; i++) {
    uint64_t a = link_addr(fns[i]);
    const prof__fnrange *r = prof__fnrange_find(v, n, a);
    assert_non_null(r);
    assert_true(r->start == a);                             /* the function's own start */
    assert_true(prof__fnrange_find(v, n, a + r->size - 1) == r); /* its last byte */
    const prof__fnrange *after = prof__fnrange_find(v, n, a + r->size);
    assert_true(after != r);
  }
  for (size_t i = 1; i < n; i++) assert_true(v[i - 1].start <= v[i].start);
  free(v);
  free(s.data);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* A CIE "zR" with FDE encoding `enc` at off; returns its length in bytes. */
static size_t cie(uint8_t *b, size_t off, uint8_t enc) {
  static const uint8_t body[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0};
  memcpy(b + off + 4, body, sizeof body);
  b[off + 4 + sizeof body - 1] = enc;
  put32(b + off, (uint32_t)sizeof body);
  return 4 + sizeof body;
}

/* An FDE of CIE at cie_off with 4-byte start and range; returns its length. */
static size_t fde(uint8_t *b, size_t off, size_t cie_off, uint32_t start, uint32_t range) {
  put32(b + off, 12);
  put32(b + off + 4, (uint32_t)(off + 4 - cie_off));
  put32(b + off + 8, start);
  put32(b + off + 12, range);
  return 16;
}

static void hand_built_entries_decode(void **state) {
  (void)state;
  uint8_t b[256];
  memset(b, 0, sizeof b);
  size_t off = 0, c1 = off;
  off += cie(b, off, 0x1b); /* pcrel | sdata4: GCC's default */
  size_t f1 = off;
  /* start at link-time 0x5000: pc-relative from the field (section at 0x1000) */
  off += fde(b, off, c1, (uint32_t)(0x5000 - (0x1000 + f1 + 8)), 0x40);
  size_t c2 = off;
  off += cie(b, off, 0x03); /* udata4, absolute */
  off += fde(b, off, c2, 0x3000, 0x20);
  /* an FDE with a 64-bit length field */
  put32(b + off, 0xffffffffu);
  uint64_t len64 = 12;
  memcpy(b + off + 4, &len64, 8);
  put32(b + off + 12, (uint32_t)(off + 12 - c2));
  put32(b + off + 16, 0x4000);
  put32(b + off + 20, 0x10);
  off += 24;
  off += 4; /* terminator: a zero length */
  size_t n = 0;
  prof__fnrange *v = prof__ehframe_ranges(b, off, 0x1000, &n);
  assert_non_null(v);
  assert_int_equal(n, 3);
  assert_true(v[0].start == 0x3000 && v[0].size == 0x20);
  assert_true(v[1].start == 0x4000 && v[1].size == 0x10);
  assert_true(v[2].start == 0x5000 && v[2].size == 0x40);
  assert_ptr_equal(prof__fnrange_find(v, n, 0x503f), &v[2]);
  assert_null(prof__fnrange_find(v, n, 0x5040));
  assert_null(prof__fnrange_find(v, n, 0x2fff));
  assert_null(prof__fnrange_find(v, n, 0x3020));
  free(v);
  /* an FDE pointing before the section, or at something that is no CIE */
  put32(b + f1 + 4, (uint32_t)(f1 + 4 + 64));
  v = prof__ehframe_ranges(b, off, 0x1000, &n);
  assert_int_equal(n, 2);
  free(v);
}

/* Every prefix of the real section and scrambled copies: no read outside
 * (ASan), a bounded count. */
static void broken_sections_stay_in_bounds(void **state) {
  (void)state;
  section s = own_eh_frame();
  size_t step = s.len > 4000 ? s.len / 4000 : 1;
  for (size_t len = 0; len <= s.len; len += step) {
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, s.data, len);
    size_t n = 0;
    prof__fnrange *v = prof__ehframe_ranges(copy, len, s.addr, &n);
    assert_true(n <= len / 16 + 1);
    free(v);
    free(copy);
  }
  srand(7);
  for (int round = 0; round < 200; round++) {
    uint8_t *copy = malloc(s.len);
    assert_non_null(copy);
    memcpy(copy, s.data, s.len);
    for (int k = 0; k < 16; k++) copy[(size_t)rand() % s.len] = (uint8_t)rand();
    size_t n = 0;
    prof__fnrange *v = prof__ehframe_ranges(copy, s.len, s.addr, &n);
    assert_true(n <= s.len / 16 + 1);
    free(v);
    free(copy);
  }
  free(s.data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(own_functions_have_their_bounds),
      cmocka_unit_test(hand_built_entries_decode),
      cmocka_unit_test(broken_sections_stay_in_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
