/* cli_common.c — option parsing, error messages and trace/output handling
 * shared by the mlprof subcommands (see cli.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "mlprof.h"
#include "cli.h"

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t n) {
  for (; opts->long_name; opts++)
    if (strlen(opts->long_name) == n && strncmp(opts->long_name, name, n) == 0) return opts;
  return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c) {
  for (; opts->long_name; opts++)
    if (opts->short_name && opts->short_name == c) return opts;
  return NULL;
}

/* Handle one option at argv[*i]; CLI_OK or CLI_USAGE. */
static int take_option(const char *cmd, int argc, char **argv, int *i, const cli_opt *opts) {
  const char *arg = argv[*i], *inline_val = NULL;
  const cli_opt *o;
  if (arg[1] == '-') {
    const char *eq = strchr(arg + 2, '=');
    size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    o = find_long(opts, arg + 2, n);
    inline_val = eq ? eq + 1 : NULL;
  } else {
    o = arg[2] == 0 ? find_short(opts, arg[1]) : NULL;
  }
  if (!o) {
    cli_error(cmd, "unknown option '%s' (see 'mlprof %s --help')", arg, cmd);
    return CLI_USAGE;
  }
  if (o->flag) {
    if (inline_val) {
      cli_error(cmd, "option '--%s' takes no value", o->long_name);
      return CLI_USAGE;
    }
    *o->flag = 1;
    return CLI_OK;
  }
  if (!inline_val) {
    if (*i + 1 >= argc) {
      cli_error(cmd, "option '%s' needs a value", arg);
      return CLI_USAGE;
    }
    inline_val = argv[++*i];
  }
  *o->value = inline_val;
  return CLI_OK;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos,
              int *npos) {
  int only_pos = 0;
  *npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_pos && strcmp(a, "--") == 0) {
      only_pos = 1;
      continue;
    }
    if (!only_pos && a[0] == '-' && a[1]) {
      if (take_option(cmd, argc, argv, &i, opts)) return CLI_USAGE;
      continue;
    }
    if (*npos >= max_pos) {
      cli_error(cmd, "unexpected argument '%s' (see 'mlprof %s --help')", a, cmd);
      return CLI_USAGE;
    }
    pos[(*npos)++] = a;
  }
  return CLI_OK;
}

int cli_analyze(const char *cmd, const char *path, int quiet, prof__an **out) {
  char err[PROF_ERR_MAX];
  int rc = prof__an_run_opts(out, path, quiet, err);
  if (rc == 0) return CLI_OK;
  cli_error(cmd, "cannot read trace '%s': %s", path, err[0] ? err : prof_strerror(rc));
  return CLI_BADTRACE;
}

/* A compressed-file suffix that this output would not honour ("" if none):
 * the caller writes plain data, so "x.json.bz2" would lie about its bytes. */
static const char *compressed_suffix(const char *path) {
  static const char *const sfx[] = {".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".zip", ".Z"};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
    size_t k = strlen(sfx[i]);
    if (n > k && strcmp(path + n - k, sfx[i]) == 0) return sfx[i];
  }
  return "";
}

FILE *cli_open_out(const char *cmd, const char *path) {
  if (!path || strcmp(path, "-") == 0) return stdout;
  const char *sfx = compressed_suffix(path);
  if (*sfx) {
    cli_error(cmd, "cannot write '%s': this output is not compressed%s; name it without '%s'", path,
              strcmp(sfx, ".gz") == 0 ? "" : " (only 'export --chrome' writes .gz)", sfx);
    return NULL;
  }
  /* A new file is private (0600), as the report files are. */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    cli_error(cmd, "cannot create '%s': %s", path, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return f;
}

int cli_close_out(const char *cmd, const char *path, FILE *f, int write_rc) {
  int to_stdout = f == stdout;
  int rc = to_stdout ? fflush(f) : fclose(f);
  if (write_rc == 0 && rc == 0) return CLI_OK;
  const char *what = write_rc ? prof_strerror(write_rc) : strerror(errno);
  cli_error(cmd, "cannot write '%s': %s", to_stdout ? "standard output" : path, what);
  if (!to_stdout) unlink(path);
  return CLI_OUTPUT;
}
