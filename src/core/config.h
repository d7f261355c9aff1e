/* config.h — the resolved configuration of one profiling session. */
#ifndef PROF_CONFIG_H
#define PROF_CONFIG_H
#include <limits.h>
#include <stdint.h>

#include "mlprof.h"

typedef struct prof__cfg {
  int disable;
  uint32_t ring_kb;
  uint32_t flush_ms;
  int report;
  int force_monotonic;
  char path[PATH_MAX];
} prof__cfg;

/* Merge cfg (may be NULL) with the environment. Returns 0 or PROF_EINVAL. */
int prof__config_resolve(const prof_config *cfg, prof__cfg *out);
const char *prof__program_name(void);
#endif
