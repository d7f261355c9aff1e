/* symbols_dw.h — libdw, loaded by the analysis when it first needs it.
 *
 * The library is opened with dlopen, never linked: a profiled program that
 * loads libmlprof does not map libdw (nor libelf and the compression
 * libraries behind it) unless its analysis runs in-process, which only the
 * fallback path does (docs/host-safety.md). symbols.c calls libdw through
 * this table, `DW->name(...)`, after prof__dw() returned it.
 */
#ifndef PROF_SYMBOLS_DW_H
#define PROF_SYMBOLS_DW_H

#ifdef MLPROF_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>

/* Every libdw function symbols.c uses. */
#define PROF_DW_FUNCS(X)                                                                                   \
  X(dwarf_attr) X(dwarf_attr_integrate) X(dwarf_diename) X(dwarf_filesrc) X(dwarf_formref_die)            \
  X(dwarf_formstring) X(dwarf_formudata) X(dwarf_getscopes) X(dwarf_getscopes_die) X(dwarf_getsrcfiles)   \
  X(dwarf_tag) X(dwfl_begin) X(dwfl_build_id_find_elf) X(dwfl_end) X(dwfl_lineinfo) X(dwfl_module_addrdie) \
  X(dwfl_module_getsrc) X(dwfl_module_getsym_info) X(dwfl_module_getsymtab) X(dwfl_offline_section_address) \
  X(dwfl_report_elf) X(dwfl_report_end) X(dwfl_standard_find_debuginfo)

typedef struct prof__dw_api {
#define PROF_DW_FIELD(f) __typeof__(&f) f;
  PROF_DW_FUNCS(PROF_DW_FIELD)
#undef PROF_DW_FIELD
  Dwfl_Callbacks offline; /* libdw's own finders, for one ELF file read offline */
} prof__dw_api;

/* The functions of libdw, loaded on the first call (thread-safe); NULL when
 * the library or one of its functions cannot be found: the analysis then
 * names addresses from the ELF symbol tables alone, as in a build without
 * libdw. */
const prof__dw_api *prof__dw(void);

#endif /* MLPROF_HAVE_LIBDW */
#endif /* PROF_SYMBOLS_DW_H */
