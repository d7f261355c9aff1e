/* helpers.c — see helpers.h. */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *th_tmp_path(const char *stem, const char *ext) {
  static char bufs[8][512];
  static int n;
  char *b = bufs[n % 8];
  snprintf(b, sizeof bufs[0], "%s/%s.%d.%d%s", MLPROF_TEST_TMP, stem, (int)getpid(), n, ext ? ext : "");
  n++;
  return b;
}

int th_run(const char *cmd, const char *out_path) {
  char full[4096];
  if (out_path)
    snprintf(full, sizeof full, "%s >'%s' 2>&1", cmd, out_path);
  else
    snprintf(full, sizeof full, "%s", cmd);
  int st = system(full);
  if (st == -1) return -1;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

char *th_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) { free(p); p = NULL; }
  fclose(f);
  if (p) { p[n] = 0; if (len) *len = (size_t)n; }
  return p;
}

int th_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}
