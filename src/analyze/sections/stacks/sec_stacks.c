/* sec_stacks.c — the "stacks" section: keeps the stacks and modules of
 * PROF_CHUNK_STACKS and PROF_CHUNK_MODULES (decoded by the trace's codec,
 * trace/rec_stacks.h; docs/trace-format-stacks.md) and answers the
 * stack/frame queries of symbols.h for the other sections. Symbolization
 * itself is in symbols.c. Its report part says which code has no symbols
 * and how to get them (symbols_missing.c). */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/util/array.h"
#include "trace/rec_stacks.h"

static void decode_stacks(prof__stacks_st *s, const uint8_t *p, size_t len) {
  prof__rec_dec d;
  uintptr_t pcs[PROF_REC_STACKS_MAX_DEPTH];
  uint32_t id;
  int depth, rc;
  prof__rec_stacks_dec_init(&d, p, len);
  while ((rc = prof__rec_stacks_next(&d, &id, pcs, &depth)) == 1) {
    if (prof__arr_grow((void **)&s->pcs, &s->pcs_cap, s->npcs + (size_t)depth, sizeof *s->pcs) ||
        prof__arr_grow((void **)&s->stacks, &s->stacks_cap, (size_t)id + 1, sizeof *s->stacks))
      return;
    memcpy(s->pcs + s->npcs, pcs, (size_t)depth * sizeof *pcs);
    s->stacks[id].off = s->npcs;
    s->stacks[id].depth = (uint32_t)depth;
    s->npcs += (size_t)depth;
    if (id >= s->nstacks) s->nstacks = (size_t)id + 1;
    s->count++;
  }
  if (rc < 0) s->bad_chunks++;
}

static void decode_modules(prof__stacks_st *s, const uint8_t *p, size_t len) {
  prof__rec_dec d;
  prof__rec_module rm;
  int rc;
  prof__rec_modules_dec_init(&d, p, len);
  while ((rc = prof__rec_modules_next(&d, &rm)) == 1) {
    if (prof__arr_grow((void **)&s->mods, &s->mods_cap, s->nmods + 1, sizeof *s->mods)) return;
    prof__an_module *m = &s->mods[s->nmods];
    size_t blen = rm.build_id_len;
    m->path = strndup(rm.path, rm.path_len);
    m->build_id = blen ? malloc(blen) : NULL;
    if (m->build_id) memcpy(m->build_id, rm.build_id, blen);
    m->build_id_len = m->build_id ? blen : 0;
    m->bias = rm.bias;
    m->start = rm.start;
    m->size = rm.size;
    if (m->path) s->nmods++;
  }
  if (rc < 0) s->bad_chunks++;
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
  prof__stacks_st *s = st;
  if (!s->count && !s->nmods) return;
  prof__json_key(j, "stacks");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "stacks", s->count);
  prof__json_kuint(j, "modules", s->nmods);
  prof__json_kuint(j, "python_frames", s->npy);
  prof__json_kuint(j, "bad_chunks", s->bad_chunks);
  prof__symbols_missing_json(an, s, j);
  prof__json_obj_end(j);
}

static void st_text(prof__an *an, void *st, FILE *out) { prof__symbols_missing_text(an, st, out); }
static void st_html(prof__an *an, void *st, FILE *out) { prof__symbols_missing_html(an, st, out); }

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
    .text = st_text,
    .json = st_json,
    .html = st_html,
    .destroy = st_destroy,
    .event_mask = PROF_EVMASK_NONE,
};
