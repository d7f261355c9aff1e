/* cli_ranks.c — merged reports and exports for `mlprof report` and
 * `mlprof export` given several rank traces or a directory (cli_ranks.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mlprof.h"
#include "analyze/ranks/ranks.h"
#include "cli.h"
#include "cli_ranks.h"

int cli_ranks_wanted(const char *const *pos, int npos) {
  struct stat st;
  return npos > 1 || (npos == 1 && stat(pos[0], &st) == 0 && S_ISDIR(st.st_mode));
}

char *cli_ranks_single(const char *const *pos, int npos) {
  char err[PROF_ERR_MAX] = "", **paths = NULL, *one = NULL;
  long n = prof__ranks_paths((char *const *)pos, (size_t)npos, &paths, err);
  if (n == 1) one = strdup(paths[0]);
  if (n >= 0) prof__ranks_paths_free(paths, (size_t)n);
  return one;
}

static int load(const char *cmd, const char *const *pos, int npos, prof__ranks **rs) {
  char err[PROF_ERR_MAX] = "", **paths = NULL;
  long n = prof__ranks_paths((char *const *)pos, (size_t)npos, &paths, err);
  if (n < 0) {
    cli_error(cmd, "%s", err);
    return CLI_BADTRACE;
  }
  int rc = prof__ranks_run(rs, paths, (size_t)n, err);
  prof__ranks_paths_free(paths, (size_t)n);
  if (rc) {
    cli_error(cmd, "cannot analyze: %s", err);
    return CLI_BADTRACE;
  }
  return CLI_OK;
}

int cli_ranks_report(const char *cmd, const char *const *pos, int npos, const char *format, const char *out_path) {
  prof__ranks *rs;
  int rc = load(cmd, pos, npos, &rs);
  if (rc) return rc;
  FILE *out = cli_open_out(cmd, out_path);
  rc = out ? cli_close_out(cmd, out_path, out, prof__ranks_write(rs, format, out)) : CLI_OUTPUT;
  prof__ranks_free(rs);
  return rc;
}

int cli_ranks_export(const char *cmd, const char *const *pos, int npos, const char *out_path, int quiet) {
  if (!out_path) out_path = "merged.trace.json";
  prof__ranks *rs;
  int rc = load(cmd, pos, npos, &rs);
  if (rc) return rc;
  FILE *out = cli_open_out(cmd, out_path);
  rc = out ? cli_close_out(cmd, out_path, out, prof__ranks_export_chrome(rs, out)) : CLI_OUTPUT;
  if (rc == CLI_OK && out != stdout && !quiet) fprintf(stderr, "mlprof %s: wrote %s\n", cmd, out_path);
  prof__ranks_free(rs);
  return rc;
}
