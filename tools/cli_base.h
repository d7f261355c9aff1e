/* cli_base.h — what both halves of the `mlprof` command share, the small
 * start-up front (tools/front/) and the full command: the exit codes, the
 * error message, the executable's folder, the readable-file check and the
 * help switch (tools/cli_base.c). Nothing here reads a trace.
 */
#ifndef MLPROF_CLI_BASE_H
#define MLPROF_CLI_BASE_H

#include <stddef.h>

/* Exit codes (documented in `mlprof --help`). */
enum {
  CLI_OK = 0,
  CLI_USAGE = 1,    /* bad arguments, unknown command or option, unavailable format */
  CLI_BADTRACE = 2, /* the trace is missing, not a trace, corrupt or unsupported */
  CLI_OUTPUT = 3    /* the output could not be written */
};

/* Print "mlprof <cmd>: <message>" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The folder of this executable (from /proc/self/exe, links resolved) into
 * out[n]: 1, or 0 when it cannot be read. */
int cli_exe_dir(char *out, size_t n);

/* Whether `path` is given and this process may read it. */
int cli_readable(const char *path);

/* Whether argv[0..argc) asks for help (--help or -h before any "--"). */
int cli_wants_help(int argc, char **argv);

#endif
