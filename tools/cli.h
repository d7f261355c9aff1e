/* cli.h — what every `mlprof` subcommand shares: the command descriptor,
 * exit codes, option parsing and the usual open-a-trace / open-an-output
 * steps with their error messages.
 *
 * A subcommand lives in its own file (tools/cmd_<name>.c) defining
 * `const mlprof_cmd mlprof_cmd_<name>`, and is listed once in the
 * MLPROF_COMMANDS table in tools/main.c.
 */
#ifndef MLPROF_CLI_H
#define MLPROF_CLI_H

#include <stdio.h>

#include "analyze/analyze.h"
#include "cli_base.h" /* exit codes, cli_error */

typedef struct mlprof_cmd {
  const char *name;
  const char *summary; /* one line for `mlprof --help` */
  const char *usage;   /* full text for `mlprof <name> --help` */
  /* argv[0] is the command name; `--help` was already handled. */
  int (*run)(int argc, char **argv);
} mlprof_cmd;

/* One option of a command. `value` receives the argument of an option that
 * takes one; `flag` is set to 1 for an option without. */
typedef struct cli_opt {
  const char *long_name; /* without the leading "--" */
  char short_name;       /* 0: none */
  const char **value;
  int *flag;
} cli_opt;

/* Parse argv[1..argc): options from `opts` (NULL-terminated by long_name)
 * and up to `max_pos` positional arguments into pos[]. "--" ends options.
 * Returns CLI_OK or CLI_USAGE after printing a message naming `cmd`. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos,
              int *npos);

/* Analyze `path`; on failure prints why and returns CLI_BADTRACE. */
int cli_analyze(const char *cmd, const char *path, int quiet, prof__an **out);

/* Open an output file ("-" or NULL: stdout). NULL after printing why. */
FILE *cli_open_out(const char *cmd, const char *path);
/* Close it; on a write error prints why, removes a partial file and
 * returns CLI_OUTPUT. */
int cli_close_out(const char *cmd, const char *path, FILE *f, int write_rc);

#endif
