/* writer_bound.c — a trace kept within a size (MLPROF_MAX_MB).
 *
 * The writer remembers where each chunk it wrote lies. When the next chunk
 * would take the file past the bound, it writes a new file under a
 * temporary name — the header, every chunk that is not detail (names,
 * threads, META, stacks, modules, Python frames: later chunks refer to
 * them), the step summaries of the whole run, then the most recent detail
 * chunks (EVENTS, GPU, HIST, RES) that fit in half the bound — and renames
 * it over the trace. A rename is atomic, so the trace's name holds a
 * complete trace at every moment, also after a SIGKILL in the middle of a
 * rewrite (which leaves only the temporary file behind). A rewrite copies
 * at most half the bound and happens at most once per half bound written.
 *
 * Step summaries (rec_stepsum.h) are made from the events as they are
 * queued: a completed step is held until its thread's CPU clock reading
 * after STEP_END and the process's memory readings up to its end are in
 * (the next flush, normally); each flush appends a STEPSUM chunk of the
 * steps settled since the last one, and a rewrite replaces all of them by the summaries of the
 * whole run, kept in memory. When those would take more than a quarter of
 * the bound, the older ones are rounded (precision levels 1..3), which
 * compresses them to a byte or two a step.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "mlprof.h"
#include "format.h"
#include "rec_stepsum.h"
#include "trace.h"
#include "writer_int.h"

#define SEG_MAX (4u << 20) /* summaries per in-memory segment: one chunk each, well below 8 MiB */

typedef struct tw_ix {
  uint64_t off;
  uint32_t len;
  uint8_t type;
} tw_ix;

struct tw_bound {
  char *path, *tmp;
  uint64_t max;
  uint8_t *hdr;
  size_t hdr_len;
  tw_ix *ix;
  size_t nix, ixcap;
  prof__ss_state ss;
  prof__ss_enc *seg; /* summaries of the whole run, oldest first */
  size_t nseg, segcap;
  prof__ss_enc pend; /* summaries not yet in a STEPSUM chunk of the file */
  uint64_t dropped_bytes, dropped_chunks, compactions;
  int off;           /* bounding stopped (said once) */
  int finishing;     /* the last flush: held summaries go out */
  int oom;
};

static int is_detail(int type) {
  return type == PROF_CHUNK_EVENTS || type == PROF_CHUNK_GPU || type == PROF_CHUNK_HIST || type == PROF_CHUNK_RES;
}

static void give_up(tw_bound *B, const char *why) {
  if (B->off) return;
  B->off = 1;
  fprintf(stderr, "mlprof: MLPROF_MAX_MB: %s; the trace '%s' is no longer bounded\n", why, B->path);
}

int prof__tw_bound(prof__tw *w, const char *path, uint64_t max_bytes) {
  if (!w || !path || w->bound || w->bytes == 0 || max_bytes < 4096) return PROF_EINVAL;
  tw_bound *B = calloc(1, sizeof *B);
  size_t pl = strlen(path);
  if (B) {
    B->path = strdup(path);
    B->tmp = malloc(pl + 16);
    B->hdr = malloc((size_t)w->bytes);
  }
  if (!B || !B->path || !B->tmp || !B->hdr) goto fail;
  snprintf(B->tmp, pl + 16, "%s.rewrite", path);
  B->hdr_len = (size_t)w->bytes;
  if (pread(w->fd, B->hdr, B->hdr_len, 0) != (ssize_t)B->hdr_len) {
    free(B->path);
    free(B->tmp);
    free(B->hdr);
    free(B);
    return PROF_EINVAL; /* not readable back: a file not made by prof__tw_create */
  }
  B->max = max_bytes;
  w->bound = B;
  return 0;
fail:
  if (B) {
    free(B->path);
    free(B->tmp);
    free(B->hdr);
  }
  free(B);
  return PROF_ENOMEM;
}

void prof__tw_bound_stats(const prof__tw *w, uint64_t *compactions, uint64_t *dropped_bytes, uint64_t *steps) {
  const tw_bound *B = w ? w->bound : NULL;
  if (compactions) *compactions = B ? B->compactions : 0;
  if (dropped_bytes) *dropped_bytes = B ? B->dropped_bytes : 0;
  if (steps) *steps = B ? B->ss.steps : 0;
}

void prof__twb_free(prof__tw *w) {
  tw_bound *B = w->bound;
  if (!B) return;
  prof__ss_free(&B->ss);
  for (size_t i = 0; i < B->nseg; i++) prof__ss_enc_free(&B->seg[i]);
  free(B->seg);
  prof__ss_enc_free(&B->pend);
  free(B->ix);
  free(B->hdr);
  free(B->path);
  free(B->tmp);
  free(B);
  w->bound = NULL;
}

/* ---- summaries ------------------------------------------------------------- */

/* The segment new summaries go to: the last one when it is exact and has
 * room, else a new one. */
static prof__ss_enc *seg_tail(tw_bound *B) {
  if (B->nseg && B->seg[B->nseg - 1].level == 0 && B->seg[B->nseg - 1].b.len < SEG_MAX) return &B->seg[B->nseg - 1];
  if (B->nseg == B->segcap) {
    size_t cap = B->segcap ? B->segcap * 2 : 4;
    prof__ss_enc *s = realloc(B->seg, cap * sizeof *s);
    if (!s) return NULL;
    B->seg = s;
    B->segcap = cap;
  }
  prof__ss_enc *e = &B->seg[B->nseg++];
  memset(e, 0, sizeof *e);
  prof__ss_enc_reset(e, 0);
  return e;
}

static void on_step(void *arg, const prof__ss_rec *r) {
  tw_bound *B = arg;
  prof__ss_enc *e = seg_tail(B);
  if (!e) {
    B->oom = 1;
    return;
  }
  prof__ss_enc_put(e, r);
  prof__ss_enc_put(&B->pend, r);
  if (e->b.oom || B->pend.b.oom) B->oom = 1;
}

void prof__twb_events(prof__tw *w, uint32_t tid, const prof__event *ev, size_t n) {
  prof__ss_observe(&w->bound->ss, tid, ev, n, on_step, w->bound);
}

void prof__twb_string(prof__tw *w, uint32_t id, const char *s, size_t len) { prof__ss_name(&w->bound->ss, id, s, len); }

void prof__twb_finishing(prof__tw *w) { w->bound->finishing = 1; }

void prof__tw_bound_cycle(prof__tw *w) {
  if (w && w->bound) prof__ss_cycle(&w->bound->ss);
}

void prof__tw_bound_name(prof__tw *w, uint32_t id, const char *name) {
  if (w && w->bound && id && name) prof__ss_name(&w->bound->ss, id, name, strlen(name));
}

static prof__ss_hdr totals(const tw_bound *B) {
  prof__ss_hdr h = {0};
  h.max_bytes = B->max;
  h.dropped_bytes = B->dropped_bytes;
  h.dropped_chunks = B->dropped_chunks;
  h.compactions = B->compactions;
  return h;
}

/* One STEPSUM chunk framed into out. */
static int frame_summaries(prof__tw *w, const prof__ss_enc *e, prof__buf *out) {
  prof__buf pl = {0};
  prof__ss_hdr h = totals(w->bound);
  prof__ss_payload(&pl, e, &h);
  int rc = pl.oom ? PROF_ENOMEM : prof__tw_frame(w, PROF_CHUNK_STEPSUM, pl.p, pl.len, out);
  prof__buf_free(&pl);
  return rc;
}

int prof__twb_flush(prof__tw *w) {
  tw_bound *B = w->bound;
  /* Steps whose CPU and memory readings are in (the writer's hooks ran
   * before this flush); on the last flush, every held step. */
  prof__ss_settle(&B->ss, B->finishing, on_step, B);
  if (B->ss.oom) {
    B->oom = 1;
    B->ss.oom = 0;
  }
  if (B->oom) {
    give_up(B, "out of memory for the step summaries");
    B->oom = 0;
  }
  if (!B->pend.n) return 0;
  prof__buf pl = {0};
  prof__ss_hdr h = totals(B);
  prof__ss_payload(&pl, &B->pend, &h);
  prof__ss_enc_reset(&B->pend, 0);
  int rc = pl.oom ? PROF_ENOMEM : prof__tw_chunk(w, PROF_CHUNK_STEPSUM, pl.p, pl.len);
  prof__buf_free(&pl);
  return rc;
}

/* Round every segment to the next precision level (one segment per 4 MiB
 * of records). Returns 0 when all are at the coarsest level already. */
static int coarsen(tw_bound *B) {
  unsigned lo = PROF_SS_LEVELS;
  for (size_t i = 0; i < B->nseg; i++)
    if (B->seg[i].level < lo) lo = B->seg[i].level;
  if (lo >= PROF_SS_LEVELS - 1 || !B->nseg) return 0;
  prof__ss_enc *out = calloc(B->nseg, sizeof *out); /* coarser: never more segments than before */
  if (!out) return 0;
  size_t nout = 0;
  int bad = 0;
  for (size_t i = 0; i < B->nseg && !bad; i++) {
    prof__buf pl = {0};
    prof__ss_hdr h = {0};
    prof__ss_payload(&pl, &B->seg[i], &h);
    prof__ss_iter it;
    prof__ss_rec r;
    bad = pl.oom || prof__ss_open(&it, pl.p, pl.len) != 0;
    int k = 0;
    while (!bad && (k = prof__ss_next(&it, &r)) == 1) {
      if (!nout || out[nout - 1].b.len >= SEG_MAX) prof__ss_enc_reset(&out[nout++], lo + 1);
      prof__ss_enc_put(&out[nout - 1], &r);
      bad = out[nout - 1].b.oom;
    }
    bad = bad || k < 0;
    prof__buf_free(&pl);
  }
  if (bad) {
    for (size_t i = 0; i < nout; i++) prof__ss_enc_free(&out[i]);
    free(out);
    return 0;
  }
  for (size_t i = 0; i < B->nseg; i++) prof__ss_enc_free(&B->seg[i]);
  free(B->seg);
  B->seg = out;
  B->nseg = nout;
  B->segcap = B->nseg;
  return 1;
}

/* All summaries framed into out, rounded until they take at most a quarter
 * of the bound (or the coarsest level is reached). */
static int frame_all(prof__tw *w, prof__buf *out) {
  tw_bound *B = w->bound;
  for (;;) {
    out->len = 0;
    int rc = 0;
    for (size_t i = 0; i < B->nseg && !rc; i++) rc = frame_summaries(w, &B->seg[i], out);
    if (rc || out->len <= B->max / 4 || !coarsen(B)) return rc;
  }
}

/* ---- the rewrite ----------------------------------------------------------- */

static int wr(int fd, const void *p, size_t n) {
  const uint8_t *q = p;
  while (n) {
    ssize_t r = write(fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    q += r;
    n -= (size_t)r;
  }
  return 0;
}

static int ix_add(tw_ix **ix, size_t *n, size_t *cap, uint64_t off, size_t len, int type) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    tw_ix *x = realloc(*ix, c * sizeof *x);
    if (!x) return -1;
    *ix = x;
    *cap = c;
  }
  (*ix)[(*n)++] = (tw_ix){off, (uint32_t)len, (uint8_t)type};
  return 0;
}

void prof__twb_written(prof__tw *w, uint64_t off, size_t len, int type) {
  tw_bound *B = w->bound;
  if (!B->off && ix_add(&B->ix, &B->nix, &B->ixcap, off, len, type)) give_up(B, "out of memory for the chunk index");
}

/* Copy chunk x of the old file to fd at *at, recording it in the new index. */
static int copy_chunk(int from, int fd, const tw_ix *x, uint8_t **buf, size_t *cap, tw_ix **nix, size_t *nn,
                      size_t *ncap, uint64_t *at) {
  if (x->len > *cap) {
    uint8_t *b = realloc(*buf, x->len);
    if (!b) return -1;
    *buf = b;
    *cap = x->len;
  }
  if (pread(from, *buf, x->len, (off_t)x->off) != (ssize_t)x->len || wr(fd, *buf, x->len) ||
      ix_add(nix, nn, ncap, *at, x->len, x->type))
    return -1;
  *at += x->len;
  return 0;
}

/* Write the rewritten trace to fd; returns its size, or 0 on failure. */
static uint64_t rewrite(prof__tw *w, int fd, const prof__buf *sums, size_t keep_from, tw_ix **nix, size_t *nn) {
  tw_bound *B = w->bound;
  size_t ncap = 0, cap = 0;
  uint8_t *buf = NULL;
  uint64_t at = B->hdr_len;
  int rc = wr(fd, B->hdr, B->hdr_len);
  for (size_t i = 0; i < B->nix && !rc; i++)
    if (!is_detail(B->ix[i].type) && B->ix[i].type != PROF_CHUNK_STEPSUM)
      rc = copy_chunk(w->fd, fd, &B->ix[i], &buf, &cap, nix, nn, &ncap, &at);
  /* The summaries, chunk by chunk (each framed with its header first). */
  for (size_t off = 0; off < sums->len && !rc;) {
    size_t len = PROF_CHUNK_HDR + prof__rd32(sums->p + off + 12);
    rc = wr(fd, sums->p + off, len) || ix_add(nix, nn, &ncap, at, len, PROF_CHUNK_STEPSUM);
    at += len;
    off += len;
  }
  for (size_t i = keep_from; i < B->nix && !rc; i++)
    if (is_detail(B->ix[i].type)) rc = copy_chunk(w->fd, fd, &B->ix[i], &buf, &cap, nix, nn, &ncap, &at);
  free(buf);
  return rc ? 0 : at;
}

/* First index entry whose detail is kept: the newest detail chunks whose
 * sizes sum to at most `room`. */
static size_t window_start(const tw_bound *B, uint64_t room) {
  uint64_t sum = 0;
  size_t i = B->nix;
  while (i > 0) {
    const tw_ix *x = &B->ix[i - 1];
    if (is_detail(x->type)) {
      if (sum + x->len > room) break;
      sum += x->len;
    }
    i--;
  }
  return i;
}

int prof__twb_before(prof__tw *w, size_t incoming) {
  tw_bound *B = w->bound;
  if (B->off || w->bytes + incoming <= B->max) return 0;
  uint64_t dict = 0;
  for (size_t i = 0; i < B->nix; i++)
    if (!is_detail(B->ix[i].type) && B->ix[i].type != PROF_CHUNK_STEPSUM) dict += B->ix[i].len;
  prof__buf sums = {0};
  if (frame_all(w, &sums) || sums.oom) {
    prof__buf_free(&sums);
    give_up(B, "out of memory for the step summaries");
    return 0;
  }
  uint64_t fixed = B->hdr_len + dict + sums.len + 64; /* 64: the totals' varints may grow */
  if (fixed + incoming > B->max || fixed > B->max / 2) {
    prof__buf_free(&sums);
    give_up(B, "names, threads, stacks and step summaries alone take more than half the bound");
    return 0;
  }
  size_t from = window_start(B, B->max / 2 - fixed);
  uint64_t dropped = 0, nd = 0;
  for (size_t i = 0; i < from; i++)
    if (is_detail(B->ix[i].type)) {
      dropped += B->ix[i].len;
      nd++;
    }
  /* The totals in the summaries' headers as they will be after this rewrite. */
  B->dropped_bytes += dropped;
  B->dropped_chunks += nd;
  B->compactions++;
  int rc = frame_all(w, &sums);
  tw_ix *nix = NULL;
  size_t nn = 0;
  uint64_t size = 0;
  int fd = -1;
  if (!rc) {
    (void)unlink(B->tmp); /* left by a rewrite that was killed */
    fd = open(B->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd >= 0) {
    (void)flock(fd, LOCK_EX | LOCK_NB);
    size = rewrite(w, fd, &sums, from, &nix, &nn);
  }
  prof__buf_free(&sums);
  if (!size || rename(B->tmp, B->path) != 0) {
    int e = errno;
    if (fd >= 0) {
      close(fd);
      unlink(B->tmp);
    }
    free(nix);
    B->dropped_bytes -= dropped;
    B->dropped_chunks -= nd;
    B->compactions--;
    char why[160];
    snprintf(why, sizeof why, "rewriting the trace failed (%s)", rc ? "out of memory" : strerror(e ? e : EIO));
    give_up(B, why);
    return 0;
  }
  close(w->fd);
  w->fd = fd;
  w->bytes = size;
  free(B->ix);
  B->ix = nix;
  B->nix = nn;
  B->ixcap = nn;
  prof__ss_enc_reset(&B->pend, 0); /* every summary is in the file now */
  return 1;
}
