/* sec_stacks.c — the "stacks" section: decodes PROF_CHUNK_STACKS and
 * PROF_CHUNK_MODULES (docs/trace-format-stacks.md) and answers the
 * stack/frame queries of symbols.h for the other sections. Symbolization
 * itself is in symbols.c. */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/util/array.h"

static void decode_stacks(prof__stacks_st *s, const uint8_t *p, size_t len) {
  prof__cur c = {p, p + len, 0};
  uint64_t n = prof__cur_varint(&c);
  for (uint64_t i = 0; i < n && !c.bad; i++) {
    uint64_t id = prof__cur_varint(&c), depth = prof__cur_varint(&c);
    if (c.bad || id == 0 || id > (1u << 24) || depth == 0 || depth > 256) {
      s->bad_chunks++;
      return;
    }
    if (prof__arr_grow((void **)&s->pcs, &s->pcs_cap, s->npcs + depth, sizeof *s->pcs) ||
        prof__arr_grow((void **)&s->stacks, &s->stacks_cap, id + 1, sizeof *s->stacks))
      return;
    uintptr_t prev = 0;
    size_t off = s->npcs;
    for (uint64_t k = 0; k < depth; k++) s->pcs[off + k] = prev = prev + (uintptr_t)prof__cur_svarint(&c);
    if (c.bad) break;
    s->npcs += depth;
    s->stacks[id].off = off;
    s->stacks[id].depth = (uint32_t)depth;
    if (id >= s->nstacks) s->nstacks = id + 1;
    s->count++;
  }
  if (c.bad) s->bad_chunks++;
}

static void decode_modules(prof__stacks_st *s, const uint8_t *p, size_t len) {
  prof__cur c = {p, p + len, 0};
  uint64_t n = prof__cur_varint(&c);
  for (uint64_t i = 0; i < n && !c.bad; i++) {
    size_t plen, blen;
    const char *path = prof__cur_str(&c, &plen);
    uint64_t bias = prof__cur_varint(&c), start = prof__cur_varint(&c), size = prof__cur_varint(&c);
    const char *bid = prof__cur_str(&c, &blen);
    if (c.bad || !path) break;
    if (prof__arr_grow((void **)&s->mods, &s->mods_cap, s->nmods + 1, sizeof *s->mods)) return;
    prof__an_module *m = &s->mods[s->nmods];
    m->path = strndup(path, plen);
    m->build_id = blen ? malloc(blen) : NULL;
    if (m->build_id) memcpy(m->build_id, bid, blen);
    m->build_id_len = m->build_id ? blen : 0;
    m->bias = bias;
    m->start = start;
    m->size = size;
    if (m->path) s->nmods++;
  }
  if (c.bad) s->bad_chunks++;
}

static void st_record(prof__an *an, void *st, const prof__rec *rec) {
  (void)an;
  if (rec->kind != PROF_REC_CHUNK) return;
  if (rec->chunk_type == PROF_CHUNK_STACKS) decode_stacks(st, rec->data, rec->len);
  if (rec->chunk_type == PROF_CHUNK_MODULES) decode_modules(st, rec->data, rec->len);
  if (rec->chunk_type == PROF_CHUNK_PYFRAMES) prof__pyframes_decode(st, rec->data, rec->len);
}

int prof__an_stack(prof__an *an, uint32_t id, const uintptr_t **pcs) {
  prof__stacks_st *s = prof__an_section(an, "stacks");
  if (!s || id == 0 || id >= s->nstacks || s->stacks[id].depth == 0) return 0;
  if (pcs) *pcs = s->pcs + s->stacks[id].off;
  return (int)s->stacks[id].depth;
}

static void st_json(prof__an *an, void *st, prof__json *j) {
  (void)an;
  prof__stacks_st *s = st;
  if (!s->count && !s->nmods) return;
  prof__json_key(j, "stacks");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "stacks", s->count);
  prof__json_kuint(j, "modules", s->nmods);
  prof__json_kuint(j, "python_frames", s->npy);
  prof__json_kuint(j, "bad_chunks", s->bad_chunks);
  prof__json_obj_end(j);
}

static void st_destroy(prof__an *an, void *st) {
  (void)an;
  prof__stacks_st *s = st;
  prof__symbols_free(s);
  for (size_t i = 0; i < s->nmods; i++) {
    free(s->mods[i].path);
    free(s->mods[i].build_id);
  }
  free(s->mods);
  free(s->stacks);
  free(s->pcs);
}

const prof__section prof__sec_stacks = {
    .name = "stacks",
    .state_size = sizeof(prof__stacks_st),
    .record = st_record,
    .json = st_json,
    .destroy = st_destroy,
    .event_mask = PROF_EVMASK_NONE,
};
