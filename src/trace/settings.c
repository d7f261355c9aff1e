/* settings.c — reading MLPROF_* settings (settings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

#include "settings.h"

/* getenv("MLPROF_" name) without building the key: the first match, as
 * getenv finds it. Called often at start-up. */
const char *prof__env(const char *name) {
  size_t n = strlen(name);
  for (char **e = environ; e && *e; e++) {
    const char *s = *e;
    if (s[0] != 'M' || strncmp(s, "MLPROF_", 7) != 0 || strncmp(s + 7, name, n) != 0 || s[7 + n] != '=') continue;
    return s[8 + n] ? s + 8 + n : NULL;
  }
  return NULL;
}

const char *prof__preload_next(const char **p, size_t *len) {
  const char *s = *p;
  while (*s == ':' || *s == ' ') s++;
  if (!*s) return NULL;
  *len = strcspn(s, ": ");
  *p = s + *len;
  return s;
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

int prof__env_preload(void) {
  const char *v = prof__env("PRELOAD");
  return v && strcmp(v, "1") == 0;
}

int prof__env_run_child(void) {
  const char *v = prof__env("RUN_PID");
  return v && atol(v) != (long)getpid();
}
