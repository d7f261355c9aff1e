/* test_rec_stacks.c — the codec of the STACKS, MODULES and PYFRAMES chunk
 * bodies (src/trace/rec_stacks.c): the exact bytes of
 * docs/trace-format-stacks.md, encode then decode giving the same values,
 * and every truncation of a body reported as an error without reading past
 * its end (each body is decoded from a heap copy of exactly its length). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "trace/rec_stacks.h"

/* The finished body of a list, as a heap block of exactly its length. */
static uint8_t *body_of(const prof__rec_list *l, size_t *len) {
  prof__buf out = {0};
  assert_int_equal(prof__rec_list_end(l, &out), 0);
  uint8_t *p = malloc(out.len ? out.len : 1);
  assert_non_null(p);
  memcpy(p, out.p, out.len);
  *len = out.len;
  prof__buf_free(&out);
  return p;
}

/* A heap copy of the first n bytes (NULL for none). */
static uint8_t *prefix(const uint8_t *p, size_t n) {
  if (!n) return NULL;
  uint8_t *q = malloc(n);
  assert_non_null(q);
  memcpy(q, p, n);
  return q;
}

static void stacks_encode_to_the_documented_bytes(void **state) {
  (void)state;
  prof__rec_list l = {{0}, 0};
  const uintptr_t pcs[2] = {0x10, 0x08};
  prof__rec_stacks_put(&l, 3, pcs, 2);
  size_t len;
  uint8_t *p = body_of(&l, &len);
  /* count 1, id 3, depth 2, zig-zag +16, zig-zag -8 */
  const uint8_t want[] = {0x01, 0x03, 0x02, 0x20, 0x0f};
  assert_int_equal(len, sizeof want);
  assert_memory_equal(p, want, sizeof want);
  free(p);
  prof__rec_list_free(&l);
}

static void modules_and_pyframes_encode_to_the_documented_bytes(void **state) {
  (void)state;
  prof__rec_list l = {{0}, 0};
  const uint8_t bid[1] = {0xab};
  prof__rec_module m = {.path = "a", .path_len = 1, .bias = 1, .start = 2, .size = 3,
                        .build_id = bid, .build_id_len = 1};
  prof__rec_modules_put(&l, &m);
  size_t len;
  uint8_t *p = body_of(&l, &len);
  const uint8_t want_mod[] = {0x01, 0x01, 'a', 0x01, 0x02, 0x03, 0x01, 0xab};
  assert_int_equal(len, sizeof want_mod);
  assert_memory_equal(p, want_mod, sizeof want_mod);
  free(p);
  prof__rec_list_free(&l);

  prof__rec_pyframe f = {.key = 5, .file = "f", .file_len = 1, .name = "g", .name_len = 1, .line = -1};
  prof__rec_pyframes_put(&l, &f);
  p = body_of(&l, &len);
  const uint8_t want_py[] = {0x01, 0x05, 0x01, 'f', 0x01, 'g', 0x01};
  assert_int_equal(len, sizeof want_py);
  assert_memory_equal(p, want_py, sizeof want_py);
  free(p);
  prof__rec_list_free(&l);
}

/* Three stacks: high addresses, deltas of both signs, depth 1 and 64. */
static uint8_t *three_stacks(size_t *len, uintptr_t pcs[3][64], const int depth[3], const uint32_t id[3]) {
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < depth[s]; i++)
      pcs[s][i] = (uintptr_t)0x7f0000000000ull + (uintptr_t)((i * 7919 + s * 131) % 4096) * 16u - (uintptr_t)i;
  pcs[0][0] = UINTPTR_MAX; /* the largest address, then a huge negative delta */
  prof__rec_list l = {{0}, 0};
  for (int s = 0; s < 3; s++) prof__rec_stacks_put(&l, id[s], pcs[s], depth[s]);
  assert_int_equal(l.n, 3);
  uint8_t *p = body_of(&l, len);
  prof__rec_list_free(&l);
  return p;
}

static void stacks_round_trip(void **state) {
  (void)state;
  static uintptr_t pcs[3][64];
  const int depth[3] = {5, 1, 64};
  const uint32_t id[3] = {1, 2, PROF_REC_STACKS_MAX_ID};
  size_t len;
  uint8_t *p = three_stacks(&len, pcs, depth, id);
  prof__rec_dec d;
  prof__rec_stacks_dec_init(&d, p, len);
  uintptr_t got[PROF_REC_STACKS_MAX_DEPTH];
  uint32_t gid;
  int gdepth;
  for (int s = 0; s < 3; s++) {
    assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), 1);
    assert_int_equal(gid, id[s]);
    assert_int_equal(gdepth, depth[s]);
    assert_memory_equal(got, pcs[s], (size_t)gdepth * sizeof *got);
  }
  assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), 0);
  assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), 0);
  free(p);
}

static void truncated_stacks_fail_without_overreading(void **state) {
  (void)state;
  static uintptr_t pcs[3][64];
  const int depth[3] = {5, 1, 64};
  const uint32_t id[3] = {1, 2, 3};
  size_t len;
  uint8_t *p = three_stacks(&len, pcs, depth, id);
  for (size_t n = 0; n < len; n++) {
    uint8_t *q = prefix(p, n);
    prof__rec_dec d;
    prof__rec_stacks_dec_init(&d, q, n);
    uintptr_t got[PROF_REC_STACKS_MAX_DEPTH];
    uint32_t gid;
    int gdepth, rc, ok = 0;
    while ((rc = prof__rec_stacks_next(&d, &gid, got, &gdepth)) == 1) ok++;
    assert_int_equal(rc, PROF_EFORMAT);
    assert_true(ok < 3);
    assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), PROF_EFORMAT); /* stays failed */
    free(q);
  }
  free(p);
}

static void stacks_with_bad_id_or_depth_fail(void **state) {
  (void)state;
  const uint8_t id0[] = {0x01, 0x00, 0x01, 0x02};            /* id 0 */
  const uint8_t depth0[] = {0x01, 0x01, 0x00};                /* depth 0 */
  const uint8_t deep[] = {0x01, 0x01, 0x81, 0x02};            /* depth 257 */
  const uint8_t big_id[] = {0x01, 0x81, 0x80, 0x80, 0x08, 0x01, 0x02}; /* id 2^24 + 1 */
  const uint8_t *bodies[] = {id0, depth0, deep, big_id};
  const size_t lens[] = {sizeof id0, sizeof depth0, sizeof deep, sizeof big_id};
  for (int i = 0; i < 4; i++) {
    prof__rec_dec d;
    prof__rec_stacks_dec_init(&d, bodies[i], lens[i]);
    uintptr_t got[PROF_REC_STACKS_MAX_DEPTH];
    uint32_t gid;
    int gdepth;
    assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), PROF_EFORMAT);
  }
  const uint8_t none[] = {0x00};
  prof__rec_dec d;
  prof__rec_stacks_dec_init(&d, none, sizeof none);
  uintptr_t got[PROF_REC_STACKS_MAX_DEPTH];
  uint32_t gid;
  int gdepth;
  assert_int_equal(prof__rec_stacks_next(&d, &gid, got, &gdepth), 0);
}

static uint8_t *two_modules(size_t *len, prof__rec_module m[2]) {
  static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0};
  m[0] = (prof__rec_module){.path = "/usr/lib/libc.so.6", .path_len = 18, .bias = 0x7f1234560000ull,
                            .start = 0x7f1234561000ull, .size = 0x1e5000, .build_id = bid, .build_id_len = 20};
  m[1] = (prof__rec_module){.path = "/proc/self/exe-ignored", .path_len = 14, .bias = 0,
                            .start = 0x400000, .size = 0x1000, .build_id = NULL, .build_id_len = 0};
  prof__rec_list l = {{0}, 0};
  prof__rec_modules_put(&l, &m[0]);
  prof__rec_modules_put(&l, &m[1]);
  uint8_t *p = body_of(&l, len);
  prof__rec_list_free(&l);
  return p;
}

static void modules_round_trip(void **state) {
  (void)state;
  prof__rec_module m[2], got;
  size_t len;
  uint8_t *p = two_modules(&len, m);
  prof__rec_dec d;
  prof__rec_modules_dec_init(&d, p, len);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(prof__rec_modules_next(&d, &got), 1);
    assert_int_equal(got.path_len, m[i].path_len);
    assert_memory_equal(got.path, m[i].path, got.path_len);
    assert_int_equal(got.bias, m[i].bias);
    assert_int_equal(got.start, m[i].start);
    assert_int_equal(got.size, m[i].size);
    assert_int_equal(got.build_id_len, m[i].build_id_len);
    if (got.build_id_len) assert_memory_equal(got.build_id, m[i].build_id, got.build_id_len);
  }
  assert_int_equal(prof__rec_modules_next(&d, &got), 0);
  for (size_t n = 0; n < len; n++) {
    uint8_t *q = prefix(p, n);
    prof__rec_modules_dec_init(&d, q, n);
    int rc, ok = 0;
    while ((rc = prof__rec_modules_next(&d, &got)) == 1) {
      assert_true(got.path + got.path_len <= (const char *)q + n); /* inside the copy */
      ok++;
    }
    assert_int_equal(rc, PROF_EFORMAT);
    assert_true(ok < 2);
    free(q);
  }
  free(p);
}

static void pyframes_round_trip(void **state) {
  (void)state;
  const prof__rec_pyframe f[3] = {
      {.key = (1ull << 63) | (12ull << 47) | 0x7f00deadbeefull, .file = "train.py", .file_len = 8,
       .name = "Net.forward", .name_len = 11, .line = 42},
      {.key = (1ull << 63) | (0xffffull << 47) | 0x1000, .file = "", .file_len = 0, .name = "<module>",
       .name_len = 8, .line = 0},
      {.key = UINT64_MAX, .file = "x.py", .file_len = 4, .name = "f", .name_len = 1, .line = -7},
  };
  prof__rec_list l = {{0}, 0};
  for (int i = 0; i < 3; i++) prof__rec_pyframes_put(&l, &f[i]);
  size_t len;
  uint8_t *p = body_of(&l, &len);
  prof__rec_list_free(&l);
  prof__rec_dec d;
  prof__rec_pyframe got;
  prof__rec_pyframes_dec_init(&d, p, len);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(prof__rec_pyframes_next(&d, &got), 1);
    assert_true(got.key == f[i].key);
    assert_int_equal(got.file_len, f[i].file_len);
    assert_memory_equal(got.file, f[i].file, got.file_len);
    assert_int_equal(got.name_len, f[i].name_len);
    assert_memory_equal(got.name, f[i].name, got.name_len);
    assert_int_equal(got.line, f[i].line);
  }
  assert_int_equal(prof__rec_pyframes_next(&d, &got), 0);
  for (size_t n = 0; n < len; n++) {
    uint8_t *q = prefix(p, n);
    prof__rec_pyframes_dec_init(&d, q, n);
    int rc, ok = 0;
    while ((rc = prof__rec_pyframes_next(&d, &got)) == 1) ok++;
    assert_int_equal(rc, PROF_EFORMAT);
    assert_true(ok < 3);
    free(q);
  }
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stacks_encode_to_the_documented_bytes),
      cmocka_unit_test(modules_and_pyframes_encode_to_the_documented_bytes),
      cmocka_unit_test(stacks_round_trip),
      cmocka_unit_test(truncated_stacks_fail_without_overreading),
      cmocka_unit_test(stacks_with_bad_id_or_depth_fail),
      cmocka_unit_test(modules_round_trip),
      cmocka_unit_test(pyframes_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
