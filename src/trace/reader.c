/* reader.c — streams a `.mlpt` trace one record at a time.
 *
 * Only the current chunk is held in memory. Every size, varint and string
 * is bounds-checked; a bad byte ends the stream with PROF_EFORMAT and a
 * message naming the chunk and offset, a short file with PROF_ETRUNC after
 * every complete chunk was delivered.
 *
 * A small crafted file can announce chunks that decompress to hundreds of
 * MiB each. A chunk larger than mlprof ever writes (PROF_CHUNK_RAW_MAX) is
 * refused before anything is allocated for it, so a reader holds at most
 * that much decompressed data, and the bytes decompressed in one pass are
 * capped (see prof__reader_cap_bytes): such a file fails with a clear
 * message instead of taking gigabytes. MLPROF_READ_MAX_MB=0 lifts both.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mlprof.h"
#include "format.h"
#include "settings.h"
#include "hugepage.h"
#include "trace.h"
#include "zstd_stream.h"

#define PROF_LIKELY_R(x) __builtin_expect(!!(x), 1)

/* The libFuzzer build (tests/fuzz) accepts wrong checksums so that mutated
 * payloads reach the decoders; every other build checks them. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_BAD(computed, stored) ((void)(computed), (void)(stored), 0)
#else
#define CRC_BAD(computed, stored) ((computed) != (stored))
#endif

struct prof__reader {
  FILE *f;
  char *path;
  uint64_t size, offset, first_chunk, chunks;
  prof__kv *hdr;
  size_t nhdr;
  char *hdr_store;
  int footer, err;
  uint64_t raw_total;    /* bytes decompressed in this pass */
  uint64_t read_cap;     /* most bytes one pass may decompress (0: no cap) */
  uint32_t chunk_cap;    /* largest chunk payload accepted */
  char msg[320];
  prof__zd *zd;
  /* current chunk */
  uint8_t *stored, *raw;
  size_t stored_cap, raw_cap;
  int type;
  prof__cur cur;
  uint64_t chunk_off;
  uint64_t kv_left;      /* META/FOOTER pairs left */
  uint64_t ev_left;      /* events left in the current block */
  uint32_t ev_tid;
  uint64_t ev_prev;
  uint64_t ev_prev_a;    /* last delta-coded `a` of the block */
  unsigned evf_known;    /* event flag bits this trace's version defines */
  int chunk_done;        /* non-decoded chunk delivered */
  /* scratch for NUL-terminated strings */
  char *s1, *s2;
  size_t s1_cap, s2_cap;
};

static int fail(prof__reader *r, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof r->msg, fmt, ap);
  va_end(ap);
  r->err = code;
  return code;
}

/* Copy a payload string into a scratch buffer with a NUL. */
static const char *scratch(char **buf, size_t *cap, const char *s, size_t n) {
  if (*cap < n + 1) {
    size_t c = *cap ? *cap : 64;
    while (c < n + 1) c *= 2;
    char *p = realloc(*buf, c);
    if (!p) return NULL;
    *buf = p;
    *cap = c;
  }
  memcpy(*buf, s, n);
  (*buf)[n] = 0;
  return *buf;
}

static int parse_header(prof__reader *r, char *err) {
  unsigned char fixed[16];
  size_t got = fread(fixed, 1, sizeof fixed, r->f);
  if (got < 8 || memcmp(fixed, PROF_TRACE_MAGIC, 8) != 0) {
    snprintf(err, PROF_ERR_MAX, "'%s' is not an mlprof trace (bad magic)", r->path);
    return PROF_EFORMAT;
  }
  if (got < sizeof fixed) {
    snprintf(err, PROF_ERR_MAX, "'%s' is truncated inside the header", r->path);
    return PROF_ETRUNC;
  }
  unsigned version = prof__rd32(fixed + 8), len = prof__rd32(fixed + 12);
  if (version < PROF_TRACE_VERSION_MIN || version > PROF_TRACE_VERSION) {
    snprintf(err, PROF_ERR_MAX, "'%s' has trace version %u; this mlprof reads versions %d to %d", r->path, version,
             PROF_TRACE_VERSION_MIN, PROF_TRACE_VERSION);
    return PROF_EVERSION;
  }
  r->evf_known = version >= 2 ? PROF_EVF_KNOWN : PROF_EVF_KNOWN_V1;
  if (len > PROF_MAX_HEADER || len + 20u > r->size) {
    snprintf(err, PROF_ERR_MAX, "'%s': header size %u is %s", r->path, len,
             len > PROF_MAX_HEADER ? "invalid" : "beyond the end of the file (truncated)");
    return len > PROF_MAX_HEADER ? PROF_EFORMAT : PROF_ETRUNC;
  }
  uint8_t *area = malloc(len + 4u);
  if (!area) return PROF_ENOMEM;
  if (fread(area, 1, len + 4u, r->f) != len + 4u) {
    free(area);
    snprintf(err, PROF_ERR_MAX, "'%s' is truncated inside the header", r->path);
    return PROF_ETRUNC;
  }
  if (CRC_BAD(prof__crc32c(0, area, len), prof__rd32(area + len))) {
    free(area);
    snprintf(err, PROF_ERR_MAX, "'%s': header checksum mismatch (corrupt trace)", r->path);
    return PROF_EFORMAT;
  }
  prof__cur c = {area, area + len, 0};
  uint64_t n = prof__cur_varint(&c);
  if (c.bad || n > len) {
    free(area);
    snprintf(err, PROF_ERR_MAX, "'%s': malformed header", r->path);
    return PROF_EFORMAT;
  }
  r->hdr = calloc(n ? n : 1, sizeof *r->hdr);
  r->hdr_store = malloc(2 * len + 2);
  if (!r->hdr || !r->hdr_store) {
    free(area);
    return PROF_ENOMEM;
  }
  char *store = r->hdr_store;
  for (uint64_t i = 0; i < n; i++) {
    size_t kl, vl;
    const char *k = prof__cur_str(&c, &kl);
    const char *v = prof__cur_str(&c, &vl);
    if (c.bad) {
      free(area);
      snprintf(err, PROF_ERR_MAX, "'%s': malformed header entry %llu", r->path, (unsigned long long)i);
      return PROF_EFORMAT;
    }
    memcpy(store, k, kl);
    store[kl] = 0;
    r->hdr[i].key = store;
    store += kl + 1;
    memcpy(store, v, vl);
    store[vl] = 0;
    r->hdr[i].value = store;
    store += vl + 1;
  }
  r->nhdr = (size_t)n;
  free(area);
  r->offset = 16u + len + 4u;
  r->first_chunk = r->offset;
  return 0;
}

int prof__reader_open(prof__reader **out, const char *path, char *err) {
  *out = NULL;
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, PROF_ERR_MAX, "cannot open trace '%s': %s", path, strerror(errno));
    return PROF_ENOENT;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, PROF_ERR_MAX, "'%s' is not a regular file", path);
    return PROF_EINVAL;
  }
  prof__reader *r = calloc(1, sizeof *r);
  if (!r) return PROF_ENOMEM;
  r->path = strdup(path);
  r->size = (uint64_t)st.st_size;
  r->f = fopen(path, "rb");
  r->zd = prof__zd_new();
  if (!r->f || !r->path || !r->zd) {
    int code = r->f ? PROF_ENOMEM : PROF_ENOENT;
    snprintf(err, PROF_ERR_MAX, "cannot open trace '%s': %s", path, r->f ? "out of memory" : strerror(errno));
    prof__reader_close(r);
    return code;
  }
  int rc = parse_header(r, err);
  if (rc) {
    if (rc == PROF_ENOMEM) snprintf(err, PROF_ERR_MAX, "out of memory reading '%s'", path);
    prof__reader_close(r);
    return rc;
  }
  char cap_err[PROF_ERR_MAX];
  r->read_cap = prof__reader_cap_bytes(r->size, cap_err);
  r->chunk_cap = r->read_cap ? PROF_CHUNK_RAW_MAX : PROF_MAX_CHUNK;
  if (cap_err[0]) fprintf(stderr, "mlprof: %s\n", cap_err);
  r->chunk_done = 1;
  *out = r;
  return 0;
}

uint64_t prof__reader_cap_bytes(uint64_t file_size, char *err) {
  err[0] = 0;
  uint64_t mb = PROF_READ_MAX_MB_DEFAULT;
  const char *v = prof__env("READ_MAX_MB");
  if (v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || *v == '-' || x > (UINT64_MAX >> 20))
      snprintf(err, PROF_ERR_MAX, "ignoring MLPROF_READ_MAX_MB='%.40s': not a number of MiB (0 = no cap); using %u",
               v, PROF_READ_MAX_MB_DEFAULT);
    else
      mb = x;
  }
  if (mb == 0) return 0;
  uint64_t cap = mb << 20;
  uint64_t scaled = file_size > UINT64_MAX / PROF_READ_RATIO ? UINT64_MAX : file_size * PROF_READ_RATIO;
  return scaled > cap ? scaled : cap;
}

size_t prof__reader_header_count(const prof__reader *r) { return r->nhdr; }
const prof__kv *prof__reader_header(const prof__reader *r) { return r->hdr; }

const char *prof__reader_get(const prof__reader *r, const char *key) {
  for (size_t i = 0; i < r->nhdr; i++)
    if (strcmp(r->hdr[i].key, key) == 0) return r->hdr[i].value;
  return NULL;
}

/* Room for n bytes in a chunk buffer; its content is not kept (each chunk
 * is read into it from scratch). */
static int grow(uint8_t **p, size_t *cap, size_t n) {
  if (*cap >= n) return 1;
  size_t c = *cap ? *cap : 65536;
  while (c < n) c *= 2;
  uint8_t *q = prof__hugepage_alloc(c);
  if (!q) return 0;
  free(*p);
  *p = q;
  *cap = c;
  return 1;
}

/* Read and check the next chunk. Returns 1, 0 at EOF, or an error. */
static int load_chunk(prof__reader *r) {
  unsigned char h[PROF_CHUNK_HDR];
  r->chunk_off = r->offset;
  size_t got = fread(h, 1, sizeof h, r->f);
  if (got == 0 && feof(r->f)) {
    if (r->footer) return 0;
    return fail(r, PROF_ETRUNC,
                "trace ends after %llu complete chunks without a footer (the program was "
                "probably killed); everything before offset %llu was read",
                (unsigned long long)r->chunks, (unsigned long long)r->offset);
  }
  if (got < sizeof h)
    return fail(r, PROF_ETRUNC, "trace is truncated inside chunk %llu at offset %llu",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off);
  if (prof__rd32(h) != PROF_CHUNK_MAGIC)
    return fail(r, PROF_EFORMAT, "corrupt trace: no chunk marker at offset %llu (chunk %llu)",
                (unsigned long long)r->chunk_off, (unsigned long long)r->chunks);
  unsigned type = h[4], codec = h[5], raw = prof__rd32(h + 8), stored = prof__rd32(h + 12);
  if (codec > PROF_CODEC_ZSTD || raw > PROF_MAX_CHUNK || stored > PROF_MAX_CHUNK ||
      (codec == PROF_CODEC_RAW && raw != stored) || type == 0)
    return fail(r, PROF_EFORMAT, "corrupt trace: chunk %llu at offset %llu has an invalid header",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off);
  if ((uint64_t)stored > r->size - (r->chunk_off + sizeof h))
    return fail(r, PROF_ETRUNC,
                "trace is truncated inside chunk %llu at offset %llu (%u bytes announced, %llu "
                "present); everything before it was read",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off, stored,
                (unsigned long long)(r->size - r->chunk_off - sizeof h));
  if (raw > r->chunk_cap || stored > r->chunk_cap)
    return fail(r, PROF_ENOMEM,
                "chunk %llu at offset %llu declares %u bytes, more than the %u MiB mlprof writes in one "
                "chunk: not a trace this mlprof reads safely; MLPROF_READ_MAX_MB=0 reads it if it is genuine",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off, raw > stored ? raw : stored,
                r->chunk_cap >> 20);
  if (r->read_cap && raw > r->read_cap - (r->raw_total < r->read_cap ? r->raw_total : r->read_cap))
    return fail(r, PROF_ENOMEM,
                "chunk %llu at offset %llu would take decompressed data past the cap of %llu MiB "
                "(%llu MiB so far, %u bytes more): not a trace this mlprof reads safely; raise "
                "MLPROF_READ_MAX_MB (0 = no cap) if it is genuine",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off,
                (unsigned long long)(r->read_cap >> 20), (unsigned long long)(r->raw_total >> 20), raw);
  if (!grow(&r->stored, &r->stored_cap, stored ? stored : 1) ||
      !grow(&r->raw, &r->raw_cap, raw ? raw : 1))
    return fail(r, PROF_ENOMEM, "out of memory reading chunk %llu", (unsigned long long)r->chunks);
  if (fread(r->stored, 1, stored, r->f) != stored)
    return fail(r, PROF_ETRUNC, "trace is truncated inside chunk %llu at offset %llu",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off);
  uint32_t crc = prof__crc32c(0, h + 4, 12);
  crc = prof__crc32c(crc, r->stored, stored);
  if (CRC_BAD(crc, prof__rd32(h + 16)))
    return fail(r, PROF_EFORMAT, "corrupt trace: checksum mismatch in chunk %llu at offset %llu",
                (unsigned long long)r->chunks, (unsigned long long)r->chunk_off);
  if (codec == PROF_CODEC_ZSTD) {
    char zerr[128];
    if (prof__zd_decompress(r->zd, r->stored, stored, r->raw, raw, zerr) != 0)
      return fail(r, PROF_EFORMAT, "corrupt trace: chunk %llu at offset %llu: %s",
                  (unsigned long long)r->chunks, (unsigned long long)r->chunk_off, zerr);
  } else if (raw) {
    memcpy(r->raw, r->stored, raw);
  }
  r->raw_total += raw;
  r->offset = r->chunk_off + sizeof h + stored;
  r->chunks++;
  r->type = (int)type;
  r->cur.p = r->raw;
  r->cur.end = r->raw + raw;
  r->cur.bad = 0;
  r->ev_left = 0;
  r->kv_left = 0;
  r->chunk_done = 0;
  if (type == PROF_CHUNK_META || type == PROF_CHUNK_FOOTER) {
    r->kv_left = prof__cur_varint(&r->cur);
    if (r->cur.bad) return fail(r, PROF_EFORMAT, "corrupt key/value chunk %llu", (unsigned long long)r->chunks - 1);
    if (type == PROF_CHUNK_FOOTER) r->footer = 1;
  }
  return 1;
}

static int bad_payload(prof__reader *r, const char *what) {
  return fail(r, PROF_EFORMAT, "corrupt trace: malformed %s in chunk %llu at offset %llu", what,
              (unsigned long long)(r->chunks - 1), (unsigned long long)r->chunk_off);
}

/* Unchecked varint for the fast path: the caller guarantees 10 bytes. */
static inline uint64_t fast_varint(const uint8_t **pp, int *bad) {
  const uint8_t *p = *pp;
  uint64_t v = *p & 0x7f;
  if (PROF_LIKELY_R(!(*p++ & 0x80))) {
    *pp = p;
    return v;
  }
  for (int shift = 7; shift < 64; shift += 7) {
    uint8_t byte = *p++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *pp = p;
      return v;
    }
  }
  *bad = 1;
  *pp = p;
  return 0;
}

/* Longest encoded event: type, flags, cat and 5 varints (name, time delta,
 * a, b, aux) of up to 10 bytes each. The fast path reads a varint's bytes
 * until one ends it, so it must have all of them in the chunk. */
#define MAX_ENCODED_EVENT (3 + 5 * 10)

/* Decode the next event of the current EVENTS chunk into *e and its thread
 * into *tid: 1, or an error (the reader's error is set). */
static inline int decode_event(prof__reader *r, prof__event *e, uint32_t *tid) {
  prof__cur *c = &r->cur;
  if (!r->ev_left) {
    r->ev_tid = (uint32_t)prof__cur_varint(c);
    r->ev_left = prof__cur_varint(c);
    r->ev_prev = 0;
    r->ev_prev_a = 0;
    if (c->bad || !r->ev_left || r->ev_left > (uint64_t)(c->end - c->p))
      return bad_payload(r, "event block");
  }
  uint8_t flags;
  uint64_t name, aux;
  int64_t dts;
  if (PROF_LIKELY_R(c->end - c->p >= MAX_ENCODED_EVENT)) {
    /* Enough bytes for any event: decode without per-byte bounds checks. */
    const uint8_t *p = c->p;
    int bad = 0;
    e->type = *p++;
    flags = *p++;
    e->cat = (flags & PROF_EVF_CAT) ? *p++ : 0;
    name = fast_varint(&p, &bad);
    dts = prof__unzigzag(fast_varint(&p, &bad));
    e->a = (flags & PROF_EVF_A) ? fast_varint(&p, &bad) : 0;
    e->b = (flags & PROF_EVF_B) ? fast_varint(&p, &bad) : 0;
    aux = (flags & PROF_EVF_AUX) ? fast_varint(&p, &bad) : 0;
    c->p = p;
    c->bad |= bad;
  } else {
    e->type = prof__cur_u8(c);
    flags = prof__cur_u8(c);
    e->cat = (flags & PROF_EVF_CAT) ? prof__cur_u8(c) : 0;
    name = prof__cur_varint(c);
    dts = prof__cur_svarint(c);
    e->a = (flags & PROF_EVF_A) ? prof__cur_varint(c) : 0;
    e->b = (flags & PROF_EVF_B) ? prof__cur_varint(c) : 0;
    aux = (flags & PROF_EVF_AUX) ? prof__cur_varint(c) : 0;
  }
  if (c->bad || e->type == 0 || e->type > PROF_EV_TYPE_MAX || (flags & ~r->evf_known) ||
      name > UINT32_MAX || aux > UINT16_MAX || (flags & (PROF_EVF_ADELTA | PROF_EVF_A)) == PROF_EVF_ADELTA)
    return bad_payload(r, "event");
  if (flags & PROF_EVF_ADELTA) { /* zigzag delta from the block's previous one */
    e->a = r->ev_prev_a + (uint64_t)prof__unzigzag(e->a);
    r->ev_prev_a = e->a;
  }
  e->name = (uint32_t)name;
  e->aux = (uint16_t)aux;
  e->ts = r->ev_prev + (uint64_t)dts;
  r->ev_prev = e->ts;
  r->ev_left--;
  *tid = r->ev_tid;
  return 1;
}

static int next_event(prof__reader *r, prof__rec *rec) {
  int rc = decode_event(r, &rec->ev, &rec->tid);
  if (rc == 1) rec->kind = PROF_REC_EVENT;
  return rc;
}

static int next_kv(prof__reader *r, prof__rec *rec) {
  size_t kl, vl;
  const char *k = prof__cur_str(&r->cur, &kl);
  const char *v = prof__cur_str(&r->cur, &vl);
  if (r->cur.bad) return bad_payload(r, "key/value pair");
  rec->key = scratch(&r->s1, &r->s1_cap, k, kl);
  rec->value = scratch(&r->s2, &r->s2_cap, v, vl);
  if (!rec->key || !rec->value) return fail(r, PROF_ENOMEM, "out of memory");
  rec->kind = r->type == PROF_CHUNK_FOOTER ? PROF_REC_FOOTER : PROF_REC_META;
  r->kv_left--;
  return 1;
}

static int next_string(prof__reader *r, prof__rec *rec) {
  uint64_t id = prof__cur_varint(&r->cur);
  size_t n;
  const char *s = prof__cur_str(&r->cur, &n);
  if (r->cur.bad || id == 0 || id > UINT32_MAX) return bad_payload(r, "string entry");
  rec->kind = PROF_REC_STRING;
  rec->id = (uint32_t)id;
  rec->len = n;
  rec->str = scratch(&r->s1, &r->s1_cap, s, n);
  return rec->str ? 1 : fail(r, PROF_ENOMEM, "out of memory");
}

static int next_thread(prof__reader *r, prof__rec *rec) {
  uint64_t tid = prof__cur_varint(&r->cur);
  size_t n;
  const char *s = prof__cur_str(&r->cur, &n);
  rec->lost = prof__cur_varint(&r->cur);
  rec->exited = prof__cur_u8(&r->cur) != 0;
  if (r->cur.bad || tid > UINT32_MAX) return bad_payload(r, "thread entry");
  rec->kind = PROF_REC_THREAD;
  rec->tid = (uint32_t)tid;
  rec->len = n;
  rec->str = scratch(&r->s1, &r->s1_cap, s, n);
  return rec->str ? 1 : fail(r, PROF_ENOMEM, "out of memory");
}

/* Is there another record in the current chunk? */
static int chunk_has_more(prof__reader *r) {
  switch (r->type) {
  case PROF_CHUNK_META:
  case PROF_CHUNK_FOOTER:
    return r->kv_left > 0;
  case PROF_CHUNK_EVENTS:
    return r->ev_left > 0 || r->cur.p < r->cur.end;
  case PROF_CHUNK_STRINGS:
  case PROF_CHUNK_THREADS:
    return r->cur.p < r->cur.end;
  default:
    return !r->chunk_done;
  }
}

int prof__reader_next(prof__reader *r, prof__rec *rec) {
  if (r->err) return r->err;
  while (r->chunk_done || !chunk_has_more(r)) {
    int rc = load_chunk(r);
    if (rc <= 0) return rc;
  }
  switch (r->type) {
  case PROF_CHUNK_EVENTS:
    return next_event(r, rec);
  case PROF_CHUNK_STRINGS:
    return next_string(r, rec);
  case PROF_CHUNK_THREADS:
    return next_thread(r, rec);
  case PROF_CHUNK_META:
  case PROF_CHUNK_FOOTER:
    return next_kv(r, rec);
  default:
    rec->kind = PROF_REC_CHUNK;
    rec->chunk_type = r->type;
    rec->data = r->raw;
    rec->len = (size_t)(r->cur.end - r->cur.p);
    r->chunk_done = 1;
    return 1;
  }
}

int prof__reader_ready(prof__reader *r) {
  if (r->err) return r->err;
  while (r->chunk_done || !chunk_has_more(r)) {
    int rc = load_chunk(r);
    if (rc <= 0) return rc;
  }
  return r->type == PROF_CHUNK_EVENTS ? 2 : 1;
}

int prof__reader_events(prof__reader *r, prof__tev *out, size_t max, size_t *n) {
  *n = 0;
  int rc = prof__reader_ready(r);
  if (rc != 2) return rc == 1 ? 2 : rc;
  size_t k = 0;
  while (k < max && (r->ev_left > 0 || r->cur.p < r->cur.end)) {
    rc = decode_event(r, &out[k].ev, &out[k].tid);
    if (rc != 1) break;
    k++;
  }
  *n = k;
  return k ? 1 : rc; /* an error after k events comes with the next call */
}

const char *prof__reader_error(const prof__reader *r) { return r->err ? r->msg : ""; }
uint64_t prof__reader_offset(const prof__reader *r) { return r->offset; }
uint64_t prof__reader_size(const prof__reader *r) { return r->size; }
uint64_t prof__reader_chunks(const prof__reader *r) { return r->chunks; }
int prof__reader_has_footer(const prof__reader *r) { return r->footer; }

int prof__reader_rewind(prof__reader *r) {
  if (fseek(r->f, (long)r->first_chunk, SEEK_SET) != 0) return PROF_EIO;
  r->offset = r->first_chunk;
  r->chunks = 0;
  r->raw_total = 0;
  r->footer = 0;
  r->err = 0;
  r->msg[0] = 0;
  r->chunk_done = 1;
  r->cur.p = r->cur.end = NULL;
  return 0;
}

void prof__reader_close(prof__reader *r) {
  if (!r) return;
  if (r->f) fclose(r->f);
  prof__zd_free(r->zd);
  free(r->path);
  free(r->hdr);
  free(r->hdr_store);
  free(r->stored);
  free(r->raw);
  free(r->s1);
  free(r->s2);
  free(r);
}
