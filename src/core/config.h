/* config.h — the resolved configuration of one profiling session. */
#ifndef PROF_CONFIG_H
#define PROF_CONFIG_H
#include <limits.h>
#include <stdint.h>

#include "mlprof.h"
#include "trace/errbuf.h"
#include "trace/settings.h"

/* A step schedule as torch.profiler's: skip `skip_first` steps, then cycles
 * of `wait` idle, `warmup` idle (the writer prepares the cycle's file) and
 * `active` recorded steps, `repeat` cycles (0: forever). */
typedef struct prof__sched {
  int on;
  uint64_t skip_first, wait, warmup, active, repeat;
} prof__sched;

typedef struct prof__cfg {
  int disable;
  uint32_t ring_kb;
  uint32_t flush_ms;
  int report;
  int force_monotonic;
  char path[PATH_MAX];
  char out_err[PROF_ERR_MAX]; /* why no trace may be written there ("": it may) */
  prof__sched sched;
} prof__cfg;

/* Parse "skip_first=N,wait=N,warmup=N,active=N,repeat=N" (any order, any
 * subset; active defaults to 1 and must be > 0). Returns 0 or PROF_EINVAL. */
int prof__sched_parse(const char *s, prof__sched *out);

/* Environment helpers (MLPROF_<name>, read with prof__env: trace/settings.h);
 * each says once on stderr when a value is ignored and returns the default
 * then.
 *  - long: a decimal integer in lo..hi.
 *  - flag: 1/true/yes/on → 1, 0/false/no/off → 0 (any case).
 *  - choice: the index of the value among `choices` (exact match). */
long prof__env_long(const char *name, long dflt, long lo, long hi);
/* As prof__env_long, but an integer above `hi` gives hi, with one message
 * saying `why` the maximum exists. */
long prof__env_long_capped(const char *name, long dflt, long lo, long hi, const char *why);
int prof__env_flag(const char *name, int dflt);
int prof__env_choice(const char *name, const char *const *choices, int n, int dflt);
/* The one message for a bad MLPROF_<name>=v: "mlprof: ignoring MLPROF_<name>='v'
 * (expected <expected>); <instead>", said once per process per value. */
void prof__env_ignored(const char *name, const char *v, const char *expected, const char *instead);

/* Merge cfg (may be NULL) with the environment. Returns 0 or PROF_EINVAL. */
int prof__config_resolve(const prof_config *cfg, prof__cfg *out);
const char *prof__program_name(void);
#endif
