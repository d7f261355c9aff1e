/* cli_base.c — the error message and the help switch of the `mlprof`
 * command, shared by its start-up front and the full command (cli_base.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli_base.h"

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "mlprof%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}
