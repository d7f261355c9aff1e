/* producer.h — the one interface between the recorder core and its
 * producers (src/mem, cpu, stack, gpu, res, model, mpi, live).
 *
 * A producer is a prof__module: a name (what MLPROF_MODULES lists) and hooks,
 * any of which may be NULL. The core calls them; a producer never calls into
 * another producer through the core. The list of the producers built into
 * the library is src/lib/producers.def: the assembly (src/lib) hands it to
 * the core at prof_init (assembly.h), so static builds link them too.
 *
 * What a producer may call: this header, session.h (which it brings in:
 * events, names, META pairs, lost counts, writer hooks, the thread
 * registry, environment lookup), clock.h, ring.h and guard.h (the
 * allocation guard and the allocator marks; brought in by session.h), and
 * config.h, bgwriter.h (trace segments, writer sync), crash.h (the crash
 * signals) and procfile.h (/proc files kept open and read again, the
 * process's RSS), which are part of this interface too; so is the stack
 * producer's capture service, stack/stack.h (call stacks of allocations
 * and samples). The trace format (src/trace) is open to
 * everyone. tests/check_structure.sh enforces this list.
 */
#ifndef PROF_PRODUCER_H
#define PROF_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "procfile.h"
#include "session.h"
#include "trace/event.h"

/* A producer module. Hooks:
 *  - prepare: at prof_init, on the calling thread, before the trace is
 *    created and the writer thread starts: readings that must come first
 *    (a first sample: while a new thread is being started, getrusage of
 *    the process waits for it, 0.3 ms on a virtual machine). Not called
 *    for segment traces.
 *  - header: add key/value pairs to the trace header (at most `max`);
 *    strings must stay valid until prof_init() returns. Returns the count.
 *    Also called, on the writer thread, for each segment trace.
 *  - start: after the writer started, before prof_init() returns; a
 *    negative return is reported by the module itself and ignored (the
 *    session runs without it). Per-cycle work is registered here with
 *    prof__writer_hook_add().
 *  - stop: at the start of prof_shutdown(), before the final drain.
 *  - step: at every step boundary of a started module, on the thread calling
 *    prof_start (begin = 1, before STEP_BEGIN of `step`) or prof_stop
 *    (begin = 0, after STEP_END); `ticks` is the clock then. Returns, at a
 *    begin, how many steps an on-demand capture should record from this one
 *    (0: none). Must not allocate.
 *  - observe: on the writer thread, each batch of events drained from the
 *    ring of thread `tid` (timestamps in ns) before it is written.
 *  - crash: inside the fatal-signal handler, before the crash flush; only
 *    async-signal-safe work.
 * Fork: a child of fork() records nothing (the session turns off there), so
 * producers need no fork hook of their own unless they hold locks an
 * allocator may need (then pthread_atfork, as src/mem does). */
typedef struct prof__module {
  const char *name;
  const char *alias; /* a former name MLPROF_MODULES still accepts, or NULL */
  size_t (*header)(prof__kv *kv, size_t max);
  int (*start)(void);
  void (*stop)(void);
  uint64_t (*step)(int begin, uint64_t step, uint64_t ticks);
  void (*observe)(uint32_t tid, const prof__event *ev, size_t n);
  void (*crash)(void);
  void (*prepare)(void); /* last: the struct only grows */
} prof__module;

/* Register a module at run time (tests, optional pieces); at most 32 in all. */
int prof__module_add(const prof__module *m);

/* Is this session's trace the first its process writes? 0 when an earlier
 * image of the process (before an exec) or an earlier session in it wrote
 * one (tracepath.c): a note said once per process is not said again. Known
 * from the trace's creation on, before the modules start. */
int prof__first_trace(void);

/* Capture facts for producers (capture control, the live page; capture.c). */
/* Is a capture segment (schedule cycle or on-demand) open or requested? */
int prof__capture_running(void);
/* Copy the path of the last finished segment trace ("" if none). */
void prof__capture_last(char *out, size_t n);

#endif /* PROF_PRODUCER_H */
