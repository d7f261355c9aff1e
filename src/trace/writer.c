/* writer.c — writes a `.mlpt` trace: the header, then compressed chunks.
 *
 * Callers queue strings, thread records and per-thread event batches; a
 * flush turns each queue into one chunk (strings first, so every event's
 * names are already in the file). Write errors (full disk, closed file) are
 * sticky: the first one is remembered, with the errno the system gave it at
 * that moment (prof__tw_errno), and every later call fails fast.
 *
 * prof__tw_create (the profiler's traces) creates the file at its name
 * (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600: it holds the command line) and
 * never touches a file already there; prof__tw_open (tools and tests)
 * creates it under a fresh temporary name and renames it over `path` (the
 * user's own regular file or nothing) once its header is written. Either
 * way the file is locked with flock(LOCK_EX) for as long as it is open, so
 * a child that execs sees that the name is taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "mlprof.h"
#include "format.h"
#include "outfile.h"
#include "trace.h"
#include "writer_int.h"
#include "zstd_stream.h"

/* zstd levels by chunk size. A chunk of 64 KiB or more comes from a heavy
 * stream (full memory mode, fast sampling), where the writer's time counts
 * more than the bytes: level -3 there. With the delta-coded addresses, a
 * full-mode run of an allocation-heavy program then spends 40 % fewer
 * instructions in zstd than level 1 did on absolute addresses, for a trace
 * of the same size. Smaller chunks, from ordinary runs, keep level 1. */
#define LEVEL_SMALL 1
#define LEVEL_FAST (-3)
#define FAST_CHUNK (64u << 10)

/* Events of one prof__tw_events() call go in blocks of at most this many,
 * so that a block (at most MAX_EVENT bytes an event) fits a chunk. */
#define BLOCK_EVENTS 65536

static int write_all(prof__tw *w, const void *p, size_t n) {
  const uint8_t *q = p;
  while (n) {
    ssize_t r = write(w->fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      w->failed = 1;
      w->err = r < 0 && errno ? errno : EIO; /* a write of 0 bytes sets no errno */
      return PROF_EIO;
    }
    q += r;
    n -= (size_t)r;
    w->bytes += (uint64_t)r;
  }
  return 0;
}

static void put_kvs(prof__buf *b, const prof__kv *kv, size_t n) {
  prof__buf_varint(b, n);
  for (size_t i = 0; i < n; i++) {
    const char *k = kv[i].key ? kv[i].key : "";
    const char *v = kv[i].value ? kv[i].value : "";
    prof__buf_str(b, k, strlen(k));
    prof__buf_str(b, v, strlen(v));
  }
}

/* The header (magic, version, key/values, CRC) at the start of w->fd, in
 * one write. */
static int put_header(prof__tw *w, const prof__kv *kv, size_t n) {
  prof__buf kvs = {0}, all = {0};
  put_kvs(&kvs, kv, n);
  unsigned char fixed[16];
  memcpy(fixed, PROF_TRACE_MAGIC, 8);
  prof__le32(fixed + 8, PROF_TRACE_VERSION);
  prof__le32(fixed + 12, (unsigned)kvs.len);
  unsigned char crc[4];
  prof__le32(crc, prof__crc32c(0, kvs.p, kvs.len));
  prof__buf_put(&all, fixed, sizeof fixed);
  prof__buf_put(&all, kvs.p, kvs.len);
  prof__buf_put(&all, crc, sizeof crc);
  int rc = kvs.oom || all.oom ? PROF_ENOMEM : write_all(w, all.p, all.len);
  prof__buf_free(&kvs);
  prof__buf_free(&all);
  return rc;
}

/* The failure of a header write: the errno the writer kept for its first
 * failed write (never a stale errno read later). */
static void header_failed(int rc, int werr, const char *path, char *err) {
  snprintf(err, PROF_ERR_MAX, "cannot write trace header to '%s': %s", path,
           rc == PROF_ENOMEM ? "out of memory" : strerror(werr ? werr : EIO));
}

prof__tw *prof__tw_open(const char *path, const prof__kv *kv, size_t n, char *err) {
  if (prof__out_check(path, err) != 0) return NULL;
  prof__tw *w = calloc(1, sizeof *w);
  size_t tmp_n = strlen(path) + 48;
  char *tmp = malloc(tmp_n);
  if (!w || !tmp) {
    snprintf(err, PROF_ERR_MAX, "out of memory");
    free(w);
    free(tmp);
    return NULL;
  }
  w->fd = prof__out_create(path, tmp, tmp_n, 0600, err);
  if (w->fd < 0) {
    free(w);
    free(tmp);
    return NULL;
  }
  (void)flock(w->fd, LOCK_EX | LOCK_NB); /* a fresh file: nobody else holds it */
  int rc = put_header(w, kv, n);
  if (rc) {
    header_failed(rc, w->err, path, err);
    unlink(tmp);
  } else if (prof__out_commit(tmp, path, err) != 0) {
    rc = PROF_EIO;
  }
  free(tmp);
  if (rc) {
    close(w->fd);
    prof__zc_free(w->zc);
    free(w);
    return NULL;
  }
  return w;
}

prof__tw *prof__tw_create(const char *path, const prof__kv *kv, size_t n, int *taken, char *err) {
  *taken = 0;
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *taken = errno == EEXIST;
    snprintf(err, PROF_ERR_MAX, "cannot create '%s': %s", path, strerror(errno));
    return NULL;
  }
  prof__tw *w = calloc(1, sizeof *w);
  int rc = PROF_ENOMEM;
  if (w) {
    w->fd = fd;
    (void)flock(fd, LOCK_EX | LOCK_NB); /* created now: nobody else holds it */
    rc = put_header(w, kv, n);
  }
  if (!rc) return w;
  header_failed(rc, w ? w->err : 0, path, err);
  unlink(path); /* this call created it */
  close(fd);
  if (w) prof__zc_free(w->zc);
  free(w);
  return NULL;
}

/* w's compressor, made at its first chunk unless one was adopted
 * (prof__tw_adopt) or w is plain; NULL without memory, and the next use
 * tries again. */
static prof__zc *compressor(prof__tw *w) {
  if (!w->zc && !w->plain) w->zc = prof__zc_new(LEVEL_SMALL);
  return w->zc;
}

/* The chunk (header and stored payload, compressed when that is smaller)
 * appended to out. */
int prof__tw_frame(prof__tw *w, int type, const void *data, size_t len, prof__buf *out) {
  if (len > PROF_CHUNK_RAW_MAX) return PROF_EINVAL;
  const void *stored = data;
  size_t stored_len = len;
  int codec = PROF_CODEC_RAW;
  if (len >= 64 && compressor(w)) { /* no compressor (no memory, plain): stored as it is */
    prof__zc_level(w->zc, len >= FAST_CHUNK ? LEVEL_FAST : LEVEL_SMALL);
    size_t z = prof__zc_compress(w->zc, data, len, &w->zbuf, &w->zcap);
    if (z && z < len) {
      stored = w->zbuf;
      stored_len = z;
      codec = PROF_CODEC_ZSTD;
    }
  }
  unsigned char h[PROF_CHUNK_HDR];
  prof__le32(h, PROF_CHUNK_MAGIC);
  h[4] = (unsigned char)type;
  h[5] = (unsigned char)codec;
  h[6] = h[7] = 0;
  prof__le32(h + 8, (unsigned)len);
  prof__le32(h + 12, (unsigned)stored_len);
  uint32_t crc = prof__crc32c(0, h + 4, 12);
  crc = prof__crc32c(crc, stored, stored_len);
  prof__le32(h + 16, crc);
  prof__buf_put(out, h, sizeof h);
  prof__buf_put(out, stored, stored_len);
  return out->oom ? PROF_ENOMEM : 0;
}

static int put_chunk(prof__tw *w, int type, const void *data, size_t len) {
  if (w->failed) return PROF_EIO;
  if (len > PROF_CHUNK_RAW_MAX) return PROF_EINVAL;
  /* One buffer, one write: a crash leaves either the whole chunk or a
   * detectable partial one. */
  prof__buf out = {0};
  int rc = prof__tw_frame(w, type, data, len, &out);
  /* A bounded trace may be rewritten first; its own summaries then hold
   * what a STEPSUM chunk of the flush would have added. */
  if (!rc && w->bound && prof__twb_before(w, out.len) && type == PROF_CHUNK_STEPSUM) {
    prof__buf_free(&out);
    return 0;
  }
  uint64_t at = w->bytes;
  if (!rc) rc = write_all(w, out.p, out.len);
  if (!rc && w->bound) prof__twb_written(w, at, out.len, type);
  prof__buf_free(&out);
  return rc;
}

/* ---- queues ---------------------------------------------------------------- */

/* Start of the chunk the queue's next entry goes to. */
static size_t q_chunk_start(const tw_queue *q) { return q->ncuts ? q->cuts[q->ncuts - 1] : 0; }

/* The entry that began at `start` was appended: when it took the current
 * chunk past the bound, the next chunk begins with it. */
static void q_entry(tw_queue *q, size_t start) {
  if (q->b.len - q_chunk_start(q) <= PROF_CHUNK_RAW_MAX || start == q_chunk_start(q)) return;
  if (q->ncuts == q->cuts_cap) {
    size_t cap = q->cuts_cap ? q->cuts_cap * 2 : 8;
    size_t *c = realloc(q->cuts, cap * sizeof *c);
    if (!c) {
      q->oom = 1;
      return;
    }
    q->cuts = c;
    q->cuts_cap = cap;
  }
  q->cuts[q->ncuts++] = start;
}

/* Write the queue as its chunks and empty it. */
static int q_flush(prof__tw *w, int type, tw_queue *q) {
  int rc = q->b.oom || q->oom ? PROF_ENOMEM : 0;
  for (size_t i = 0; !rc && q->b.len && i <= q->ncuts; i++) {
    size_t from = i ? q->cuts[i - 1] : 0, to = i < q->ncuts ? q->cuts[i] : q->b.len;
    rc = put_chunk(w, type, q->b.p + from, to - from);
  }
  q->b.len = 0;
  q->b.oom = 0;
  q->ncuts = 0;
  q->oom = 0;
  return rc;
}

static void q_free(tw_queue *q) {
  prof__buf_free(&q->b);
  free(q->cuts);
}

/* Longest string a STRINGS entry holds: with its id and length it fits a
 * chunk. Longer names are cut (only a name of megabytes is). */
#define MAX_STRING (PROF_CHUNK_RAW_MAX - 32)

int prof__tw_string(prof__tw *w, uint32_t id, const char *s, size_t len) {
  if (!w || !id || (!s && len)) return PROF_EINVAL;
  if (w->failed) return PROF_EIO;
  size_t start = w->strings.b.len;
  prof__buf_varint(&w->strings.b, id);
  prof__buf_str(&w->strings.b, s ? s : "", len < MAX_STRING ? len : MAX_STRING);
  q_entry(&w->strings, start);
  if (w->bound) prof__twb_string(w, id, s, len);
  return w->strings.b.oom ? PROF_ENOMEM : 0;
}

static inline uint8_t *put_varint(uint8_t *q, uint64_t v) {
  while (v >= 0x80) {
    *q++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *q++ = (uint8_t)v;
  return q;
}

/* Encode events straight into the buffer: one capacity check per batch. */
static void put_events(prof__buf *b, const prof__event *ev, size_t n) {
  enum { MAX_EVENT = 2 + 1 + 5 + 10 + 10 + 10 + 3 };
  if (!prof__buf_reserve(b, n * MAX_EVENT)) return;
  uint8_t *q = b->p + b->len;
  uint64_t prev = 0, prev_a = 0;
  for (size_t i = 0; i < n; i++) {
    const prof__event *e = &ev[i];
    /* Addresses of memory events as deltas: neighbouring blocks differ in
     * their low bytes only (a quarter fewer bytes to compress in full mode). */
    int adelta = e->a && (e->type == PROF_EV_ALLOC || e->type == PROF_EV_FREE);
    uint8_t flags = (e->cat ? PROF_EVF_CAT : 0) | (e->a ? PROF_EVF_A : 0) | (e->b ? PROF_EVF_B : 0) |
                    (e->aux ? PROF_EVF_AUX : 0) | (adelta ? PROF_EVF_ADELTA : 0);
    *q++ = e->type;
    *q++ = flags;
    if (e->cat) *q++ = e->cat;
    q = put_varint(q, e->name);
    q = put_varint(q, prof__zigzag((int64_t)(e->ts - prev)));
    if (adelta) {
      q = put_varint(q, prof__zigzag((int64_t)(e->a - prev_a)));
      prev_a = e->a;
    } else if (e->a) {
      q = put_varint(q, e->a);
    }
    if (e->b) q = put_varint(q, e->b);
    if (e->aux) q = put_varint(q, e->aux);
    prev = e->ts;
  }
  b->len = (size_t)(q - b->p);
}

int prof__tw_events(prof__tw *w, uint32_t tid, const prof__event *ev, size_t n) {
  if (!w || (!ev && n)) return PROF_EINVAL;
  if (w->failed) return PROF_EIO;
  prof__buf *b = &w->events.b;
  while (n) {
    size_t k = n < BLOCK_EVENTS ? n : BLOCK_EVENTS, start = b->len;
    prof__buf_varint(b, tid);
    prof__buf_varint(b, k);
    put_events(b, ev, k);
    q_entry(&w->events, start);
    if (w->bound) prof__twb_events(w, tid, ev, k);
    ev += k;
    n -= k;
  }
  return b->oom ? PROF_ENOMEM : 0;
}

int prof__tw_thread(prof__tw *w, uint32_t tid, const char *name, uint64_t lost, int exited) {
  if (!w) return PROF_EINVAL;
  if (w->failed) return PROF_EIO;
  const char *s = name ? name : "";
  size_t len = strlen(s);
  prof__buf *b = &w->threads.b;
  size_t start = b->len;
  prof__buf_varint(b, tid);
  prof__buf_str(b, s, len < MAX_STRING ? len : MAX_STRING);
  prof__buf_varint(b, lost);
  prof__buf_u8(b, exited ? 1 : 0);
  q_entry(&w->threads, start);
  return b->oom ? PROF_ENOMEM : 0;
}

static int kv_chunk(prof__tw *w, int type, const prof__kv *kv, size_t n) {
  prof__buf b = {0};
  put_kvs(&b, kv, n);
  int rc = b.oom ? PROF_ENOMEM : put_chunk(w, type, b.p, b.len);
  prof__buf_free(&b);
  return rc;
}

int prof__tw_meta(prof__tw *w, const prof__kv *kv, size_t n) {
  if (!w || (!kv && n)) return PROF_EINVAL;
  return kv_chunk(w, PROF_CHUNK_META, kv, n);
}

int prof__tw_chunk(prof__tw *w, int type, const void *data, size_t len) {
  if (!w || type <= 0 || type > PROF_CHUNK_TYPE_MAX || (!data && len)) return PROF_EINVAL;
  return put_chunk(w, type, data, len);
}

int prof__tw_flush(prof__tw *w) {
  if (!w) return PROF_EINVAL;
  int rc = q_flush(w, PROF_CHUNK_STRINGS, &w->strings);
  int rc2 = q_flush(w, PROF_CHUNK_THREADS, &w->threads);
  int rc3 = q_flush(w, PROF_CHUNK_EVENTS, &w->events);
  if (!rc3 && w->bound) rc3 = prof__twb_flush(w);
  if (w->failed) return PROF_EIO;
  return rc ? rc : rc2 ? rc2 : rc3;
}

size_t prof__tw_pending(const prof__tw *w) { return w ? w->events.b.len : 0; }

prof__zc *prof__tw_warm_new(void) {
  prof__zc *z = prof__zc_new(LEVEL_SMALL);
  if (!z) return NULL;
  unsigned char body[1024]; /* the size of a small program's chunks */
  uint32_t x = 2463534242u;
  for (size_t i = 0; i < sizeof body; i++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    body[i] = (unsigned char)(i % 3 ? x & 0x0f : i); /* compressible, not trivially */
  }
  uint8_t *out = NULL;
  size_t cap = 0;
  (void)prof__zc_compress(z, body, sizeof body, &out, &cap);
  free(out);
  return z;
}

void prof__tw_warm_free(prof__zc *z) { prof__zc_free(z); }

void prof__tw_adopt(prof__tw *w, prof__zc *z) {
  if (w && !w->zc) {
    w->zc = z;
    return;
  }
  prof__zc_free(z);
}

void prof__tw_plain(prof__tw *w) {
  if (w) w->plain = 1;
}

uint64_t prof__tw_bytes(const prof__tw *w) { return w ? w->bytes : 0; }

static void tw_free(prof__tw *w) {
  q_free(&w->strings);
  q_free(&w->threads);
  q_free(&w->events);
  prof__twb_free(w);
  prof__zc_free(w->zc);
  free(w->zbuf);
  free(w);
}

int prof__tw_errno(const prof__tw *w) { return w ? w->err : 0; }

int prof__tw_finish(prof__tw *w, const prof__kv *kv, size_t n, int *sys_err) {
  if (!w) return PROF_EINVAL;
  if (w->bound) prof__twb_finishing(w);
  int rc = prof__tw_flush(w);
  int rc2 = kv_chunk(w, PROF_CHUNK_FOOTER, kv, n);
  if (close(w->fd) != 0 && !rc && !rc2) {
    rc = PROF_EIO;
    if (!w->err) w->err = errno ? errno : EIO;
  }
  if (sys_err) *sys_err = w->err;
  tw_free(w);
  return rc ? rc : rc2;
}

int prof__tw_close(prof__tw *w, const prof__kv *kv, size_t n) { return prof__tw_finish(w, kv, n, NULL); }

void prof__tw_abort(prof__tw *w) {
  if (!w) return;
  close(w->fd);
  tw_free(w);
}
