/* bgwriter.h — the background thread that drains every thread's ring into
 * the trace file. */
#ifndef PROF_BGWRITER_H
#define PROF_BGWRITER_H
#include <stdint.h>

#include "trace/trace.h"

/* Start draining into `tw` (which the writer now owns) every `flush_ms`. */
int prof__writer_start(prof__tw *tw, uint32_t flush_ms, const char *path);
/* Final drain, footer, close; joins the thread. Returns 0 or PROF_EIO. */
int prof__writer_stop(void);
/* Child side of fork(): forget the writer without touching it. */
void prof__writer_forget(void);
uint64_t prof__writer_events(void);
uint64_t prof__writer_lost(void);
uint64_t prof__writer_bytes(void);
int prof__writer_failed(void);
#endif
