/* writer_int.h — the trace writer's state, shared by writer.c (chunks,
 * queues) and writer_bound.c (MLPROF_MAX_MB: the bounded trace's rewrite).
 * Nothing outside these two files includes it.
 */
#ifndef PROF_WRITER_INT_H
#define PROF_WRITER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"
#include "zstd_stream.h"

/* A queue of entries (strings, thread records, event blocks) that one flush
 * writes as one chunk, or as several cut between entries so that none holds
 * more than PROF_CHUNK_RAW_MAX bytes: the bound a reader relies on. */
typedef struct tw_queue {
  prof__buf b;
  size_t *cuts;    /* offsets in b where a chunk after the first begins */
  size_t ncuts, cuts_cap;
  int oom;         /* a cut could not be kept */
} tw_queue;

typedef struct tw_bound tw_bound;

struct prof__tw {
  int fd;
  int failed;
  int err; /* errno of the first failed write or close (0: none) */
  uint64_t bytes;
  tw_queue strings, threads, events;
  prof__zc *zc;
  int plain; /* no compressor is made any more (prof__tw_plain) */
  uint8_t *zbuf;
  size_t zcap;
  tw_bound *bound; /* MLPROF_MAX_MB (writer_bound.c), else NULL */
};

/* Append one framed chunk (header, payload compressed when smaller) to out. */
int prof__tw_frame(prof__tw *w, int type, const void *data, size_t len, prof__buf *out);

/* writer_bound.c, called only when w->bound is set. */
int prof__twb_before(prof__tw *w, size_t incoming); /* before a chunk: 1 when the file was rewritten */
void prof__twb_written(prof__tw *w, uint64_t off, size_t len, int type);
void prof__twb_events(prof__tw *w, uint32_t tid, const prof__event *ev, size_t n);
int prof__twb_flush(prof__tw *w); /* the STEPSUM chunk of steps completed since the last */
void prof__twb_free(prof__tw *w);
void prof__twb_string(prof__tw *w, uint32_t id, const char *s, size_t len); /* the summariser's counter ids */
void prof__twb_finishing(prof__tw *w); /* the next flush is the last: held steps go out */

#endif /* PROF_WRITER_INT_H */
