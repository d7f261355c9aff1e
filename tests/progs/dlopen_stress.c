/* dlopen_stress.c — a host that loads many shared libraries from its main
 * thread right from the start, while a profiler preloaded into it starts its
 * own threads. A profiler that initialises a dependency which is not safe
 * beside the dynamic loader (PAPI_library_init did so on the writer thread)
 * corrupts the loader's state here: crashes, "malloc(): invalid size".
 *
 *   dlopen_stress list OUT [MAX]  find the system's shared libraries (the
 *                                 folder of libc, found at run time), keep
 *                                 the ones a forked child can dlopen,
 *                                 dlclose and exit cleanly, write their
 *                                 paths to OUT (at most MAX, default 200)
 *   dlopen_stress keep LIST       dlopen every library of LIST and keep
 *                                 them all loaded until exit; prints how
 *                                 many opened
 *   dlopen_stress run LIST [ROUNDS]  dlopen and dlclose every library of
 *                                 LIST in turn, ROUNDS times (default 3).
 *                                 Some libraries leave pointers into
 *                                 themselves in others that stay loaded
 *                                 (glib's quark table), so this mode may
 *                                 crash whenever a shared dependency stays
 *                                 resident: the test uses `keep`.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LIBS 1024

/* Libraries that replace or instrument the allocator, sanitizer runtimes,
 * the loader and libc themselves: loading them late breaks any program. */
static int denied(const char *name) {
  static const char *const bad[] = {"san",      "malloc", "memusage", "pcprofile", "SegFault",
                                    "mlprof",   "libc.",  "libc-",    "ld-linux",  "libpthread",
                                    "libdl.",   "librt.", "libm.",    "profiler",  "preload",
                                    "libGL",    "libEGL", "libnss_",  "libBrokenLocale"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (strstr(name, bad[i])) return 1;
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Can a child dlopen it, dlclose it and exit normally, quietly? */
static int loads_cleanly(const char *path) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    alarm(10);
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(3);
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h) _exit(1);
    dlclose(h);
    exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {}
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int list(const char *out, int max) {
  Dl_info info;
  if (!dladdr((void *)printf, &info) || !info.dli_fname) return 2;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", info.dli_fname);
  char *slash = strrchr(dir, '/');
  if (!slash) return 2;
  *slash = 0;
  DIR *d = opendir(dir);
  if (!d) return 2;
  char *names[MAX_LIBS];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < MAX_LIBS) {
    if (strncmp(e->d_name, "lib", 3) != 0 || !strstr(e->d_name, ".so.") || denied(e->d_name)) continue;
    char path[PATH_MAX + 256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue; /* one entry per file */
    names[n++] = strdup(path);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  fflush(NULL); /* nothing buffered may be written twice by the children */
  static char keep[MAX_LIBS];
  int kept = 0;
  for (int i = 0; i < n && kept < max; i++)
    if ((keep[i] = (char)loads_cleanly(names[i]))) kept++;
  FILE *f = fopen(out, "w");
  if (!f) return 2;
  for (int i = 0; i < n; i++)
    if (keep[i]) fprintf(f, "%s\n", names[i]);
  fclose(f);
  for (int i = 0; i < n; i++) free(names[i]);
  printf("%d libraries\n", kept);
  return kept > 0 ? 0 : 2;
}

static int run(const char *listfile, int rounds, int keep) {
  FILE *f = fopen(listfile, "r");
  if (!f) return 2;
  static char paths[MAX_LIBS][PATH_MAX];
  int n = 0;
  while (n < MAX_LIBS && fgets(paths[n], sizeof paths[n], f)) {
    paths[n][strcspn(paths[n], "\n")] = 0;
    if (paths[n][0]) n++;
  }
  fclose(f);
  for (int r = 0; r < rounds; r++) {
    int opened = 0;
    for (int i = 0; i < n; i++) {
      void *h = dlopen(paths[i], RTLD_LAZY | RTLD_LOCAL);
      if (!h) continue;
      opened++;
      if (!keep) dlclose(h);
    }
    printf("round %d: %d of %d opened\n", r, opened, n);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "run") == 0) return run(argv[2], argc > 3 ? atoi(argv[3]) : 3, 0);
  if (argc >= 3 && strcmp(argv[1], "keep") == 0) return run(argv[2], 1, 1);
  if (argc >= 3 && strcmp(argv[1], "list") == 0) return list(argv[2], argc > 3 ? atoi(argv[3]) : 200);
  fprintf(stderr, "usage: dlopen_stress list OUT [MAX] | run LIST [ROUNDS]\n");
  return 2;
}
