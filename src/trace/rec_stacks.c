/* rec_stacks.c — codec of the PROF_CHUNK_STACKS, PROF_CHUNK_MODULES and
 * PROF_CHUNK_PYFRAMES bodies, shared by the stack and CPU producers (which
 * encode) and the reader's stacks section (which decodes). Layout:
 * docs/trace-format-stacks.md.
 */
#include "mlprof.h"
#include "rec_stacks.h"

int prof__rec_list_end(const prof__rec_list *l, prof__buf *out) {
  prof__buf_varint(out, l->n);
  prof__buf_put(out, l->b.p, l->b.len);
  return l->b.oom || out->oom ? PROF_ENOMEM : 0;
}

void prof__rec_list_free(prof__rec_list *l) {
  prof__buf_free(&l->b);
  l->n = 0;
}

int prof__rec_list_write(prof__rec_list *l, prof__tw *w, int type) {
  if (!l->n && !l->b.oom) return 0;
  prof__buf out = {0};
  int rc = prof__rec_list_end(l, &out);
  if (!rc) rc = prof__tw_chunk(w, type, out.p, out.len);
  prof__buf_free(&out);
  prof__rec_list_free(l);
  return rc;
}

void prof__rec_stacks_put(prof__rec_list *l, uint32_t id, const uintptr_t *pcs, int depth) {
  prof__buf_varint(&l->b, id);
  prof__buf_varint(&l->b, (uint64_t)depth);
  uintptr_t prev = 0;
  for (int i = 0; i < depth; i++) {
    prof__buf_svarint(&l->b, (int64_t)(pcs[i] - prev));
    prev = pcs[i];
  }
  l->n++;
}

void prof__rec_modules_put(prof__rec_list *l, const prof__rec_module *m) {
  prof__buf_str(&l->b, m->path, m->path_len);
  prof__buf_varint(&l->b, m->bias);
  prof__buf_varint(&l->b, m->start);
  prof__buf_varint(&l->b, m->size);
  prof__buf_str(&l->b, (const char *)m->build_id, m->build_id ? m->build_id_len : 0);
  l->n++;
}

void prof__rec_pyframes_put(prof__rec_list *l, const prof__rec_pyframe *f) {
  prof__buf_varint(&l->b, f->key);
  prof__buf_str(&l->b, f->file, f->file_len);
  prof__buf_str(&l->b, f->name, f->name_len);
  prof__buf_svarint(&l->b, f->line);
  l->n++;
}

/* The three bodies open the same way: a varint count. */
static void dec_init(prof__rec_dec *d, const void *data, size_t len) {
  const uint8_t *p = data;
  d->cur.p = p;
  d->cur.end = p ? p + len : p;
  d->cur.bad = 0;
  d->left = prof__cur_varint(&d->cur);
  d->bad = d->cur.bad;
}

void prof__rec_stacks_dec_init(prof__rec_dec *d, const void *data, size_t len) { dec_init(d, data, len); }
void prof__rec_modules_dec_init(prof__rec_dec *d, const void *data, size_t len) { dec_init(d, data, len); }
void prof__rec_pyframes_dec_init(prof__rec_dec *d, const void *data, size_t len) { dec_init(d, data, len); }

/* Before an entry: 1 when there is one to read, 0 at the end, or the error. */
static int dec_more(prof__rec_dec *d) {
  if (d->bad) return PROF_EFORMAT;
  return d->left > 0;
}

/* After an entry: 1, or PROF_EFORMAT when it ran past the end. */
static int dec_done(prof__rec_dec *d) {
  if (d->cur.bad) {
    d->bad = 1;
    return PROF_EFORMAT;
  }
  d->left--;
  return 1;
}

int prof__rec_stacks_next(prof__rec_dec *d, uint32_t *id, uintptr_t *pcs, int *depth) {
  int rc = dec_more(d);
  if (rc <= 0) return rc;
  uint64_t sid = prof__cur_varint(&d->cur), n = prof__cur_varint(&d->cur);
  if (d->cur.bad || sid == 0 || sid > PROF_REC_STACKS_MAX_ID || n == 0 || n > PROF_REC_STACKS_MAX_DEPTH) {
    d->bad = 1;
    return PROF_EFORMAT;
  }
  uintptr_t prev = 0;
  for (uint64_t k = 0; k < n; k++) pcs[k] = prev = prev + (uintptr_t)prof__cur_svarint(&d->cur);
  *id = (uint32_t)sid;
  *depth = (int)n;
  return dec_done(d);
}

int prof__rec_modules_next(prof__rec_dec *d, prof__rec_module *m) {
  int rc = dec_more(d);
  if (rc <= 0) return rc;
  m->path = prof__cur_str(&d->cur, &m->path_len);
  m->bias = prof__cur_varint(&d->cur);
  m->start = prof__cur_varint(&d->cur);
  m->size = prof__cur_varint(&d->cur);
  m->build_id = (const uint8_t *)prof__cur_str(&d->cur, &m->build_id_len);
  return dec_done(d);
}

int prof__rec_pyframes_next(prof__rec_dec *d, prof__rec_pyframe *f) {
  int rc = dec_more(d);
  if (rc <= 0) return rc;
  f->key = prof__cur_varint(&d->cur);
  f->file = prof__cur_str(&d->cur, &f->file_len);
  f->name = prof__cur_str(&d->cur, &f->name_len);
  f->line = prof__cur_svarint(&d->cur);
  return dec_done(d);
}
