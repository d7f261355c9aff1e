/* main.c — the `mlprof` command's start-up front: a small program, linked
 * statically where the C library allows, that is what `mlprof` names.
 *
 * `mlprof run -q --no-report -- PROGRAM` is done here alone: the options are
 * checked, the preload set and PROGRAM replaces this process, with the same
 * code as the full command (tools/run_exec.c). A profiled program so pays
 * for one small exec before its own, not for loading the analyzer and its
 * libraries. Every other use (reports, help, every other subcommand) runs
 * the full command, `mlprof-cli`, with the same arguments: beside this
 * program in the build tree, MLPROF_CLI_REL from it when installed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../cli_base.h"
#include "../run_exec.h"

#ifndef MLPROF_CLI_REL
#define MLPROF_CLI_REL "../lib/mlprof/mlprof-cli"
#endif

/* The full command into out[n]: beside this executable, else at
 * MLPROF_CLI_REL from its folder. 0 when neither is there. */
static int find_full_cli(char *out, size_t n) {
  char exe[PATH_MAX];
  if (!cli_exe_dir(exe, sizeof exe)) return 0;
  static const char *const rel[] = {"mlprof-cli", MLPROF_CLI_REL};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
    if (snprintf(out, n, "%s/%s", exe, rel[i]) < (int)n && access(out, X_OK) == 0) return 1;
  return 0;
}

/* `mlprof run` with nothing to do after the program: CLI_USAGE after a
 * message for bad options, else the program replaces this process (the
 * return is 127 when it could not). -1: the full command does it. */
static int run_here(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "run") != 0 || cli_wants_help(argc - 2, argv + 2)) return -1;
  run_opts o;
  int prog = 0;
  char lib[PATH_MAX];
  int rc = run_opts_check(argc - 1, argv + 1, &o, &prog, lib, sizeof lib);
  if (rc) return rc;
  if (!run_opts_replaces(&o)) return -1;
  return run_replace(&o, lib, argv + 1 + prog);
}

int main(int argc, char **argv) {
  int rc = run_here(argc, argv);
  if (rc >= 0) return rc;
  char cli[PATH_MAX];
  if (!find_full_cli(cli, sizeof cli)) {
    cli_error(NULL, "cannot find the full command 'mlprof-cli' beside this one or at %s from it", MLPROF_CLI_REL);
    return CLI_USAGE;
  }
  execv(cli, argv);
  cli_error(NULL, "cannot run '%s': %s", cli, strerror(errno));
  return CLI_USAGE;
}
