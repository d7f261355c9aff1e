/* symbols_dw.c — opens libdw at run time for symbols.c (symbols_dw.h). */
#include "analyze/sections/stacks/symbols_dw.h"

#ifdef MLPROF_HAVE_LIBDW
#include <dlfcn.h>
#include <pthread.h>

/* The library's name as the loader knows it (its soname since elfutils 0.1xx). */
#define LIBDW_SONAME "libdw.so.1"

static prof__dw_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *h = dlopen(LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
#define PROF_DW_LOOKUP(f) \
  if (!(*(void **)&api.f = dlsym(h, #f))) return;
  PROF_DW_FUNCS(PROF_DW_LOOKUP)
#undef PROF_DW_LOOKUP
  api.offline.find_elf = api.dwfl_build_id_find_elf;
  api.offline.find_debuginfo = api.dwfl_standard_find_debuginfo;
  api.offline.section_address = api.dwfl_offline_section_address;
  loaded = 1; /* the handle stays open for the life of the process */
}

const prof__dw_api *prof__dw(void) {
  pthread_once(&once, load);
  return loaded ? &api : NULL;
}
#else
typedef int prof__symbols_dw_unused; /* an empty file is not valid C */
#endif
