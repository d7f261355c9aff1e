/* bench_startup.c — what mlprof adds to the start and exit of a trivial
 * program, against the same program without it, measured in the same run:
 *
 *   run_true       `mlprof run -q --no-report -- /bin/true` against a bare
 *                  /bin/true (the launcher, the preloaded library, the
 *                  recorder's start and the trace's close; no analysis);
 *   run_true_full  the same through the full command, `mlprof-cli run`
 *                  (what `mlprof` was before its start-up front), and
 *                  front_saves, the difference;
 *   linked         startup_prog (prof_init, prof_start, prof_stop, exit;
 *                  MLPROF_REPORT=0) against the same source built with
 *                  -DMLPROF_DISABLED (no library at all);
 *   linked_off     the linked program with MLPROF_DISABLE=1 against the
 *                  same baseline: the cost of loading the library alone.
 *
 *   bench_startup [ROUNDS]   (default 60)
 *
 * The programs run interleaved, one of each per round, so load on the
 * machine hits all of them alike; each line's value and baseline are medians
 * in milliseconds, and `added` lines give the difference. Never fails.
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "bench_util.h"

#ifndef MLPROF_CLI
#define MLPROF_CLI "mlprof"
#endif
#ifndef MLPROF_CLI_FULL
#define MLPROF_CLI_FULL "mlprof-cli"
#endif
#ifndef MLPROF_LIB
#define MLPROF_LIB "libmlprof.so"
#endif
#ifndef STARTUP_PROG
#define STARTUP_PROG "startup_prog"
#endif
#ifndef STARTUP_BARE
#define STARTUP_BARE "startup_bare"
#endif

extern char **environ;

enum { C_TRUE, C_RUN, C_FULL, C_BARE, C_LINKED, C_OFF, NCONF };

/* Wall time of one run of argv with the extra environment `env` (NAME=V
 * strings, NULL-terminated), stdout and stderr to /dev/null; -1 on failure. */
static double run_ms(char *const argv[], char *const env[]) {
  char *envp[256];
  size_t n = 0;
  for (size_t i = 0; env && env[i] && n < 64; i++) envp[n++] = env[i];
  for (char **e = environ; *e && n < 255; e++) {
    if (!strncmp(*e, "MLPROF_", 7) || !strncmp(*e, "LD_PRELOAD=", 11)) continue;
    envp[n++] = *e;
  }
  envp[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  uint64_t t0 = bench_now_ns();
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  return (double)(bench_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 60;
  if (rounds < 3 || rounds > 100000) rounds = 60;
  char dir[1024], trace[1100], out[1200], lib[1100];
  if (bench_tmpdir(dir, sizeof dir) != 0) {
    printf("bench_startup: no scratch directory\n");
    return 0;
  }
  snprintf(trace, sizeof trace, "%s/t.mlpt", dir);
  snprintf(out, sizeof out, "MLPROF_OUTPUT=%s", trace);
  snprintf(lib, sizeof lib, "%s", MLPROF_LIB);
  char *a_true[] = {"/bin/true", NULL};
  char *a_run[] = {MLPROF_CLI, "run", "-q", "--no-report", "--library", lib, "-o", trace, "--", "/bin/true", NULL};
  char *a_full[] = {MLPROF_CLI_FULL, "run", "-q", "--no-report", "--library", lib, "-o", trace, "--", "/bin/true", NULL};
  char *a_bare[] = {STARTUP_BARE, NULL}, *a_linked[] = {STARTUP_PROG, NULL};
  char *e_linked[] = {out, "MLPROF_REPORT=0", NULL}, *e_off[] = {"MLPROF_DISABLE=1", NULL};
  char *const *args[NCONF] = {a_true, a_run, a_full, a_bare, a_linked, a_linked};
  char *const *envs[NCONF] = {NULL, NULL, NULL, NULL, e_linked, e_off};
  double *v[NCONF];
  int got[NCONF] = {0}, failed[NCONF] = {0};
  for (int c = 0; c < NCONF; c++) v[c] = calloc((size_t)rounds, sizeof(double));
  for (int c = 0; c < NCONF; c++) run_ms(args[c], envs[c]); /* warm the page cache */
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < NCONF; k++) {
      int c = (k + r) % NCONF; /* a different order every round */
      double ms = run_ms(args[c], envs[c]);
      if (ms < 0) failed[c]++;
      else v[c][got[c]++] = ms;
      unlink(trace);
    }
  }
  double m[NCONF];
  for (int c = 0; c < NCONF; c++) m[c] = bench_median(v[c], (size_t)got[c]);
  printf("start-up and exit of a trivial program, medians of %d interleaved runs (ms)\n", rounds);
  bench_header();
  bench_line("run_true_ms", m[C_RUN], m[C_TRUE], "ms");
  bench_line("run_true_added_ms", m[C_RUN] - m[C_TRUE], m[C_TRUE], "ms");
  bench_line("run_true_full_added_ms", m[C_FULL] - m[C_TRUE], m[C_TRUE], "ms");
  bench_line("front_saves_ms", m[C_FULL] - m[C_RUN], m[C_FULL] - m[C_TRUE], "ms");
  bench_line("linked_ms", m[C_LINKED], m[C_BARE], "ms");
  bench_line("linked_added_ms", m[C_LINKED] - m[C_BARE], m[C_BARE], "ms");
  bench_line("linked_off_added_ms", m[C_OFF] - m[C_BARE], m[C_BARE], "ms");
  for (int c = 0; c < NCONF; c++)
    if (failed[c]) printf("bench_startup: %d runs of configuration %d failed\n", failed[c], c);
  for (int c = 0; c < NCONF; c++) free(v[c]);
  bench_rmdir(dir);
  return 0;
}
