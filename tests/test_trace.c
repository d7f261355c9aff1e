/* test_trace.c — the trace writer and reader: round trips, truncation at
 * every length, corruption, and the byte-level codecs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "mlprof.h"
#include "trace/format.h"
#include "trace/trace.h"

static int warm_first; /* write_sample warms the compressor first */
static int plain_first; /* write_sample makes no compressor (prof__tw_plain) */

static const char *write_sample(int footer, size_t nev) {
  const char *path = th_tmp_path("trace", ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "unit"}, {"pid", "42"}};
  prof__tw *w = prof__tw_open(path, hdr, 2, err);
  assert_non_null(w);
  if (warm_first) prof__tw_adopt(w, prof__tw_warm_new());
  if (plain_first) prof__tw_plain(w);
  assert_int_equal(prof__tw_string(w, 1, "forward", 7), 0);
  assert_int_equal(prof__tw_string(w, 2, "data", 4), 0);
  prof__event *ev = calloc(nev, sizeof *ev);
  for (size_t i = 0; i < nev; i++) {
    ev[i].ts = 1000000 + i * 37;
    ev[i].type = (i % 2) ? PROF_EV_RANGE_END : PROF_EV_RANGE_BEGIN;
    ev[i].name = 1 + (uint32_t)(i / 2 % 2);
    ev[i].cat = ev[i].name == 2 ? PROF_CAT_DATA : 0;
    ev[i].a = i % 7 == 0 ? i * 1000003ull : 0;
    ev[i].b = i % 11 == 0 ? UINT64_MAX - i : 0;
    ev[i].aux = (uint16_t)(i % 5);
  }
  assert_int_equal(prof__tw_events(w, 7, ev, nev / 2), 0);
  assert_int_equal(prof__tw_thread(w, 7, "main", 3, 0), 0);
  assert_int_equal(prof__tw_flush(w), 0);
  assert_int_equal(prof__tw_events(w, 8, ev + nev / 2, nev - nev / 2), 0);
  prof__kv meta[] = {{"gpu", "absent: no driver"}};
  assert_int_equal(prof__tw_meta(w, meta, 1), 0);
  uint8_t blob[5] = {1, 2, 3, 4, 5};
  assert_int_equal(prof__tw_chunk(w, 200, blob, sizeof blob), 0);
  if (footer) {
    prof__kv f[] = {{"events_written", "10"}};
    assert_int_equal(prof__tw_close(w, f, 1), 0);
  } else {
    assert_int_equal(prof__tw_flush(w), 0);
    prof__tw_abort(w);
  }
  free(ev);
  return path;
}

static void round_trip_preserves_every_field(void **state) {
  (void)state;
  const size_t nev = 5000;
  const char *path = write_sample(1, nev);
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  assert_string_equal(prof__reader_get(r, "program"), "unit");
  assert_string_equal(prof__reader_get(r, "pid"), "42");
  assert_null(prof__reader_get(r, "nope"));
  prof__rec rec;
  size_t events = 0, strings = 0, threads = 0, meta = 0, footer = 0, blobs = 0;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    switch (rec.kind) {
    case PROF_REC_EVENT: {
      size_t i = events++;
      assert_int_equal(rec.tid, i < nev / 2 ? 7 : 8);
      assert_int_equal(rec.ev.ts, 1000000 + i * 37);
      assert_int_equal(rec.ev.type, (i % 2) ? PROF_EV_RANGE_END : PROF_EV_RANGE_BEGIN);
      assert_int_equal(rec.ev.name, 1 + i / 2 % 2);
      assert_int_equal(rec.ev.a, i % 7 == 0 ? i * 1000003ull : 0);
      assert_true(rec.ev.b == (i % 11 == 0 ? UINT64_MAX - i : 0));
      assert_int_equal(rec.ev.aux, i % 5);
      break;
    }
    case PROF_REC_STRING:
      strings++;
      assert_string_equal(rec.str, rec.id == 1 ? "forward" : "data");
      break;
    case PROF_REC_THREAD:
      threads++;
      assert_int_equal(rec.tid, 7);
      assert_string_equal(rec.str, "main");
      assert_int_equal(rec.lost, 3);
      break;
    case PROF_REC_META:
      meta++;
      assert_string_equal(rec.key, "gpu");
      assert_string_equal(rec.value, "absent: no driver");
      break;
    case PROF_REC_FOOTER:
      footer++;
      assert_string_equal(rec.key, "events_written");
      break;
    case PROF_REC_CHUNK:
      blobs++;
      assert_int_equal(rec.chunk_type, 200);
      assert_int_equal(rec.len, 5);
      assert_int_equal(rec.data[4], 5);
      break;
    }
  }
  assert_int_equal(rc, 0);
  assert_int_equal(events, nev);
  assert_int_equal(strings, 2);
  assert_int_equal(threads, 1);
  assert_int_equal(meta, 1);
  assert_int_equal(footer, 1);
  assert_int_equal(blobs, 1);
  assert_true(prof__reader_has_footer(r));
  /* A second pass sees the same events. */
  assert_int_equal(prof__reader_rewind(r), 0);
  size_t again = 0;
  while ((rc = prof__reader_next(r, &rec)) == 1) again += rec.kind == PROF_REC_EVENT;
  assert_int_equal(rc, 0);
  assert_int_equal(again, nev);
  prof__reader_close(r);
}

/* Codec counts of the chunks of a trace file's bytes. */
static void count_codecs(const char *b, size_t nb, size_t *raw, size_t *zstd) {
  const unsigned char *p = (const unsigned char *)b;
  uint32_t hlen = (uint32_t)p[12] | (uint32_t)p[13] << 8 | (uint32_t)p[14] << 16 | (uint32_t)p[15] << 24;
  size_t off = 16 + (size_t)hlen + 4;
  *raw = *zstd = 0;
  while (off + PROF_CHUNK_HDR <= nb) {
    const unsigned char *h = p + off;
    uint32_t stored = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
    *zstd += h[5] == PROF_CODEC_ZSTD;
    *raw += h[5] == PROF_CODEC_RAW;
    off += PROF_CHUNK_HDR + stored;
  }
  assert_int_equal(off, nb);
}

/* Events read back from the trace at path; *rc is the reader's last
 * return (0: a clean end). */
static size_t count_events(const char *path, int *rc) {
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  size_t events = 0;
  while ((*rc = prof__reader_next(r, &rec)) == 1) events += rec.kind == PROF_REC_EVENT;
  prof__reader_close(r);
  return events;
}

/* A compressor made early (prof__tw_warm_new, the writer thread's start)
 * writes the very same file as one made at the first chunk, and that file
 * is compressed. */
static void warm_compressor_writes_the_same_trace(void **state) {
  (void)state;
  prof__tw_adopt(NULL, NULL);
  prof__tw_warm_free(NULL);
  size_t na = 0, nb = 0;
  warm_first = 0;
  char *a = th_read_file(write_sample(1, 5000), &na);
  warm_first = 1;
  char *b = th_read_file(write_sample(1, 5000), &nb);
  warm_first = 0;
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  /* and its event chunks are stored compressed */
  size_t raw, zstd;
  count_codecs(b, nb, &raw, &zstd);
  assert_true(zstd >= 2);
  free(a);
  free(b);
}

/* A trace told to make no compressor (an exit before the writer thread
 * made one) stores every chunk as it is and reads back whole; one that has
 * a compressor keeps compressing. */
static void plain_trace_stores_chunks_as_they_are(void **state) {
  (void)state;
  plain_first = 1;
  const char *path = write_sample(1, 3000);
  plain_first = 0;
  size_t nb = 0, raw, zstd;
  char *b = th_read_file(path, &nb);
  assert_non_null(b);
  count_codecs(b, nb, &raw, &zstd);
  assert_int_equal(zstd, 0);
  assert_true(raw >= 4);
  free(b);
  int rc;
  assert_int_equal(count_events(path, &rc), 3000);
  assert_int_equal(rc, 0);
  warm_first = plain_first = 1; /* adopted before: still compressed */
  b = th_read_file(write_sample(1, 3000), &nb);
  warm_first = plain_first = 0;
  assert_non_null(b);
  count_codecs(b, nb, &raw, &zstd);
  assert_true(zstd >= 2);
  free(b);
}

static void missing_footer_is_truncation_after_all_data(void **state) {
  (void)state;
  const char *path = write_sample(0, 100);
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  size_t events = 0;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) events += rec.kind == PROF_REC_EVENT;
  assert_int_equal(rc, PROF_ETRUNC);
  assert_int_equal(events, 100);
  assert_non_null(strstr(prof__reader_error(r), "without a footer"));
  /* Errors are sticky. */
  assert_int_equal(prof__reader_next(r, &rec), PROF_ETRUNC);
  prof__reader_close(r);
}

/* Cut the file at every length: the reader must never crash, must report
 * truncation (or a bad header), and must never deliver more events than
 * were written. */
static void every_truncation_is_reported(void **state) {
  (void)state;
  const char *path = write_sample(1, 300);
  size_t len;
  char *data = th_read_file(path, &len);
  assert_non_null(data);
  const char *cut = th_tmp_path("cut", ".mlpt");
  for (size_t n = 0; n < len; n++) {
    FILE *f = fopen(cut, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    prof__reader *r;
    char err[256];
    int rc = prof__reader_open(&r, cut, err);
    if (rc) {
      assert_true(rc == PROF_ETRUNC || rc == PROF_EFORMAT);
      assert_true(strlen(err) > 0);
      continue;
    }
    prof__rec rec;
    size_t events = 0;
    while ((rc = prof__reader_next(r, &rec)) == 1) events += rec.kind == PROF_REC_EVENT;
    assert_int_equal(rc, PROF_ETRUNC);
    assert_true(events <= 300);
    prof__reader_close(r);
  }
  free(data);
}

/* Flip each byte in turn: reading must end cleanly (possibly with an
 * error), never crash. CRCs catch every flip inside a chunk. */
static void every_flipped_byte_is_caught(void **state) {
  (void)state;
  const char *path = write_sample(1, 200);
  size_t len;
  char *data = th_read_file(path, &len);
  const char *bad = th_tmp_path("flip", ".mlpt");
  size_t detected = 0;
  for (size_t i = 0; i < len; i++) {
    data[i] ^= 0x5a;
    FILE *f = fopen(bad, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    data[i] ^= 0x5a;
    prof__reader *r;
    char err[256];
    int rc = prof__reader_open(&r, bad, err);
    if (rc) {
      detected++;
      continue;
    }
    prof__rec rec;
    while ((rc = prof__reader_next(r, &rec)) == 1) {
    }
    if (rc < 0) detected++;
    assert_true(rc == 0 || rc == PROF_EFORMAT || rc == PROF_ETRUNC);
    prof__reader_close(r);
  }
  assert_int_equal(detected, len);
  free(data);
}

static void not_a_trace_and_missing_file(void **state) {
  (void)state;
  const char *p = th_tmp_path("junk", ".mlpt");
  FILE *f = fopen(p, "wb");
  fputs("hello, this is not a trace at all", f);
  fclose(f);
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, p, err), PROF_EFORMAT);
  assert_non_null(strstr(err, "not an mlprof trace"));
  assert_int_equal(prof__reader_open(&r, "/nonexistent/x.mlpt", err), PROF_ENOENT);
  assert_int_equal(prof__reader_open(&r, MLPROF_TEST_TMP, err), PROF_EINVAL);
}

static void unwritable_path_fails_with_message(void **state) {
  (void)state;
  char err[256] = "";
  prof__tw *w = prof__tw_open("/nonexistent-dir/x.mlpt", NULL, 0, err);
  assert_null(w);
  assert_non_null(strstr(err, "nonexistent-dir"));
}

static void full_disk_errors_are_sticky(void **state) {
  (void)state;
  if (access("/dev/full", W_OK) != 0) skip();
  char err[256];
  prof__tw *w = prof__tw_open("/dev/full", NULL, 0, err);
  /* /dev/full accepts open but fails every write: the header write fails. */
  assert_null(w);
  assert_non_null(strstr(err, "/dev/full"));
}

static void varints_round_trip_at_edges(void **state) {
  (void)state;
  prof__buf b = {0};
  const uint64_t u[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX};
  const int64_t s[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
  for (size_t i = 0; i < 8; i++) prof__buf_varint(&b, u[i]);
  for (size_t i = 0; i < 7; i++) prof__buf_svarint(&b, s[i]);
  prof__buf_str(&b, "abc", 3);
  prof__cur c = {b.p, b.p + b.len, 0};
  for (size_t i = 0; i < 8; i++) assert_true(prof__cur_varint(&c) == u[i]);
  for (size_t i = 0; i < 7; i++) assert_true(prof__cur_svarint(&c) == s[i]);
  size_t n;
  const char *str = prof__cur_str(&c, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(str, "abc", 3);
  assert_false(c.bad);
  assert_int_equal(prof__cur_u8(&c), 0);
  assert_true(c.bad);
  /* A varint with no end byte is bad, not an overrun. */
  uint8_t runaway[3] = {0xff, 0xff, 0xff};
  prof__cur d = {runaway, runaway + 3, 0};
  prof__cur_varint(&d);
  assert_true(d.bad);
  prof__buf_free(&b);
}

/* Addresses of ALLOC and FREE events are written as deltas within a block
 * (version 2); every other `a` stays absolute. */
static const uint64_t addrs[] = {0x7f12345678f0ull, 0x7f1234567800ull, 0x7f1234567810ull, 1, UINT64_MAX,
                                 0x55aa00001000ull, 0x55aa00001000ull, 2, 0x7f1234567800ull};
#define NADDR (sizeof addrs / sizeof addrs[0])

static const char *write_memory_events(void) {
  const char *path = th_tmp_path("trace-mem", ".mlpt");
  char err[256];
  prof__tw *w = prof__tw_open(path, NULL, 0, err);
  assert_non_null(w);
  prof__event ev[2 * NADDR];
  memset(ev, 0, sizeof ev);
  for (size_t i = 0; i < NADDR; i++) {
    prof__event *m = &ev[2 * i], *c = &ev[2 * i + 1];
    m->ts = c->ts = 1000 + i;
    m->type = i % 3 == 1 ? PROF_EV_FREE : PROF_EV_ALLOC;
    m->a = addrs[i];
    m->b = m->type == PROF_EV_ALLOC ? 64 + i : 0;
    c->type = PROF_EV_COUNTER; /* an absolute `a` between them */
    c->name = 1;
    c->a = 0x4000000000000000ull + i;
  }
  assert_int_equal(prof__tw_events(w, 7, ev, NADDR), 0); /* two blocks of one thread */
  assert_int_equal(prof__tw_events(w, 7, ev + NADDR, NADDR), 0);
  assert_int_equal(prof__tw_events(w, 9, ev, 2 * NADDR), 0);
  assert_int_equal(prof__tw_close(w, NULL, 0), 0);
  return path;
}

static void memory_addresses_round_trip_as_deltas(void **state) {
  (void)state;
  const char *path = write_memory_events();
  prof__reader *r;
  char err[256];
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  size_t k = 0;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind != PROF_REC_EVENT) continue;
    size_t j = k < 2 * NADDR ? k : k - 2 * NADDR, i = j / 2;
    if (j % 2 == 0) {
      assert_int_equal(rec.ev.type, i % 3 == 1 ? PROF_EV_FREE : PROF_EV_ALLOC);
      assert_true(rec.ev.a == addrs[i]);
      assert_int_equal(rec.ev.b, rec.ev.type == PROF_EV_ALLOC ? 64 + i : 0);
    } else {
      assert_int_equal(rec.ev.type, PROF_EV_COUNTER);
      assert_true(rec.ev.a == 0x4000000000000000ull + i);
    }
    k++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(k, 4 * NADDR);
  prof__reader_close(r);
}

static void set_version(const char *path, unsigned v) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), 0, 0};
  assert_int_equal(fseek(f, 8, SEEK_SET), 0);
  assert_int_equal(fwrite(le, 1, 4, f), 4);
  fclose(f);
}

static int read_all(const char *path, size_t *events, char *err) {
  prof__reader *r;
  int rc = prof__reader_open(&r, path, err);
  if (rc) return rc;
  prof__rec rec;
  *events = 0;
  while ((rc = prof__reader_next(r, &rec)) == 1) *events += rec.kind == PROF_REC_EVENT;
  if (rc < 0) snprintf(err, 256, "%s", prof__reader_error(r));
  prof__reader_close(r);
  return rc;
}

/* Version 1 traces (no delta flag) stay readable; the delta flag is not a
 * version-1 bit; versions past the writer's are refused by name. */
static void older_versions_read_and_newer_are_refused(void **state) {
  (void)state;
  char err[256];
  size_t n = 0;
  const char *ranges = write_sample(1, 200);
  unsigned char hdr[12];
  FILE *f = fopen(ranges, "rb");
  assert_int_equal(fread(hdr, 1, 12, f), 12);
  fclose(f);
  assert_int_equal(hdr[8] | hdr[9] << 8, PROF_TRACE_VERSION);
  set_version(ranges, 1);
  assert_int_equal(read_all(ranges, &n, err), 0);
  assert_int_equal(n, 200);
  const char *mem = write_memory_events();
  set_version(mem, 1);
  assert_true(read_all(mem, &n, err) < 0);
  assert_non_null(strstr(err, "event"));
  set_version(mem, PROF_TRACE_VERSION + 1);
  assert_int_equal(read_all(mem, &n, err), PROF_EVERSION);
  assert_non_null(strstr(err, "versions 1 to"));
  set_version(mem, 0);
  assert_int_equal(read_all(mem, &n, err), PROF_EVERSION);
}

static void crc32c_matches_known_vector(void **state) {
  (void)state;
  /* CRC-32C of "123456789" is 0xE3069283. */
  assert_int_equal(prof__crc32c(0, "123456789", 9), 0xE3069283u);
  uint32_t part = prof__crc32c(0, "12345", 5);
  assert_int_equal(prof__crc32c(part, "6789", 4), 0xE3069283u);
  assert_int_equal(prof__crc32c_sw(0, "123456789", 9), 0xE3069283u);
  /* Hardware and table paths agree on every length and alignment. */
  uint8_t buf[300];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131 + 7);
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n + off <= sizeof buf; n += 13)
      assert_int_equal(prof__crc32c(0x1234, buf + off, n), prof__crc32c_sw(0x1234, buf + off, n));
}

/* ---- chunk size bound ------------------------------------------------------ */

static uint64_t mix(uint64_t x) { /* splitmix64: values that need 10-byte varints */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Chunks per type and the largest raw payload, from the chunk headers. */
static void chunk_sizes(const char *path, size_t count[256], uint32_t *max_raw) {
  size_t len;
  uint8_t *f = (uint8_t *)th_read_file(path, &len);
  assert_non_null(f);
  size_t off = 16 + prof__rd32(f + 12) + 4;
  memset(count, 0, 256 * sizeof *count);
  *max_raw = 0;
  while (off + PROF_CHUNK_HDR <= len) {
    assert_int_equal(prof__rd32(f + off), PROF_CHUNK_MAGIC);
    uint32_t raw = prof__rd32(f + off + 8), stored = prof__rd32(f + off + 12);
    count[f[off + 4]]++;
    if (raw > *max_raw) *max_raw = raw;
    off += PROF_CHUNK_HDR + stored;
  }
  assert_int_equal(off, len);
  free(f);
}

/* One flush of more strings, thread records or events than a chunk holds
 * goes out as several chunks, cut between entries, none larger than
 * PROF_CHUNK_RAW_MAX (what a reader accepts); all of it reads back. A name
 * longer than a chunk is cut; a producer's chunk past the bound is refused. */
static void large_flushes_are_cut_into_bounded_chunks(void **state) {
  (void)state;
  const char *path = th_tmp_path("bigflush", ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "big"}};
  prof__tw *w = prof__tw_open(path, hdr, 1, err);
  assert_non_null(w);
  const size_t mib = 1u << 20, nstr = 9, nthr = 250000, nev = 400000;
  char *text = malloc(PROF_CHUNK_RAW_MAX + 100);
  assert_non_null(text);
  memset(text, 'x', PROF_CHUNK_RAW_MAX + 100);
  for (uint32_t id = 1; id <= nstr; id++) assert_int_equal(prof__tw_string(w, id, text, mib), 0);
  assert_int_equal(prof__tw_string(w, 99, text, PROF_CHUNK_RAW_MAX + 100), 0);
  for (uint32_t t = 1; t <= nthr; t++) assert_int_equal(prof__tw_thread(w, t, "a thread name of 31 characters.", t, 0), 0);
  prof__event *ev = calloc(nev, sizeof *ev);
  assert_non_null(ev);
  for (size_t i = 0; i < nev; i++) ev[i] = (prof__event){.ts = i, .type = PROF_EV_COUNTER, .name = 1, .a = mix(i), .b = ~mix(i)};
  assert_int_equal(prof__tw_events(w, 5, ev, nev), 0);
  assert_int_equal(prof__tw_chunk(w, 200, text, PROF_CHUNK_RAW_MAX + 1), PROF_EINVAL);
  assert_int_equal(prof__tw_chunk(w, 200, text, PROF_CHUNK_RAW_MAX), 0);
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  size_t count[256];
  uint32_t max_raw;
  chunk_sizes(path, count, &max_raw);
  assert_true(max_raw <= PROF_CHUNK_RAW_MAX);
  assert_true(count[PROF_CHUNK_STRINGS] >= 2);
  assert_true(count[PROF_CHUNK_THREADS] >= 2);
  assert_true(count[PROF_CHUNK_EVENTS] >= 2);
  prof__reader *r;
  assert_int_equal(prof__reader_open(&r, path, err), 0);
  prof__rec rec;
  size_t events = 0, strings = 0, threads = 0;
  int rc;
  while ((rc = prof__reader_next(r, &rec)) == 1) {
    if (rec.kind == PROF_REC_EVENT) {
      assert_int_equal(rec.tid, 5);
      assert_true(rec.ev.ts == events && rec.ev.a == mix(events) && rec.ev.b == ~mix(events));
      events++;
    } else if (rec.kind == PROF_REC_STRING) {
      assert_int_equal(rec.len, rec.id == 99 ? PROF_CHUNK_RAW_MAX - 32 : mib);
      strings++;
    } else if (rec.kind == PROF_REC_THREAD) {
      assert_int_equal(rec.lost, ++threads);
    }
  }
  assert_int_equal(rc, 0);
  assert_int_equal(events, nev);
  assert_int_equal(strings, nstr + 1);
  assert_int_equal(threads, nthr);
  prof__reader_close(r);
  free(ev);
  free(text);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip_preserves_every_field),
      cmocka_unit_test(warm_compressor_writes_the_same_trace),
      cmocka_unit_test(plain_trace_stores_chunks_as_they_are),
      cmocka_unit_test(missing_footer_is_truncation_after_all_data),
      cmocka_unit_test(every_truncation_is_reported),
      cmocka_unit_test(every_flipped_byte_is_caught),
      cmocka_unit_test(not_a_trace_and_missing_file),
      cmocka_unit_test(unwritable_path_fails_with_message),
      cmocka_unit_test(full_disk_errors_are_sticky),
      cmocka_unit_test(varints_round_trip_at_edges),
      cmocka_unit_test(crc32c_matches_known_vector),
      cmocka_unit_test(memory_addresses_round_trip_as_deltas),
      cmocka_unit_test(older_versions_read_and_newer_are_refused),
      cmocka_unit_test(large_flushes_are_cut_into_bounded_chunks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
