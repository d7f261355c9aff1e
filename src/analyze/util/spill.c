/* spill.c — append-only arrays that spill their older items to an unlinked
 * temporary file (see spill.h). Blocks are written and read with
 * pwrite/pread at known offsets, so reading never disturbs writing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/util/array.h"
#include "analyze/util/spill.h"

void prof__spill_pool_init(prof__spill_pool *p, size_t budget) {
  memset(p, 0, sizeof *p);
  p->budget = budget;
}

void prof__spill_pool_free(prof__spill_pool *p) {
  if (p->file) fclose(p->file);
  p->file = NULL;
}

static int write_all(int fd, const uint8_t *b, size_t n, uint64_t off) {
  while (n) {
    ssize_t w = pwrite(fd, b, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w, n -= (size_t)w, off += (uint64_t)w;
  }
  return 0;
}

static int read_all(int fd, uint8_t *b, size_t n, uint64_t off) {
  while (n) {
    ssize_t r = pread(fd, b, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    b += r, n -= (size_t)r, off += (uint64_t)r;
  }
  return 0;
}

/* Move v's memory items to the file as one block: 0, or -1 (nothing moved;
 * the pool keeps everything in memory from now on). */
static int spill_out(prof__spill_pool *p, prof__spill *v) {
  if (p->no_file) return -1;
  if (!p->file && !(p->file = tmpfile())) {
    p->no_file = 1;
    return -1;
  }
  if (prof__arr_grow((void **)&v->blk, &v->blkcap, v->nblk + 1, sizeof *v->blk)) return -1;
  size_t bytes = v->nmem * v->item;
  if (write_all(fileno(p->file), v->mem, bytes, p->end)) {
    p->no_file = 1; /* a full disk: what was written stays readable */
    return -1;
  }
  v->blk[v->nblk++] = (prof__spill_blk){p->end, v->nmem};
  p->end += bytes;
  p->spilled += v->nmem;
  v->nmem = 0;
  return 0;
}

int prof__spill_push(prof__spill_pool *p, prof__spill *v, const void *item) {
  if (v->nmem == v->cap) {
    int spilled = v->cap >= PROF_SPILL_MIN_BLOCK && p->mem >= p->budget && spill_out(p, v) == 0;
    if (!spilled) {
      size_t cap = v->cap;
      if (prof__arr_grow((void **)&v->mem, &cap, v->nmem + 1, v->item)) return -1;
      p->mem += (cap - v->cap) * v->item;
      v->cap = cap;
    }
  }
  memcpy(v->mem + v->nmem * v->item, item, v->item);
  v->nmem++;
  v->n++;
  return 0;
}

void prof__spill_free(prof__spill_pool *p, prof__spill *v) {
  p->mem -= v->cap * v->item;
  free(v->mem);
  free(v->blk);
  size_t item = v->item;
  *v = PROF_SPILL_INIT(item);
}

void prof__spill_iter_begin(prof__spill_iter *it, prof__spill_pool *p, const prof__spill *v) {
  memset(it, 0, sizeof *it);
  it->p = p;
  it->v = v;
}

/* Make the next block (or the memory part) current: 1, 0 at the end, -1. */
static int next_part(prof__spill_iter *it) {
  const prof__spill *v = it->v;
  if (it->blk > v->nblk) return 0;
  if (it->blk == v->nblk) {
    it->blk++;
    it->at = v->mem;
    it->n = v->nmem;
    it->i = 0;
    return 1;
  }
  const prof__spill_blk *b = &v->blk[it->blk++];
  size_t bytes = b->n * v->item;
  if (bytes > it->bufcap) {
    uint8_t *q = realloc(it->buf, bytes);
    if (!q) return -1;
    it->buf = q;
    it->bufcap = bytes;
  }
  if (!it->p->file || read_all(fileno(it->p->file), it->buf, bytes, b->off)) return -1;
  it->at = it->buf;
  it->n = b->n;
  it->i = 0;
  return 1;
}

const void *prof__spill_next(prof__spill_iter *it) {
  while (it->i == it->n) {
    if (it->err) return NULL;
    int rc = next_part(it);
    if (rc <= 0) {
      it->err = rc < 0;
      it->n = it->i = 0;
      return NULL;
    }
  }
  return it->at + it->v->item * it->i++;
}

int prof__spill_iter_end(prof__spill_iter *it) {
  free(it->buf);
  it->buf = NULL;
  return it->err ? -1 : 0;
}
