/* rec_stacks.h — the call-stack chunks as the trace stores them:
 * PROF_CHUNK_STACKS (interned stacks), PROF_CHUNK_MODULES (the loaded-module
 * map) and PROF_CHUNK_PYFRAMES (Python frames named in stacks).
 *
 * The recorder encodes them (src/stack/table.c, src/stack/modmap.c,
 * src/cpu/pyframes.c) and the reader decodes them
 * (src/analyze/sections/stacks); both go through the functions below and
 * nothing else touches their bytes. docs/trace-format-stacks.md is the
 * byte-level specification; keep the two in step.
 *
 * All three bodies are a varint count followed by that many entries, so an
 * encoder gathers its entries in a prof__rec_list and writes the body with
 * prof__rec_list_end() once the count is known; a decoder reads the count
 * with the chunk's *_dec_init() and then one entry per *_next() call.
 */
#ifndef PROF_REC_STACKS_H
#define PROF_REC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Deepest stack a reader accepts (the recorder writes at most 64). */
#define PROF_REC_STACKS_MAX_DEPTH 256
/* Largest stack id a reader accepts. */
#define PROF_REC_STACKS_MAX_ID (1u << 24)

/* ---- encoding (writer thread; allocates) --------------------------------- */

/* Entries of one body being built: `b` holds the entries, `n` counts them.
 * Start zeroed. An allocation failure sets b.oom; prof__rec_list_end()
 * reports it. */
typedef struct prof__rec_list {
  prof__buf b;
  uint32_t n;
} prof__rec_list;

/* Append the finished body (the count, then the entries) to `out`. Returns
 * 0, or PROF_ENOMEM when `l` or `out` ran out of memory (`out` is then
 * unusable). `l` is left as it was: free it with prof__rec_list_free(). */
int prof__rec_list_end(const prof__rec_list *l, prof__buf *out);
void prof__rec_list_free(prof__rec_list *l);

/* Entries a producer gathers before it writes them (prof__rec_list_write)
 * and starts a new list: an entry is at most a few KiB, so a chunk stays
 * far below PROF_CHUNK_RAW_MAX however many entries there are. */
#define PROF_REC_LIST_PART (1u << 20)
/* Write the entries gathered (if any) as one chunk of `type` and empty the
 * list. Returns 0, or PROF_ENOMEM or the writer's error. */
int prof__rec_list_write(prof__rec_list *l, prof__tw *w, int type);

/* One module of a PROF_CHUNK_MODULES body. Strings need no NUL; when
 * decoded they point into the payload. */
typedef struct prof__rec_module {
  const char *path;
  size_t path_len;
  uint64_t bias;  /* runtime address - ELF virtual address */
  uint64_t start; /* runtime address of the lowest PT_LOAD segment */
  uint64_t size;  /* bytes up to the end of the highest PT_LOAD segment */
  const uint8_t *build_id; /* raw GNU build id; NULL or empty when none */
  size_t build_id_len;
} prof__rec_module;

/* One Python frame of a PROF_CHUNK_PYFRAMES body (strings as above). */
typedef struct prof__rec_pyframe {
  uint64_t key; /* the tagged address as it appears in stacks */
  const char *file;
  size_t file_len;
  const char *name;
  size_t name_len;
  int64_t line; /* 0: unknown */
} prof__rec_pyframe;

/* Append one stack: its id (>= 1) and `depth` addresses, innermost first,
 * each stored as the difference to the one before. */
void prof__rec_stacks_put(prof__rec_list *l, uint32_t id, const uintptr_t *pcs, int depth);
/* Append one module. */
void prof__rec_modules_put(prof__rec_list *l, const prof__rec_module *m);
/* Append one Python frame. */
void prof__rec_pyframes_put(prof__rec_list *l, const prof__rec_pyframe *f);

/* ---- decoding (any thread; never allocates) ------------------------------ */

/* A decoder over one body. Any malformed entry sets `bad` and ends it. */
typedef struct prof__rec_dec {
  prof__cur cur;
  uint64_t left; /* entries still to read */
  int bad;
} prof__rec_dec;

/* Start decoding `data[0..len)` (reads the count). Bytes after the last
 * entry are ignored. */
void prof__rec_stacks_dec_init(prof__rec_dec *d, const void *data, size_t len);
void prof__rec_modules_dec_init(prof__rec_dec *d, const void *data, size_t len);
void prof__rec_pyframes_dec_init(prof__rec_dec *d, const void *data, size_t len);

/* Next stack: 1 with *id, *depth and pcs[0..*depth) filled (`pcs` holds
 * PROF_REC_STACKS_MAX_DEPTH addresses), 0 at the end, PROF_EFORMAT on a
 * truncated body, an id of 0 or above PROF_REC_STACKS_MAX_ID, or a depth of 0
 * or above PROF_REC_STACKS_MAX_DEPTH (the entries before were delivered). */
int prof__rec_stacks_next(prof__rec_dec *d, uint32_t *id, uintptr_t *pcs, int *depth);
/* Next module: 1 with *m filled (strings point into the payload), 0 at the
 * end, PROF_EFORMAT on a truncated body. */
int prof__rec_modules_next(prof__rec_dec *d, prof__rec_module *m);
/* Next Python frame: 1 with *f filled (strings point into the payload), 0 at
 * the end, PROF_EFORMAT on a truncated body. */
int prof__rec_pyframes_next(prof__rec_dec *d, prof__rec_pyframe *f);

#endif /* PROF_REC_STACKS_H */
