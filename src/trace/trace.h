/* trace.h — the `.mlpt` trace file: writer and streaming reader.
 *
 * A trace is a header (magic, version, key/value pairs) followed by chunks,
 * each an independent zstd frame with its own CRC, so a trace cut short by a
 * crash is readable up to its last complete chunk. docs/trace-format.md is
 * the byte-level specification. The writer is used by the profiler's
 * background thread and by tests that build traces by hand; the reader is
 * used by the analyzer and never loads a whole trace into memory.
 */
#ifndef PROF_TRACE_H
#define PROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "event.h"

#define PROF_TRACE_VERSION 2     /* what the writer writes */
#define PROF_TRACE_VERSION_MIN 1 /* oldest version the reader reads */
#define PROF_TRACE_MAGIC "\x89MLPT\r\n\x1a" /* 8 bytes */

/* Chunk types. Values are part of the format: never renumber. A reader skips
 * chunk types it does not know (delivering them as PROF_REC_CHUNK). */
enum {
  PROF_CHUNK_STRINGS = 1, /* string table entries: id -> text */
  PROF_CHUNK_EVENTS = 2,  /* per-thread blocks of delta-encoded events */
  PROF_CHUNK_THREADS = 3, /* thread id, name, lost-event total, exited flag */
  PROF_CHUNK_META = 4,    /* key/value pairs learned after the header */
  PROF_CHUNK_FOOTER = 5,  /* key/value totals; the last chunk of a complete trace */
  PROF_CHUNK_STACKS = 6,  /* call stacks: id -> addresses (memory, sampling) */
  PROF_CHUNK_MODULES = 7, /* loaded modules: path, base, size, build id */
  PROF_CHUNK_GPU = 8,     /* GPU activity records */
  PROF_CHUNK_HIST = 9,    /* tensor histogram summaries */
  PROF_CHUNK_RES = 10,    /* resource monitoring: busiest threads (docs/resources.md) */
  PROF_CHUNK_PYFRAMES = 11, /* Python frames in stacks: tagged address -> file, function, line */
  PROF_CHUNK_STEPSUM = 12,  /* per-step summaries of a bounded trace (rec_stepsum.h) */
  PROF_CHUNK_TYPE_MAX = 255
};

/* A key/value pair (header, META, FOOTER). Values are text; numbers are in
 * decimal. */
typedef struct prof__kv {
  const char *key;
  const char *value;
} prof__kv;

/* ---- Writer ------------------------------------------------------------- */

typedef struct prof__tw prof__tw;

/* Create `path` and write the header from `kv[0..n)`. Returns NULL on failure
 * with a message in `err` (at least PROF_ERR_MAX bytes), e.g. the path and strerror.
 * A regular file of the user's at `path` is replaced (tools, tests). */
prof__tw *prof__tw_open(const char *path, const prof__kv *kv, size_t n, char *err);

/* As prof__tw_open, but `path` must not exist: it is created with O_EXCL
 * and anything already there is left alone (*taken = 1 when that was the
 * failure). The profiler's own traces are created this way
 * (trace/tracename.h picks a free name). */
prof__tw *prof__tw_create(const char *path, const prof__kv *kv, size_t n, int *taken, char *err);

/* Queue a string table entry (id > 0). Strings go out before the events of
 * the same flush, so events may reference them in the same chunk round. */
int prof__tw_string(prof__tw *w, uint32_t id, const char *s, size_t len);

/* Queue events of thread `tid`; `ev[i].ts` in nanoseconds, non-decreasing
 * within one thread. */
int prof__tw_events(prof__tw *w, uint32_t tid, const prof__event *ev, size_t n);

/* Queue a thread record (name may be NULL). Latest record per tid wins. */
int prof__tw_thread(prof__tw *w, uint32_t tid, const char *name, uint64_t lost, int exited);

/* Write one META chunk of key/value pairs now. */
int prof__tw_meta(prof__tw *w, const prof__kv *kv, size_t n);

/* Write one chunk of a producer-defined type with an opaque payload. */
int prof__tw_chunk(prof__tw *w, int type, const void *data, size_t len);

/* Compress and write everything queued (strings, then threads, then events).
 * Returns 0 or PROF_EIO. After a write error every later call fails fast
 * with PROF_EIO. */
int prof__tw_flush(prof__tw *w);

/* Bytes of events queued but not yet flushed (for the caller's policy). */
size_t prof__tw_pending(const prof__tw *w);

/* A compressor made now, apart from any trace, with its tables allocated
 * and touched (most of the first chunk's cost): for a writer thread that
 * has time before its first flush. NULL without memory (the first chunk
 * then makes one). Give it to a trace with prof__tw_adopt, or free it. */
struct prof__zc *prof__tw_warm_new(void);
void prof__tw_warm_free(struct prof__zc *z);
/* w compresses with z from now on (freed with w); z is freed at once when
 * w has a compressor already. */
void prof__tw_adopt(prof__tw *w, struct prof__zc *z);
/* From now on, chunks are stored as they are when w has no compressor yet,
 * rather than making one: a last flush that should not pay for it (a
 * short program's exit). Chunks stay compressed when it has one. */
void prof__tw_plain(prof__tw *w);

/* Bytes written to the file so far. */
uint64_t prof__tw_bytes(const prof__tw *w);

/* Keep the file at `path` (the one w writes, made by prof__tw_create)
 * within max_bytes (MLPROF_MAX_MB): call before anything but the header is
 * written. From then on, the writer summarises every completed step
 * (rec_stepsum.h) and, when the next chunk would take the file past the
 * bound, rewrites it under a temporary name and renames it over `path`:
 * the header, every chunk that defines names, threads, stacks and modules,
 * all step summaries (older ones rounded when they would take more than a
 * quarter of the bound) and the most recent detail chunks (events, GPU,
 * histograms, resources) that fit in half the bound. The file at `path`
 * is a complete trace at every moment. When names and summaries alone
 * outgrow the bound it says so once on stderr and stops bounding.
 * Returns 0 or a negative error (PROF_EINVAL, PROF_ENOMEM). */
int prof__tw_bound(prof__tw *w, const char *path, uint64_t max_bytes);
/* Totals of the bound so far (NULL pointers are skipped). */
void prof__tw_bound_stats(const prof__tw *w, uint64_t *compactions, uint64_t *dropped_bytes, uint64_t *steps);
/* Tell a bounded trace's step summariser the id a name will have before its
 * string reaches the trace (the writer queues events before the strings
 * they name): its CPU and memory counters. No effect when not bounded. */
void prof__tw_bound_name(prof__tw *w, uint32_t id, const char *name);
/* The writer's hooks (memory, counters) ran: once per writer cycle. A held
 * step summary is written without memory readings once two cycles passed
 * after it without any (memory is not recorded), and without the readings
 * still missing after 40. No effect when not bounded. */
void prof__tw_bound_cycle(prof__tw *w);

/* Flush, write the FOOTER chunk from kv, close. Frees w (also on error).
 * Returns 0 or PROF_EIO. */
int prof__tw_close(prof__tw *w, const prof__kv *kv, size_t n);
/* The same, and *sys_err (may be NULL) receives prof__tw_errno() as it was
 * before w was freed. */
int prof__tw_finish(prof__tw *w, const prof__kv *kv, size_t n, int *sys_err);

/* The errno of the first write (or close) that failed, captured when it
 * failed; 0 when none did. A caller reporting PROF_EIO prints this, never
 * the global errno of a later moment. */
int prof__tw_errno(const prof__tw *w);

/* Close without a footer (tests of truncation, fatal errors). Frees w. */
void prof__tw_abort(prof__tw *w);

/* ---- Reader ------------------------------------------------------------- */

enum {
  PROF_REC_EVENT = 1,  /* tid, ev (ts in ns) */
  PROF_REC_STRING = 2, /* id, str, len */
  PROF_REC_THREAD = 3, /* tid, str (name, "" if none), lost, exited */
  PROF_REC_META = 4,   /* key, value (from a META chunk) */
  PROF_REC_FOOTER = 5, /* key, value (from the FOOTER chunk) */
  PROF_REC_CHUNK = 6   /* chunk_type, data, len: a chunk the core reader does not decode */
};

typedef struct prof__rec {
  int kind;
  uint32_t tid;
  prof__event ev;
  uint32_t id;
  const char *str;     /* NUL-terminated; valid until the next call */
  size_t len;
  uint64_t lost;
  int exited;
  const char *key;     /* NUL-terminated; valid until the next call */
  const char *value;
  int chunk_type;
  const uint8_t *data; /* valid until the next call */
} prof__rec;

typedef struct prof__reader prof__reader;

/* Decompression cap. One pass over a trace may decompress at most
 * MLPROF_READ_MAX_MB MiB (default PROF_READ_MAX_MB_DEFAULT; 0 = no cap) or
 * PROF_READ_RATIO times the file's size, whichever is larger; past it
 * prof__reader_next() fails with PROF_ENOMEM and a message naming the
 * variable. prof__reader_cap_bytes() returns the cap in bytes for a file of
 * `file_size` bytes (0: none), with a message in err (>= PROF_ERR_MAX bytes, "" if
 * none) when the variable is not a number. */
#define PROF_READ_MAX_MB_DEFAULT 1024u
#define PROF_READ_RATIO 16u
uint64_t prof__reader_cap_bytes(uint64_t file_size, char *err);

/* Open and validate the header. Returns 0 and sets *out, or a negative error
 * (PROF_ENOENT, PROF_EFORMAT, PROF_ETRUNC, PROF_EVERSION, PROF_ENOMEM) with a
 * message in `err` (at least PROF_ERR_MAX bytes). */
int prof__reader_open(prof__reader **out, const char *path, char *err);

/* Header pairs, in file order. */
size_t prof__reader_header_count(const prof__reader *r);
const prof__kv *prof__reader_header(const prof__reader *r);
/* Value of header key, or NULL. */
const char *prof__reader_get(const prof__reader *r, const char *key);

/* Next record: returns 1 with *rec filled, 0 at a clean end (footer seen and
 * nothing after it), or a negative error: PROF_ETRUNC (file ends inside or
 * before the footer: everything before was delivered), PROF_EFORMAT (bad
 * CRC, bad sizes, bad encoding). prof__reader_error() says where and why.
 * After an error, further calls return the same error. */
int prof__reader_next(prof__reader *r, prof__rec *rec);

/* Message for the last error ("" if none). */
const char *prof__reader_error(const prof__reader *r);

/* Progress and totals. */
uint64_t prof__reader_offset(const prof__reader *r);   /* bytes consumed */
uint64_t prof__reader_size(const prof__reader *r);     /* file size */
uint64_t prof__reader_chunks(const prof__reader *r);   /* chunks read */
int prof__reader_has_footer(const prof__reader *r);

/* Batched reading (the analyzer's decode thread). prof__reader_ready()
 * loads chunks until a record is ready: 2 when it is an event, 1 for any
 * other record (read it with prof__reader_next()), 0 at a clean end or the
 * error prof__reader_next() would return. prof__reader_events() decodes up
 * to `max` events of the current EVENTS chunk into out (never past the
 * chunk's end): 1 with *n > 0; 2 with *n = 0 when the next record is not an
 * event; 0 or an error as prof__reader_next(). An event that does not
 * decode ends the batch before it; the error comes with the next call, so
 * the records delivered, their order and the message are those of
 * prof__reader_next(). */
typedef struct prof__tev {
  uint32_t tid;
  prof__event ev;
} prof__tev;
int prof__reader_ready(prof__reader *r);
int prof__reader_events(prof__reader *r, prof__tev *out, size_t max, size_t *n);

/* Rewind to the first chunk (a second pass over the same trace). */
int prof__reader_rewind(prof__reader *r);

void prof__reader_close(prof__reader *r);

/* ---- Encoding helpers shared by producers' chunk codecs ---------------- */

/* A growable byte buffer. */
typedef struct prof__buf {
  uint8_t *p;
  size_t len, cap;
  int oom; /* set once an allocation failed; later appends are dropped */
} prof__buf;

/* The zigzag map of svarints: 0, -1, 1, -2, ... to 0, 1, 2, 3, ... and back. */
static inline uint64_t prof__zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t prof__unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

void prof__buf_free(prof__buf *b);
/* Make room for `extra` more bytes; returns 0 (and sets oom) on failure. */
int prof__buf_reserve(prof__buf *b, size_t extra);
void prof__buf_put(prof__buf *b, const void *p, size_t n);
void prof__buf_u8(prof__buf *b, uint8_t v);
void prof__buf_varint(prof__buf *b, uint64_t v);
void prof__buf_svarint(prof__buf *b, int64_t v);
void prof__buf_str(prof__buf *b, const char *s, size_t len); /* varint len + bytes */

/* A bounds-checked cursor over a payload. Any read past the end sets `bad`
 * and returns 0; callers check `bad` once at the end. */
typedef struct prof__cur {
  const uint8_t *p, *end;
  int bad;
} prof__cur;

uint8_t prof__cur_u8(prof__cur *c);
uint64_t prof__cur_varint(prof__cur *c);
int64_t prof__cur_svarint(prof__cur *c);
/* A varint-length string: returns a pointer into the payload (NOT
 * NUL-terminated) and its length, or NULL with bad set. */
const char *prof__cur_str(prof__cur *c, size_t *len);

uint32_t prof__crc32c(uint32_t crc, const void *p, size_t n);
/* The portable table implementation (the fast path uses SSE4.2 when present). */
uint32_t prof__crc32c_sw(uint32_t crc, const void *p, size_t n);

#endif /* PROF_TRACE_H */
