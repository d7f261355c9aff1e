/* settings.c — reading MLPROF_* settings (settings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "settings.h"

const char *prof__env(const char *name) {
  char key[64];
  snprintf(key, sizeof key, "MLPROF_%s", name);
  const char *v = getenv(key);
  return v && *v ? v : NULL;
}

int prof__flag_parse(const char *v) {
  static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
  if (!v) return -1;
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) return 1;
    if (strcasecmp(v, no[i]) == 0) return 0;
  }
  return -1;
}
