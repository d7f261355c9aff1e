/* cmd_write_reports.c — `mlprof write-reports TRACE...`: the report files
 * beside each trace. A profiled program starts this command, detached, when
 * its trace is closed (src/core/reports.h), so the analysis never runs in
 * the program; `mlprof run` writes the same files itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"
#include "cli.h"

#define MAX_TRACES 256

/* One line on the status descriptor (-1: none); errors are ignored: the
 * program that asked may be gone. */
static void status(int fd, const char *word, const char *text) {
  if (fd < 0) return;
  char line[1024];
  int n = snprintf(line, sizeof line, "%s %s", word, text);
  if (n < 0) return;
  if ((size_t)n >= sizeof line - 1) n = (int)sizeof line - 2;
  for (int i = 0; i < n; i++)
    if (line[i] == '\n') line[i] = ' '; /* one line per trace */
  line[n++] = '\n';
  (void)!write(fd, line, (size_t)n);
}

static int parse_fd(const char *s) {
  char *end;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : -1;
  return s && !errno && end != s && !*end && v >= 0 && v < 65536 ? (int)v : -2;
}

static int run(int argc, char **argv) {
  const char *by = "cli", *fd_arg = NULL;
  static const char *pos[MAX_TRACES];
  int npos;
  const cli_opt opts[] = {{"by", 0, &by, NULL}, {"status-fd", 0, &fd_arg, NULL}, {NULL, 0, NULL, NULL}};
  if (cli_parse("write-reports", argc, argv, opts, pos, MAX_TRACES, &npos)) return CLI_USAGE;
  int fd = fd_arg ? parse_fd(fd_arg) : -1;
  if (fd == -2) {
    cli_error("write-reports", "--status-fd needs a descriptor number, not '%s'", fd_arg);
    return CLI_USAGE;
  }
  if (strcmp(by, "cli") != 0 && strcmp(by, "launcher") != 0) {
    cli_error("write-reports", "--by is cli or launcher, not '%s'", by);
    return CLI_USAGE;
  }
  if (npos < 1) {
    cli_error("write-reports", "expected one or more trace files (see 'mlprof write-reports --help')");
    return CLI_USAGE;
  }
  signal(SIGPIPE, SIG_IGN); /* the status reader may have gone */
  int rc = CLI_OK;
  for (int i = 0; i < npos; i++) {
    char err[PROF_ERR_MAX] = "";
    int r = prof__report_files_by(pos[i], by, err);
    if (r == 0) {
      status(fd, "ok", pos[i]);
      if (fd < 0) fprintf(stderr, "mlprof: reports %s.report.{txt,json,html}\n", pos[i]); /* run by hand */
      continue;
    }
    cli_error("write-reports", "%s: %s", pos[i], err[0] ? err : prof_strerror(r));
    status(fd, "error", err[0] ? err : prof_strerror(r));
    if (rc == CLI_OK) rc = r == PROF_EIO ? CLI_OUTPUT : CLI_BADTRACE;
  }
  return rc;
}

const mlprof_cmd mlprof_cmd_write_reports = {
    "write-reports", "write the report files beside traces (what a profiled program starts at exit)",
    "usage: mlprof write-reports [--by cli|launcher] [--status-fd N] TRACE...\n\n"
    "Write <trace>.report.txt, .report.json and .report.html beside each TRACE,\n"
    "each through a temporary file renamed into place, so a reader never sees a\n"
    "partial report. A profiled program starts this command, detached, when its\n"
    "trace is closed, so the analysis never runs inside the program (README,\n"
    "\"Reports\"); run it by hand to write the reports of any trace again.\n\n"
    "  --by W          who the reports say wrote them (JSON written_by): cli\n"
    "                  (default) or launcher\n"
    "  --status-fd N   one line per trace on descriptor N: \"ok TRACE\" or\n"
    "                  \"error MESSAGE\" (the program that started the command\n"
    "                  reads it)\n",
    run};
