/* sec_stacks.h — state of the "stacks" section, shared by sec_stacks.c
 * (decoding) and symbols.c (symbolization). */
#ifndef PROF_SEC_STACKS_H
#define PROF_SEC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/sections/stacks/symbols.h"

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
} prof__stacks_st;

void prof__symbols_free(prof__stacks_st *s);

#endif
