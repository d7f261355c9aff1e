/* cli_base.c — what both halves of the `mlprof` command share: the error
 * message, the executable's folder, the readable-file check and the help
 * switch (cli_base.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_base.h"

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "mlprof%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int cli_exe_dir(char *out, size_t n) {
  ssize_t len = n > 1 ? readlink("/proc/self/exe", out, n - 1) : -1;
  if (len <= 0) return 0;
  out[len] = 0;
  char *slash = strrchr(out, '/');
  if (!slash) return 0;
  *slash = 0;
  return 1;
}

int cli_readable(const char *path) { return path && access(path, R_OK) == 0; }

int cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}
