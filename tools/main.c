/* main.c — the `mlprof` command: finds the subcommand in one table and
 * runs it. A new subcommand is one X(name) line in MLPROF_COMMANDS plus its
 * own tools/cmd_<name>.c defining `const mlprof_cmd mlprof_cmd_<name>`.
 */
#include <string.h>

#include "mlprof.h"
#include "cli.h"

/* The subcommands, in the order `mlprof --help` lists them. */
#define MLPROF_COMMANDS(X) \
  X(report)                \
  X(info)                  \
  X(export)                \
  X(diff)                  \
  X(top)                   \
  X(trigger)               \
  X(resume)                \
  X(run)                   \
  X(write_reports)

#define DECLARE(name) extern const mlprof_cmd mlprof_cmd_##name;
MLPROF_COMMANDS(DECLARE)
#undef DECLARE

static const mlprof_cmd *const commands[] = {
#define ENTRY(name) &mlprof_cmd_##name,
    MLPROF_COMMANDS(ENTRY)
#undef ENTRY
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out) {
  fputs("usage: mlprof <command> [options] [arguments]\n"
        "       mlprof <command> --help\n\n"
        "Reads traces written by the mlprof profiler library (.mlpt files).\n\n"
        "commands:\n",
        out);
  for (size_t i = 0; i < NCOMMANDS; i++) fprintf(out, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
  fputs("\nexit status: 0 success, 1 usage error, 2 the trace cannot be read (missing,\n"
        "not a trace, corrupt, unsupported version, past MLPROF_READ_MAX_MB), 3 the\n"
        "output cannot be written, 4 'diff --fail-if-slower' found the new run slower.\n"
        "'mlprof run' exits with the program's own status.\n",
        out);
}

/* Printed after the usage of every command that reads traces. */
static const char read_env_help[] =
    "\nenvironment:\n"
    "  MLPROF_READ_MAX_MB=N  most MiB of decompressed data one pass over a trace may\n"
    "                        produce: N (default 1024) or 16 times the trace's size,\n"
    "                        whichever is larger; 0 = no cap. A trace past the cap,\n"
    "                        or with a chunk past the 8 MiB mlprof writes, is\n"
    "                        refused with exit status 2 (a crafted trace can\n"
    "                        otherwise take gigabytes of memory); 0 reads both.\n"
    "  MLPROF_ANALYZE_THREADS=1  analyse on one thread (default: a second thread\n"
    "                        decodes the trace while the first analyses it, when\n"
    "                        two CPUs are there; the reports are the same).\n";

static int reads_traces(const char *name) {
  static const char *const r[] = {"report", "info", "export", "diff", "run", "write-reports"};
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
    if (strcmp(r[i], name) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(name, "--version") == 0) {
    printf("mlprof %s\n", MLPROF_VERSION_STRING);
    return CLI_OK;
  }
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(commands[i]->name, name) != 0) continue;
    if (cli_wants_help(argc - 2, argv + 2)) {
      fputs(commands[i]->usage, stdout);
      if (reads_traces(name)) fputs(read_env_help, stdout);
      return CLI_OK;
    }
    return commands[i]->run(argc - 1, argv + 1);
  }
  cli_error(NULL, "unknown command '%s' (see 'mlprof --help')", name);
  return CLI_USAGE;
}
