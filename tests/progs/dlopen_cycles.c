/* dlopen_cycles.c — one process that loads libmlprof.so with dlopen,
 * profiles a few steps and unloads it, K times, with the same
 * MLPROF_OUTPUT: each session must keep a trace of its own.
 *
 * usage: dlopen_cycles LIBMLPROF_SO K
 * Prints "session i: TRACE" for each session; exits 0, or 1 when the
 * profiler would not start.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn_int)(void);

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: dlopen_cycles LIBMLPROF_SO K\n");
    return 2;
  }
  int k = atoi(argv[2]);
  for (int i = 0; i < k; i++) {
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fprintf(stderr, "dlopen_cycles: %s\n", dlerror());
      return 2;
    }
    int (*init)(const void *) = (int (*)(const void *))dlsym(lib, "prof_init");
    fn_int start = (fn_int)dlsym(lib, "prof_start"), stop = (fn_int)dlsym(lib, "prof_stop");
    fn_int shutdown = (fn_int)dlsym(lib, "prof_shutdown");
    const char *(*path)(void) = (const char *(*)(void))dlsym(lib, "prof_trace_path");
    if (!init || !start || !stop || !shutdown || !path || init(NULL) != 0) {
      printf("session %d: the profiler did not start\n", i);
      return 1;
    }
    printf("session %d: %s\n", i, path());
    for (int s = 0; s < 3; s++) {
      start();
      stop();
    }
    shutdown();
    dlclose(lib);
  }
  return 0;
}
