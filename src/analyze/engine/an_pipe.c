/* an_pipe.c — one analysis pass on two threads.
 *
 * A decode thread owns the reader while the pass runs: it reads, checks and
 * decompresses the chunks, decodes their records into batches and runs the
 * detached sections' record hooks (pass 1) on each batch; the calling
 * thread runs the core model and every other section on the batches, in
 * file order. Chunks are independent, so the two stages overlap fully.
 *
 * Memory stays flat in the trace's size: AN_PIPE_SLOTS batches of at most
 * AN_PIPE_EVENTS events (or AN_PIPE_RECS other records, whose strings and
 * chunk payloads are copied into the batch's arena) circulate through a
 * ring. The end of the trace, or the reader's error, travels as the last
 * batch: every record before it is analysed, then the pass returns the
 * status the serial pass would, and the reader's message is read after the
 * thread has been joined.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/engine/an_internal.h"

enum {
  AN_PIPE_SLOTS = 4,
  AN_PIPE_EVENTS = 8192,
  AN_PIPE_RECS = 256,
  AN_PIPE_ARENA_KEEP = 1 << 20 /* a larger arena (a big chunk's copy) is freed before reuse */
};

enum { B_EVENTS = 1, B_RECS = 2, B_END = 3 };

/* Where a record's copied bytes are in the arena (SIZE_MAX: none). */
typedef struct rec_off {
  size_t str, key, value, data;
} rec_off;

typedef struct batch {
  int kind;            /* B_* */
  int rc;              /* B_END: the reader's final status */
  uint64_t offset;     /* reader offset after the batch (progress) */
  prof__tev *ev;       /* B_EVENTS */
  size_t nev;
  prof__rec *recs;     /* B_RECS */
  rec_off *offs;
  size_t nrecs;
  uint8_t *arena;
  size_t alen, acap;
  int full;            /* filled and not yet consumed */
} batch;

typedef struct pipe {
  an_priv *p;
  prof__an_dispatch detached; /* run on the decode thread */
  pthread_mutex_t mu;
  pthread_cond_t cv;   /* a slot was filled or emptied */
  batch slot[AN_PIPE_SLOTS];
  prof__tev *stage;    /* the decode thread's own decoding buffer */
  int oom;             /* a batch could not be allocated: the decode thread stops */
} pipe_t;

static int batch_alloc(batch *b) {
  b->ev = malloc(AN_PIPE_EVENTS * sizeof *b->ev);
  b->recs = calloc(AN_PIPE_RECS, sizeof *b->recs);
  b->offs = malloc(AN_PIPE_RECS * sizeof *b->offs);
  return b->ev && b->recs && b->offs ? 0 : -1;
}

static void batch_free(batch *b) {
  free(b->ev);
  free(b->recs);
  free(b->offs);
  free(b->arena);
}

/* Copy n bytes and a NUL into the arena; the offset, or SIZE_MAX without
 * memory. */
static size_t arena_put(batch *b, const void *src, size_t n) {
  if (n > SIZE_MAX / 2 - b->alen) return SIZE_MAX;
  size_t need = b->alen + n + 1;
  if (need > b->acap) {
    size_t cap = b->acap ? b->acap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *q = realloc(b->arena, cap);
    if (!q) return SIZE_MAX;
    b->arena = q;
    b->acap = cap;
  }
  size_t at = b->alen;
  if (n) memcpy(b->arena + at, src, n);
  b->arena[at + n] = 0;
  b->alen = need;
  return at;
}

/* Copy the reader's record and the bytes its kind points to (the reader
 * leaves the other pointers as they were) into the batch. */
static int batch_add_rec(batch *b, const prof__rec *r) {
  prof__rec *d = &b->recs[b->nrecs];
  rec_off *o = &b->offs[b->nrecs];
  *d = *r;
  o->str = o->key = o->value = o->data = SIZE_MAX;
  switch (r->kind) {
  case PROF_REC_STRING:
  case PROF_REC_THREAD:
    if (r->str && (o->str = arena_put(b, r->str, r->len)) == SIZE_MAX) return -1;
    break;
  case PROF_REC_META:
  case PROF_REC_FOOTER:
    if (r->key && (o->key = arena_put(b, r->key, strlen(r->key))) == SIZE_MAX) return -1;
    if (r->value && (o->value = arena_put(b, r->value, strlen(r->value))) == SIZE_MAX) return -1;
    break;
  case PROF_REC_CHUNK:
    if (r->data && (o->data = arena_put(b, r->data, r->len)) == SIZE_MAX) return -1;
    break;
  default: break;
  }
  b->nrecs++;
  return 0;
}

/* The arena is complete: point the records into it. */
static void batch_fix(batch *b) {
  for (size_t i = 0; i < b->nrecs; i++) {
    prof__rec *d = &b->recs[i];
    const rec_off *o = &b->offs[i];
    d->str = o->str == SIZE_MAX ? NULL : (const char *)b->arena + o->str;
    d->key = o->key == SIZE_MAX ? NULL : (const char *)b->arena + o->key;
    d->value = o->value == SIZE_MAX ? NULL : (const char *)b->arena + o->value;
    d->data = o->data == SIZE_MAX ? NULL : b->arena + o->data;
  }
}

/* Fill b from the reader. Events are decoded into the decode thread's own
 * buffer `stage` and copied into the batch whole: decoding straight into
 * the batch stores field by field into cache lines the calling thread last
 * read, and those scattered stores took longer than the decoding itself.
 * Returns 0, or -1 without memory. */
static int batch_fill(prof__reader *r, batch *b, prof__tev *stage) {
  b->nev = b->nrecs = b->alen = 0;
  if (b->acap > AN_PIPE_ARENA_KEEP) {
    free(b->arena);
    b->arena = NULL;
    b->acap = 0;
  }
  int rc = prof__reader_events(r, stage, AN_PIPE_EVENTS, &b->nev);
  if (rc == 1) {
    b->kind = B_EVENTS;
    memcpy(b->ev, stage, b->nev * sizeof *stage);
  } else if (rc == 2) {
    /* Other records up to the next event, the end or a full batch. */
    b->kind = B_RECS;
    prof__rec rec;
    memset(&rec, 0, sizeof rec);
    do {
      rc = prof__reader_next(r, &rec);
      if (rc != 1) break; /* the error comes again with the next call */
      if (batch_add_rec(b, &rec)) return -1;
    } while (b->nrecs < AN_PIPE_RECS && b->alen < AN_PIPE_ARENA_KEEP && prof__reader_ready(r) == 1);
    batch_fix(b);
  } else {
    b->kind = B_END;
    b->rc = rc;
  }
  b->offset = prof__reader_offset(r);
  return 0;
}

static void run_hooks(prof__an *an, const prof__an_dispatch *d, const batch *b) {
  if (b->kind == B_EVENTS) {
    for (unsigned k = 0; k < d->nbatch; k++) d->batch_fn[k](an, d->batch_st[k], b->ev, b->nev);
    if (!d->per_event) return;
    prof__rec rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = PROF_REC_EVENT;
    for (size_t i = 0; i < b->nev; i++) {
      const prof__an_hooks *l = &d->by_type[b->ev[i].ev.type & 63];
      if (!l->n) continue;
      rec.tid = b->ev[i].tid;
      rec.ev = b->ev[i].ev;
      for (unsigned k = 0; k < l->n; k++) d->fn[l->idx[k]](an, d->st[l->idx[k]], &rec);
    }
  } else if (b->kind == B_RECS) {
    for (size_t i = 0; i < b->nrecs; i++) prof__an_dispatch_rec(an, d, &b->recs[i]);
  }
}

static void *decode_main(void *arg) {
  pipe_t *pp = arg;
  prof__tev *stage = pp->stage;
  prof__an *an = &pp->p->pub;
  int has_detached = 0;
  for (int t = 0; t < 64 && !has_detached; t++) has_detached = pp->detached.by_type[t].n > 0;
  has_detached |= pp->detached.other.n > 0;
  for (unsigned k = 0;; k = (k + 1) % AN_PIPE_SLOTS) {
    batch *b = &pp->slot[k];
    pthread_mutex_lock(&pp->mu);
    while (b->full) pthread_cond_wait(&pp->cv, &pp->mu);
    pthread_mutex_unlock(&pp->mu);
    int failed = batch_fill(an->reader, b, stage);
    if (failed) { /* the pass ends here; the analysis fails as out of memory */
      b->kind = B_END;
      b->rc = 0;
    }
    if (has_detached) run_hooks(an, &pp->detached, b);
    pthread_mutex_lock(&pp->mu);
    b->full = 1;
    if (failed) pp->oom = 1;
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->mu);
    if (b->kind == B_END) return NULL;
  }
}

/* The core model and the main sections over one batch. */
static void consume(an_priv *p, int pass, prof__an_dispatch *d, const batch *b) {
  prof__an *an = &p->pub;
  if (b->kind == B_EVENTS && pass == 1) {
    prof__an_model_events(p, b->ev, b->nev, d);
  } else if (b->kind == B_EVENTS) {
    prof__rec rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = PROF_REC_EVENT;
    for (size_t i = 0; i < b->nev; i++) {
      rec.tid = b->ev[i].tid;
      rec.ev = b->ev[i].ev;
      const prof__an_hooks *l = &d->by_type[rec.ev.type & 63];
      for (unsigned k = 0; k < l->n; k++) d->fn[l->idx[k]](an, d->st[l->idx[k]], &rec);
    }
  } else if (b->kind == B_RECS) {
    for (size_t i = 0; i < b->nrecs; i++) {
      if (pass == 1) prof__an_model_record(p, &b->recs[i]);
      prof__an_dispatch_rec(an, d, &b->recs[i]);
      prof__an_dispatch_check(p, pass, AN_HOOKS_MAIN, d); /* events come in their own batches */
    }
  }
}

int prof__an_pass_piped(an_priv *p, int pass) {
  prof__an *an = &p->pub;
  pipe_t *pp = calloc(1, sizeof *pp);
  if (!pp) return 1;
  pp->p = p;
  prof__an_dispatch d;
  prof__an_dispatch_build(an, pass, AN_HOOKS_MAIN, &d);
  prof__an_dispatch_build(an, pass, AN_HOOKS_DETACHED, &pp->detached);
  int ok = 1;
  for (int i = 0; i < AN_PIPE_SLOTS; i++) ok &= batch_alloc(&pp->slot[i]) == 0;
  pp->stage = malloc(AN_PIPE_EVENTS * sizeof *pp->stage);
  ok &= pp->stage != NULL;
  int mu = ok && pthread_mutex_init(&pp->mu, NULL) == 0;
  int cv = mu && pthread_cond_init(&pp->cv, NULL) == 0;
  /* The decode thread takes no signals (a profiled program's handlers, or
   * its sampler's timer, stay with its own threads). */
  pthread_t th;
  sigset_t all, old;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
  int started = cv && pthread_create(&th, NULL, decode_main, pp) == 0;
  if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
  int rc = 1; /* not started: the caller reads serially */
  if (started) {
    prof__an_progress pr;
    prof__an_progress_start(an, pass, &pr);
    uint64_t n = 0;
    for (unsigned k = 0;; k = (k + 1) % AN_PIPE_SLOTS) {
      batch *b = &pp->slot[k];
      pthread_mutex_lock(&pp->mu);
      while (!b->full) pthread_cond_wait(&pp->cv, &pp->mu);
      pthread_mutex_unlock(&pp->mu);
      if (b->kind == B_END) {
        rc = b->rc;
        break;
      }
      consume(p, pass, &d, b);
      n += b->kind == B_EVENTS ? b->nev : b->nrecs;
      if (pr.on && n >= 0x10000) {
        n = 0;
        prof__an_progress_show(an, &pr, b->offset);
      }
      pthread_mutex_lock(&pp->mu);
      b->full = 0;
      pthread_cond_broadcast(&pp->cv);
      pthread_mutex_unlock(&pp->mu);
    }
    pthread_join(th, NULL);
    prof__an_progress_done(&pr);
    if (pp->oom) p->oom = 1;
  }
  if (cv) pthread_cond_destroy(&pp->cv);
  if (mu) pthread_mutex_destroy(&pp->mu);
  for (int i = 0; i < AN_PIPE_SLOTS; i++) batch_free(&pp->slot[i]);
  free(pp->stage);
  free(pp);
  return rc;
}
