/* spill.h — append-only arrays of fixed-size items whose older items move
 * to an unlinked temporary file once a memory budget is spent, so that a
 * section keeping every reading of a long trace stays flat in memory.
 *
 * Arrays share a pool: one budget and one file. An array grows in memory
 * until the pool has allocated its budget; from then on a full array of at
 * least PROF_SPILL_MIN_BLOCK items writes its items to the file as one
 * block and starts again in its own buffer. Items are read back in the
 * order they were appended. Without a temporary file (none can be created,
 * or a write fails) arrays keep growing in memory, as before: the pool
 * counts that and nothing is lost.
 *
 *   prof__spill_pool pool;
 *   prof__spill_pool_init(&pool, 4 << 20);
 *   prof__spill v = PROF_SPILL_INIT(sizeof(my_item));
 *   prof__spill_push(&pool, &v, &item);          // 0, or -1 without memory
 *   prof__spill_iter it;
 *   prof__spill_iter_begin(&it, &pool, &v);
 *   for (const my_item *x; (x = prof__spill_next(&it));) ...
 *   prof__spill_iter_end(&it);                   // -1: a block could not be read
 *   prof__spill_free(&pool, &v);
 *   prof__spill_pool_free(&pool);
 */
#ifndef MLPROF_ANALYZE_SPILL_H
#define MLPROF_ANALYZE_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Smallest block written to the file (items): fewer, larger blocks keep
 * the block list itself small. */
#define PROF_SPILL_MIN_BLOCK 4096

typedef struct prof__spill_pool {
  size_t budget;      /* bytes of array buffers before items spill */
  size_t mem;         /* bytes of array buffers allocated now */
  FILE *file;         /* the temporary file, once needed */
  uint64_t end;       /* bytes written to it */
  int no_file;        /* it could not be created or written: keep in memory */
  uint64_t spilled;   /* items written to the file */
} prof__spill_pool;

typedef struct prof__spill_blk {
  uint64_t off;
  size_t n;
} prof__spill_blk;

typedef struct prof__spill {
  size_t item;               /* bytes per item */
  size_t n;                  /* items appended */
  uint8_t *mem;              /* the newest items */
  size_t nmem, cap;
  prof__spill_blk *blk;      /* the older items, in the file, in order */
  size_t nblk, blkcap;
} prof__spill;

#define PROF_SPILL_INIT(item_size) ((prof__spill){.item = (item_size)})

void prof__spill_pool_init(prof__spill_pool *p, size_t budget);
void prof__spill_pool_free(prof__spill_pool *p);

/* Append one item (v->item bytes). 0, or -1 when memory ran out (the item
 * is not added). */
int prof__spill_push(prof__spill_pool *p, prof__spill *v, const void *item);
void prof__spill_free(prof__spill_pool *p, prof__spill *v);

typedef struct prof__spill_iter {
  prof__spill_pool *p;
  const prof__spill *v;
  size_t blk;          /* next block to read; v->nblk: the memory part */
  const uint8_t *at;   /* the items being returned */
  size_t n, i;
  uint8_t *buf;        /* a block read from the file */
  size_t bufcap;
  int err;             /* a block could not be read: iteration stopped */
} prof__spill_iter;

void prof__spill_iter_begin(prof__spill_iter *it, prof__spill_pool *p, const prof__spill *v);
/* The next item in append order, or NULL at the end (or after an error). */
const void *prof__spill_next(prof__spill_iter *it);
/* 0, or -1 if the iteration stopped early because a block could not be read. */
int prof__spill_iter_end(prof__spill_iter *it);

#endif
