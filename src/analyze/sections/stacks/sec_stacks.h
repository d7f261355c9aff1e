/* sec_stacks.h — state of the "stacks" section, shared by sec_stacks.c
 * (decoding) and symbols.c (symbolization). */
#ifndef PROF_SEC_STACKS_H
#define PROF_SEC_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/json.h"

typedef struct prof__an_module {
  char *path;
  uint8_t *build_id;
  size_t build_id_len;
  uint64_t bias, start, size;
  struct prof__elfsyms *syms; /* loaded on first use (symbols.c) */
  int load_state;             /* 0 not tried, 1 loaded, -1 unusable */
} prof__an_module;

typedef struct prof__stacks_st {
  struct { size_t off; uint32_t depth; } *stacks; /* by id */
  size_t nstacks, stacks_cap, count;
  uintptr_t *pcs;
  size_t npcs, pcs_cap;
  prof__an_module *mods;
  size_t nmods, mods_cap;
  uint64_t bad_chunks;
  struct prof__symcache *cache; /* symbols.c */
  struct prof__perfmap *perfmap; /* symbols_perfmap.c */
  int perfmap_tried;
  struct prof__pycode *py;      /* Python frames by tagged address (PROF_CHUNK_PYFRAMES) */
  size_t npy, py_cap;
  int py_sorted;
} prof__stacks_st;

typedef struct prof__pycode {
  uint64_t key; /* the tagged address recorded in stacks */
  char *file, *name;
  int line;
} prof__pycode;

void prof__symbols_free(prof__stacks_st *s);
/* Frees what symbols_perfmap.c and symbols_python.c hold. */
void prof__symbols_extra_free(prof__stacks_st *s);
/* Fill f from a JIT's perf map; 0 when the address is named there. */
int prof__symbols_perfmap(prof__an *an, prof__stacks_st *s, uintptr_t pc, prof__frame *f);
void prof__perfmap_free(struct prof__perfmap *pm);
/* Fill f for a tagged Python frame (symbols_python.c). */
void prof__symbols_python(prof__stacks_st *s, uintptr_t pc, prof__frame *f);
/* The modules whose unnamed code the samples pass through, and how to get
 * their symbols (symbols_missing.c): text, JSON ("unsymbolized") and HTML. */
void prof__symbols_missing_text(prof__an *an, prof__stacks_st *s, FILE *out);
void prof__symbols_missing_json(prof__an *an, prof__stacks_st *s, prof__json *j);
void prof__symbols_missing_html(prof__an *an, prof__stacks_st *s, FILE *out);
/* Decode one PROF_CHUNK_PYFRAMES payload into s->py. */
void prof__pyframes_decode(prof__stacks_st *s, const uint8_t *p, size_t len);

#endif
