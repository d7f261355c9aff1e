/* symbols_dw.c — opens libdw at run time for symbols.c (symbols_dw.h). */
#include "analyze/sections/stacks/symbols_dw.h"

#ifdef MLPROF_HAVE_LIBDW
#include <dlfcn.h>
#include <pthread.h>

/* The library's name as the loader knows it (its soname since elfutils 0.1xx). */
#define LIBDW_SONAME "libdw.so.1"

/* Looked up once, under pthread_once (once_*: check_structure). */
static prof__dw_api once_dw_api;
static int once_dw_loaded;
static pthread_once_t once_dw_guard = PTHREAD_ONCE_INIT;

static void load(void) {
  void *h = dlopen(LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
#define PROF_DW_LOOKUP(f) \
  if (!(*(void **)&once_dw_api.f = dlsym(h, #f))) return;
  PROF_DW_FUNCS(PROF_DW_LOOKUP)
#undef PROF_DW_LOOKUP
  once_dw_api.offline.find_elf = once_dw_api.dwfl_build_id_find_elf;
  once_dw_api.offline.find_debuginfo = once_dw_api.dwfl_standard_find_debuginfo;
  once_dw_api.offline.section_address = once_dw_api.dwfl_offline_section_address;
  once_dw_loaded = 1; /* the handle stays open for the life of the process */
}

const prof__dw_api *prof__dw(void) {
  pthread_once(&once_dw_guard, load);
  return once_dw_loaded ? &once_dw_api : NULL;
}
#else
typedef int prof__symbols_dw_unused; /* an empty file is not valid C */
#endif
