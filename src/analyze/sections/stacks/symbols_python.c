/* symbols_python.c — Python frames of recorded stacks.
 *
 * The CPU sampler records a Python frame as a tagged address (code object
 * and instruction index, symbols.h); the writer thread resolves each one
 * it meets to the code's file, qualified name and the line of that
 * instruction, and writes them as PROF_CHUNK_PYFRAMES (decoded by the
 * trace's codec, trace/rec_stacks.h; docs/trace-format-stacks.md). This
 * file keeps that table, sorted by address, and fills frames from it. A
 * tagged address the table lacks (the code object was gone before the
 * writer saw it) is "<python>".
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/sec_stacks.h"
#include "trace/rec_stacks.h"

void prof__pyframes_decode(prof__stacks_st *s, const uint8_t *p, size_t len) {
  prof__rec_dec d;
  prof__rec_pyframe f;
  int rc;
  prof__rec_pyframes_dec_init(&d, p, len);
  while ((rc = prof__rec_pyframes_next(&d, &f)) == 1) {
    if (s->npy == s->py_cap) {
      size_t cap = s->py_cap ? s->py_cap * 2 : 256;
      prof__pycode *v = realloc(s->py, cap * sizeof *v);
      if (!v) return;
      s->py = v;
      s->py_cap = cap;
    }
    prof__pycode *x = &s->py[s->npy];
    x->key = f.key;
    x->file = strndup(f.file, f.file_len);
    x->name = strndup(f.name, f.name_len);
    x->line = f.line > 0 && f.line < (1 << 30) ? (int)f.line : 0;
    if (!x->file || !x->name) {
      free(x->file);
      free(x->name);
      return;
    }
    s->npy++;
    s->py_sorted = 0;
  }
  if (rc < 0) s->bad_chunks++;
}

static int cmp_py(const void *a, const void *b) {
  const prof__pycode *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

void prof__symbols_python(prof__stacks_st *s, uintptr_t pc, prof__frame *f) {
  f->python = 1;
  if (s && !s->py_sorted && s->npy) {
    qsort(s->py, s->npy, sizeof *s->py, cmp_py); /* the first entry of a key wins */
    s->py_sorted = 1;
  }
  const prof__pycode *x = NULL;
  size_t lo = 0, hi = s ? s->npy : 0;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->py[mid].key < (uint64_t)pc) lo = mid + 1;
    else hi = mid;
  }
  if (s && lo < s->npy && s->py[lo].key == (uint64_t)pc) x = &s->py[lo];
  f->func = strdup(x ? x->name : "<python>");
  f->file = x ? strdup(x->file) : NULL;
  f->line = x ? x->line : 0;
  const char *base = x ? strrchr(x->file, '/') : NULL;
  f->module = strdup(base ? base + 1 : x ? x->file : "python");
}

void prof__symbols_extra_free(prof__stacks_st *s) {
  prof__perfmap_free(s->perfmap);
  s->perfmap = NULL;
  for (size_t i = 0; i < s->npy; i++) {
    free(s->py[i].file);
    free(s->py[i].name);
  }
  free(s->py);
  s->py = NULL;
  s->npy = 0;
}
