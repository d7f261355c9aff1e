/* run_reports.c — how `mlprof run` learns the traces its program wrote.
 *
 * The launcher keeps an unlinked temporary file open and names it to the
 * program as MLPROF_RUN_TRACES="/proc/<launcher>/fd/<n>:<dev>:<ino>"; the
 * library of every process under it appends one line per trace it writes,
 * "<pid> <trace|capture> <absolute path>" (src/core/reports.c). So the
 * launcher finds the trace wherever the program put it: another
 * MLPROF_OUTPUT, another folder after a chdir and an exec, a capture.
 * Nothing is left behind, even when the launcher is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_reports.h"

static int tmp_file(void) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  char path[4096];
  snprintf(path, sizeof path, "%s/mlprof-run.XXXXXX", dir);
  fd = mkostemp(path, O_CLOEXEC);
  if (fd >= 0) unlink(path);
  return fd;
}

int run_list_open(run_list *l) {
  l->fd = tmp_file();
  struct stat st;
  if (l->fd < 0 || fstat(l->fd, &st) != 0) return -1;
  snprintf(l->env, sizeof l->env, "/proc/%d/fd/%d:%llu:%llu", (int)getpid(), l->fd, (unsigned long long)st.st_dev,
           (unsigned long long)st.st_ino);
  if (access("/proc/self/fd", F_OK) != 0) { /* no /proc: the launcher's own guess of the path */
    close(l->fd);
    l->fd = -1;
    return -1;
  }
  return 0;
}

/* Is `path` in out[0..n)? */
static int listed(char **out, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(out[i], path) == 0) return 1;
  return 0;
}

size_t run_list_traces(const run_list *l, pid_t pid, const char *kind, char ***out) {
  *out = NULL;
  if (l->fd < 0) return 0;
  FILE *f = fdopen(dup(l->fd), "r");
  if (!f) return 0;
  rewind(f);
  char *line = NULL;
  size_t cap = 0, n = 0, room = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    if (line[len - 1] == '\n') line[len - 1] = 0;
    char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp2 || atol(line) != (long)pid || (size_t)(sp2 - sp1 - 1) != strlen(kind) ||
        strncmp(sp1 + 1, kind, strlen(kind)) != 0 || listed(*out, n, sp2 + 1))
      continue;
    if (n == room) {
      room = room ? room * 2 : 8;
      char **grown = realloc(*out, room * sizeof *grown);
      if (!grown) break;
      *out = grown;
    }
    if (((*out)[n] = strdup(sp2 + 1))) n++;
  }
  free(line);
  fclose(f);
  return n;
}

void run_list_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

void run_list_close(run_list *l) {
  if (l->fd >= 0) close(l->fd);
  l->fd = -1;
}
