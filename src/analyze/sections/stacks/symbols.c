/* symbols.c — address → function, file and line for the analysis.
 *
 * An address is looked up in the most recent recorded module that covers
 * it; the module's file is opened once and its build id checked against the
 * recorded one. With libdw, names come from libdw for every module, which
 * also finds the module's separate debug information (by build id under
 * /usr/lib/debug/.build-id/, or by .gnu_debuglink), so libc and libm are
 * named where their debug packages are installed; source lines come from
 * the DWARF line table, and the DWARF scopes at the address give the
 * functions the compiler inlined there, each a frame of its own. Without
 * libdw (or when it finds no symbol; libdw is opened at run time, never
 * linked: symbols_dw.h) the module's own ELF symbol table
 * (.symtab, else .dynsym) is read into a sorted array. C++ and Rust names
 * are demangled (symbols_demangle.c), the linked name is kept beside.
 * Addresses outside every module are looked up in the perf map files JITs
 * write (/tmp/perf-<pid>.map, symbols_perfmap.c), and tagged Python frames
 * in the recorded Python code table (symbols_python.c). Results are cached
 * per address for the life of the analysis.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/sections/stacks/symbols_dw.h"
#include "analyze/sections/stacks/symbols_ehframe.h"

#ifdef MLPROF_HAVE_LIBDW
#define DW prof__dw() /* libdw, opened at run time (symbols_dw.h) */
#endif

typedef struct sym {
  uint64_t addr, size;
  char *name;
  int prio; /* among aliases at one address the highest is shown (global, then shorter names) */
} sym;

typedef struct prof__elfsyms {
  sym *v;
  size_t n;
  uint64_t plt_lo, plt_hi;   /* .plt, .plt.sec and .plt.got: PLT entries, each a jump to a function of another module */
  char **plt_names;          /* by .plt.sec slot (or .plt slot - 1): the function that entry jumps to */
  size_t nplt;
  uint64_t plt_slots, plt_entry0; /* address of slot 0 and whether .plt has a header entry */
  char *base; /* basename of the module */
  prof__fnrange *fns; /* function boundaries from .eh_frame, for code without symbols */
  size_t nfns;
#ifdef MLPROF_HAVE_LIBDW
  Dwfl *dwfl;
  Dwfl_Module *mod;
#endif
} prof__elfsyms;

typedef struct centry {
  uintptr_t pc;
  prof__frame *f;
} centry;

typedef struct prof__symcache {
  centry *v;
  size_t cap, n;
} prof__symcache;

/* ---- ELF ------------------------------------------------------------------ */

/* Ascending by address; at one address the preferred alias sorts last,
 * which is the one find_sym picks. */
static int cmp_sym(const void *a, const void *b) {
  const sym *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  if (x->prio != y->prio) return x->prio < y->prio ? -1 : 1;
  return strcmp(y->name, x->name);
}

/* Global over weak over local, then names without a version, then shorter. */
static int sym_prio(int bind, const char *name) {
  int p = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
  size_t len = strlen(name);
  return p * 1000000 + (strchr(name, '@') ? 0 : 500000) + (len < 500000 ? 500000 - (int)len : 0) / 2;
}

static int in_file(size_t fsz, uint64_t off, uint64_t len) { return off <= fsz && len <= fsz - off; }

/* The module file is read piece by piece (pread into the heap), never
 * mapped: a file truncated while the analysis reads it (a library rewritten
 * in place) would fault a mapping with SIGBUS, where a short read only
 * leaves that piece out. */
typedef struct elf_file {
  int fd;
  size_t size;
} elf_file;

/* [off, off + len) of the file, malloc'd; NULL when it is not all there. */
static void *read_piece(const elf_file *f, uint64_t off, uint64_t len) {
  if (!in_file(f->size, off, len)) return NULL;
  uint8_t *b = malloc(len ? (size_t)len : 1);
  if (!b) return NULL;
  for (size_t got = 0; got < len;) {
    ssize_t r = pread(f->fd, b + got, (size_t)len - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      free(b);
      return NULL;
    }
    got += (size_t)r;
  }
  return b;
}

/* The section's contents, or NULL. */
static void *read_section(const elf_file *f, const Elf64_Shdr *sh) { return read_piece(f, sh->sh_offset, sh->sh_size); }

/* The note section's build id against the recorded one: 1 same, 0 not,
 * -1 the section holds none. */
static int note_build_id(const uint8_t *p, size_t left, const prof__an_module *m) {
  while (left >= sizeof(Elf64_Nhdr)) {
    const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
    size_t nsz = (nh->n_namesz + 3u) & ~3u, dsz = (nh->n_descsz + 3u) & ~3u;
    if (sizeof *nh + nsz + dsz > left) break;
    if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(p + sizeof *nh, "GNU", 4) == 0)
      return nh->n_descsz == m->build_id_len && memcmp(p + sizeof *nh + nsz, m->build_id, m->build_id_len) == 0;
    p += sizeof *nh + nsz + dsz;
    left -= sizeof *nh + nsz + dsz;
  }
  return -1;
}

static int build_id_matches(const elf_file *f, const Elf64_Shdr *sh, int nsh, const prof__an_module *m) {
  if (!m->build_id_len) return 1;
  for (int i = 0; i < nsh; i++) {
    if (sh[i].sh_type != SHT_NOTE) continue;
    uint8_t *p = read_section(f, &sh[i]);
    int same = p ? note_build_id(p, sh[i].sh_size, m) : -1;
    free(p);
    if (same >= 0) return same;
  }
  return 1; /* the file has no build id: trust the path */
}

/* The function symbols of one symbol table (names in `names`, nlen bytes). */
static void add_syms(prof__elfsyms *es, const Elf64_Sym *s, size_t cnt, const char *names, size_t nlen) {
  free(es->v);
  es->n = 0;
  es->v = calloc(cnt ? cnt : 1, sizeof *es->v);
  if (!es->v) return;
  for (size_t k = 0; k < cnt; k++) {
    int t = ELF64_ST_TYPE(s[k].st_info);
    if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !s[k].st_value || s[k].st_name >= nlen) continue;
    const char *nm = names + s[k].st_name;
    if (!memchr(nm, 0, nlen - s[k].st_name)) continue;
    es->v[es->n].addr = s[k].st_value;
    es->v[es->n].size = s[k].st_size;
    es->v[es->n].name = strdup(nm);
    es->v[es->n].prio = sym_prio(ELF64_ST_BIND(s[k].st_info), nm);
    if (es->v[es->n].name) es->n++;
  }
  qsort(es->v, es->n, sizeof *es->v, cmp_sym);
}

static void read_symtab(prof__elfsyms *es, const elf_file *f, const Elf64_Shdr *sh, int nsh, unsigned type) {
  for (int i = 0; i < nsh && !es->n; i++) {
    if (sh[i].sh_type != type || sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= (unsigned)nsh) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    Elf64_Sym *s = read_section(f, &sh[i]);
    char *names = s ? read_section(f, str) : NULL;
    if (names) add_syms(es, s, sh[i].sh_size / sizeof(Elf64_Sym), names, str->sh_size);
    free(s);
    free(names);
  }
}

/* The function each PLT slot jumps to: .rela.plt against .dynsym. */
static void plt_targets(prof__elfsyms *es, const elf_file *f, const Elf64_Shdr *rela, const Elf64_Shdr *dsym,
                        const Elf64_Shdr *dstr) {
  Elf64_Rela *r = read_section(f, rela);
  Elf64_Sym *ds = r ? read_section(f, dsym) : NULL;
  char *dnames = ds ? read_section(f, dstr) : NULL;
  size_t n = rela->sh_size / sizeof(Elf64_Rela), nsym = dsym->sh_size / sizeof(Elf64_Sym);
  es->plt_names = dnames ? calloc(n ? n : 1, sizeof *es->plt_names) : NULL;
  for (size_t k = 0; es->plt_names && k < n; k++) {
    size_t si = ELF64_R_SYM(r[k].r_info);
    if (!si || si >= nsym || ds[si].st_name >= dstr->sh_size) continue;
    const char *nm = dnames + ds[si].st_name;
    if (memchr(nm, 0, dstr->sh_size - ds[si].st_name)) es->plt_names[k] = strdup(nm);
  }
  if (es->plt_names) es->nplt = n;
  free(r);
  free(ds);
  free(dnames);
}

/* .eh_frame larger than this is not read (the largest libraries have tens of MiB) */
#define EH_FRAME_MAX (256u << 20)

/* The function boundaries of .eh_frame, which a stripped file keeps. */
static void read_ehframe(prof__elfsyms *es, const elf_file *f, const Elf64_Shdr *sh, int nsh, const char *names,
                         size_t nlen) {
  for (int i = 0; i < nsh; i++) {
    if (sh[i].sh_type != SHT_PROGBITS || sh[i].sh_name >= nlen || sh[i].sh_size > EH_FRAME_MAX ||
        !memchr(names + sh[i].sh_name, 0, nlen - sh[i].sh_name) || strcmp(names + sh[i].sh_name, ".eh_frame") != 0)
      continue;
    uint8_t *p = read_section(f, &sh[i]);
    if (p) es->fns = prof__ehframe_ranges(p, sh[i].sh_size, sh[i].sh_addr, &es->nfns);
    free(p);
    return;
  }
}

/* The PLT sections and the functions their entries jump to. */
static void read_plt(prof__elfsyms *es, const elf_file *f, const Elf64_Ehdr *eh, const Elf64_Shdr *sh) {
  int nsh = eh->e_shnum;
  if (eh->e_shstrndx >= nsh) return;
  char *names = read_section(f, &sh[eh->e_shstrndx]);
  if (!names) return;
  size_t nlen = sh[eh->e_shstrndx].sh_size;
  const Elf64_Shdr *plt = NULL, *sec = NULL, *rela = NULL;
  es->plt_lo = UINT64_MAX;
  for (int i = 0; i < nsh; i++) {
    if (sh[i].sh_name >= nlen || !memchr(names + sh[i].sh_name, 0, nlen - sh[i].sh_name)) continue;
    const char *nm = names + sh[i].sh_name;
    if (strcmp(nm, ".plt") == 0) plt = &sh[i];
    else if (strcmp(nm, ".plt.sec") == 0) sec = &sh[i];
    else if (strcmp(nm, ".rela.plt") == 0) rela = &sh[i];
    else if (strcmp(nm, ".plt.got") != 0) continue;
    if (strncmp(nm, ".plt", 4) != 0) continue;
    if (sh[i].sh_addr < es->plt_lo) es->plt_lo = sh[i].sh_addr;
    if (sh[i].sh_addr + sh[i].sh_size > es->plt_hi) es->plt_hi = sh[i].sh_addr + sh[i].sh_size;
  }
  if (es->plt_lo == UINT64_MAX) es->plt_lo = 0;
  read_ehframe(es, f, sh, nsh, names, nlen);
  free(names);
  const Elf64_Shdr *slots = sec ? sec : plt;
  if (!slots || !rela || rela->sh_entsize != sizeof(Elf64_Rela) || rela->sh_link >= (unsigned)nsh) return;
  const Elf64_Shdr *dsym = &sh[rela->sh_link], *dstr = dsym->sh_link < (unsigned)nsh ? &sh[dsym->sh_link] : NULL;
  if (!dstr || dsym->sh_entsize != sizeof(Elf64_Sym)) return;
  plt_targets(es, f, rela, dsym, dstr);
  es->plt_slots = slots->sh_addr;
  es->plt_entry0 = slots == plt; /* .plt starts with the resolver's entry */
}

/* "target@plt" for an address in a PLT entry, NULL elsewhere (malloc'd). */
static char *plt_name(const prof__elfsyms *es, uint64_t a) {
  if (!es->plt_hi || a < es->plt_lo || a >= es->plt_hi) return NULL;
  char *out = NULL;
  if (es->plt_names && a >= es->plt_slots) {
    uint64_t slot = (a - es->plt_slots) / 16;
    if (es->plt_entry0) slot = slot ? slot - 1 : UINT64_MAX;
    if (slot < es->nplt && es->plt_names[slot] && asprintf(&out, "%s@plt", es->plt_names[slot]) < 0) out = NULL;
  }
  return out ? out : strdup("[plt]");
}

/* Open a module path named by the trace: only a regular file, and never
 * wait (a FIFO or device named by a crafted trace would block the open or
 * the read forever). Returns the fd and its size, or -1. */
static int open_module(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
    close(fd);
    return -1;
  }
  *size = (size_t)st.st_size;
  return fd;
}

/* Read the symbols of m's file; *fd_out keeps the file open for the line
 * table (the same file that was checked, not the path opened again). */
static int load_elf(prof__elfsyms *es, const prof__an_module *m, int *fd_out) {
  elf_file f;
  f.fd = open_module(m->path, &f.size);
  *fd_out = -1;
  if (f.fd < 0) return -1;
  Elf64_Ehdr *eh = read_piece(&f, 0, sizeof *eh);
  Elf64_Shdr *sh = NULL;
  int rc = -1;
  if (eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr))
    sh = read_piece(&f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
  if (sh && build_id_matches(&f, sh, eh->e_shnum, m)) {
    read_symtab(es, &f, sh, eh->e_shnum, SHT_SYMTAB);
    read_symtab(es, &f, sh, eh->e_shnum, SHT_DYNSYM);
    read_plt(es, &f, eh, sh);
    rc = 0;
  }
  free(eh);
  free(sh);
  if (rc == 0) *fd_out = f.fd;
  else close(f.fd);
  return rc;
}

static const sym *find_sym(const prof__elfsyms *es, uint64_t a) {
  size_t lo = 0, hi = es->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (es->v[mid].addr <= a) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return NULL;
  const sym *s = &es->v[lo - 1];
  /* a sized symbol must cover the address; an unsized one (asm) is taken */
  if (s->size && a >= s->addr + s->size) {
    for (size_t k = lo - 1; k-- > 0 && lo - k < 8;) /* overlapping aliases */
      if (es->v[k].size && a < es->v[k].addr + es->v[k].size) return &es->v[k];
    return NULL;
  }
  return s;
}

/* ---- modules ---------------------------------------------------------------- */

static prof__an_module *module_of(prof__stacks_st *s, uintptr_t pc) {
  for (size_t i = s->nmods; i-- > 0;)
    if (pc >= s->mods[i].start && pc - s->mods[i].start < s->mods[i].size) return &s->mods[i];
  return NULL;
}

/* Takes ownership of fd (libdwfl closes it with the Dwfl). libelf maps
 * the file (and any separate debug file) for libdw, which mlprof cannot
 * change: a module file truncated while libdw reads it can still fault
 * there. That takes a library rewritten in place (not replaced by a rename,
 * as installers do) during the analysis, which in a program that still has
 * it loaded faults the program's own code first. */
static void open_lines(prof__elfsyms *es, const prof__an_module *m, int fd) {
#ifdef MLPROF_HAVE_LIBDW
  const prof__dw_api *dw = DW;
  if (!dw) {
    close(fd);
    return;
  }
  es->dwfl = dw->dwfl_begin(&dw->offline);
  if (!es->dwfl) {
    close(fd);
    return;
  }
  es->mod = DW->dwfl_report_elf(es->dwfl, es->base, m->path, fd, 0, false);
  if (!es->mod) close(fd); /* consumed only on success */
  DW->dwfl_report_end(es->dwfl, NULL, NULL);
#else
  (void)es, (void)m;
  close(fd);
#endif
}

/* The function symbols libdw knows for the module (its .symtab, or the
 * one of its separate debug file, else .dynsym) replace the ELF reader's
 * when there are any: looked up by binary search (libdw's own address
 * lookup scans every symbol). */
static void dw_symbols(prof__elfsyms *es) {
#ifdef MLPROF_HAVE_LIBDW
  if (!es->mod) return;
  int n = DW->dwfl_module_getsymtab(es->mod);
  if (n <= 1) return;
  sym *v = calloc((size_t)n, sizeof *v);
  if (!v) return;
  size_t k = 0;
  for (int i = 1; i < n; i++) {
    GElf_Sym gs;
    GElf_Addr addr = 0;
    const char *nm = DW->dwfl_module_getsym_info(es->mod, i, &gs, &addr, NULL, NULL, NULL);
    int t = GELF_ST_TYPE(gs.st_info);
    if (!nm || !*nm || (t != STT_FUNC && t != STT_GNU_IFUNC) || !addr) continue;
    v[k].name = strdup(nm);
    if (!v[k].name) continue;
    v[k].addr = addr;
    v[k].size = gs.st_size;
    v[k].prio = sym_prio(GELF_ST_BIND(gs.st_info), nm);
    k++;
  }
  if (!k) {
    free(v);
    return;
  }
  qsort(v, k, sizeof *v, cmp_sym);
  for (size_t i = 0; i < es->n; i++) free(es->v[i].name);
  free(es->v);
  es->v = v;
  es->n = k;
#else
  (void)es;
#endif
}

static prof__elfsyms *syms_of(prof__an_module *m) {
  if (m->load_state) return m->load_state > 0 ? m->syms : NULL;
  m->load_state = -1;
  prof__elfsyms *es = calloc(1, sizeof *es);
  if (!es) return NULL;
  const char *slash = strrchr(m->path, '/');
  es->base = strdup(slash ? slash + 1 : m->path);
  int fd = -1;
  if (!es->base || load_elf(es, m, &fd) != 0) {
    free(es->base);
    free(es->v);
    free(es);
    return NULL;
  }
  open_lines(es, m, fd);
  dw_symbols(es);
  m->syms = es;
  m->load_state = 1;
  return es;
}

static void line_of(prof__elfsyms *es, uint64_t rel, prof__frame *f) {
#ifdef MLPROF_HAVE_LIBDW
  if (!es->mod) return;
  Dwfl_Line *ln = DW->dwfl_module_getsrc(es->mod, (Dwarf_Addr)rel);
  int line = 0;
  const char *file = ln ? DW->dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
  if (file) {
    f->file = strdup(file);
    f->line = line;
  }
#else
  (void)es, (void)rel, (void)f;
#endif
}

/* func = demangled name (mangled kept) or the name itself, without the
 * symbol version a symbol table may carry ("exp@@GLIBC_2.29"). */
static void set_name(prof__frame *f, const char *name) {
  char *d = prof__demangle(name);
  if (d) {
    f->func = d;
    f->mangled = strdup(name);
    return;
  }
  const char *at = name[0] ? strchr(name + 1, '@') : NULL;
  f->func = at ? strndup(name, (size_t)(at - name)) : strdup(name);
}

#ifdef MLPROF_HAVE_LIBDW
static const char *die_string(Dwarf_Die *die, int at) {
  Dwarf_Attribute a;
  return DW->dwarf_formstring(DW->dwarf_attr_integrate(die, at, &a));
}

/* "ns::Class::name" of a function DIE without a linkage name (a static or
 * C function): its declaration's enclosing namespaces, classes, structs. */
static char *qualified_name(Dwarf_Die *die) {
  Dwarf_Die d = *die, next;
  Dwarf_Attribute a;
  for (int i = 0; i < 4; i++) {
    if (!DW->dwarf_attr(&d, DW_AT_abstract_origin, &a) && !DW->dwarf_attr(&d, DW_AT_specification, &a)) break;
    if (!DW->dwarf_formref_die(&a, &next)) break;
    d = next;
  }
  const char *name = DW->dwarf_diename(&d);
  if (!name) return NULL;
  Dwarf_Die *sc = NULL;
  int n = DW->dwarf_getscopes_die(&d, &sc);
  char buf[512];
  size_t len = 0;
  buf[0] = 0;
  for (int k = n - 1; k >= 1; k--) {
    int tag = DW->dwarf_tag(&sc[k]);
    const char *part = DW->dwarf_diename(&sc[k]);
    if (!part || (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
                  tag != DW_TAG_union_type))
      continue;
    int w = snprintf(buf + len, sizeof buf - len, "%s::", part);
    if (w < 0 || (size_t)w >= sizeof buf - len) break;
    len += (size_t)w;
  }
  free(sc);
  snprintf(buf + len, sizeof buf - len, "%s", name);
  return strdup(buf);
}

/* The scopes at rel, innermost first, as nested in the code: every
 * inlined instance up to the function they were all inlined into, then
 * the compilation unit (malloc'd; the count, <= 0 when none).
 * dwarf_getscopes follows an inlined instance to its abstract definition,
 * so past the innermost instance it lists the inlined function's own
 * declaration scopes, not the instances around it; the DIE tree of the
 * innermost scope (dwarf_getscopes_die, as eu-addr2line -i walks it) has
 * them all. */
static int scopes_at(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **out) {
  Dwarf_Die *first = NULL;
  int n = DW->dwarf_getscopes(cu, addr, &first);
  *out = first;
  if (n <= 0) return n;
  Dwarf_Die inner = first[0], *chain = NULL;
  int m = DW->dwarf_getscopes_die(&inner, &chain);
  if (m <= 0) return n;
  free(first);
  *out = chain;
  return m;
}

/* The inlined functions at rel, innermost first, as frames of their own:
 * the innermost gets the address's line, each outer one the call site of
 * the one inside it, and f (the function the code was inlined into) the
 * call site of the outermost. */
static void inline_of(prof__elfsyms *es, uint64_t rel, prof__frame *f) {
  if (!es->mod) return;
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = DW->dwfl_module_addrdie(es->mod, (Dwarf_Addr)rel, &bias);
  if (!cu) return;
  Dwarf_Die *scopes = NULL;
  int n = scopes_at(cu, (Dwarf_Addr)rel - bias, &scopes);
  int count = 0;
  for (int i = 0; i < n && DW->dwarf_tag(&scopes[i]) != DW_TAG_subprogram; i++)
    count += DW->dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
  prof__frame *inl = count ? calloc((size_t)count, sizeof *inl) : NULL;
  if (!inl) {
    free(scopes);
    return;
  }
  Dwarf_Files *files = NULL;
  size_t nfiles = 0;
  if (DW->dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
  const char *file = f->file; /* owned by whichever frame ends up with it */
  int line = f->line, k = 0;
  for (int i = 0; i < n && k < count; i++) {
    if (DW->dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    prof__frame *x = &inl[k++];
    const char *nm = die_string(&scopes[i], DW_AT_linkage_name);
    if (!nm) nm = die_string(&scopes[i], DW_AT_MIPS_linkage_name);
    char *q = nm ? NULL : qualified_name(&scopes[i]);
    set_name(x, nm ? nm : q ? q : "?");
    free(q);
    x->pc = f->pc;
    x->file = file;
    x->line = line;
    x->module = f->module ? strdup(f->module) : NULL;
    x->inlined = 1;
    Dwarf_Attribute a;
    Dwarf_Word cl = 0, cf = 0;
    file = NULL;
    line = 0;
    if (DW->dwarf_formudata(DW->dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0) line = (int)cl;
    if (files && DW->dwarf_formudata(DW->dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 && cf < nfiles) {
      const char *fn = DW->dwarf_filesrc(files, cf, NULL, NULL);
      file = fn ? strdup(fn) : NULL;
    }
  }
  f->file = file;
  f->line = line;
  f->inl = inl;
  f->ninl = k;
  free(scopes);
}
#endif

static void make_label(prof__frame *f) {
  char *l = NULL;
  if (f->python) {
    const char *base = f->file ? strrchr(f->file, '/') : NULL;
    base = base ? base + 1 : f->file ? f->file : "?";
    if (asprintf(&l, "%s:%d %s", base, f->line, f->func) < 0) l = NULL;
  } else if (f->inlined) {
    if (asprintf(&l, "%s [inlined]", f->func) < 0) l = NULL;
  }
  f->label = l ? l : f->func;
}

/* Code of a module without a symbol there: named after the start of the
 * function that .eh_frame says covers it, so its addresses count as one
 * function; after the address itself when no FDE covers it. */
static void unnamed_function(prof__elfsyms *es, uint64_t rel, prof__frame *f) {
  const prof__fnrange *r = es->fns ? prof__fnrange_find(es->fns, es->nfns, rel) : NULL;
  char buf[64];
  snprintf(buf, sizeof buf, "%s+0x%llx", es->base, (unsigned long long)(r ? r->start : rel));
  f->func = strdup(buf);
  f->nosym = 1;
  line_of(es, rel, f);
}

/* ---- cache ------------------------------------------------------------------ */

static prof__frame *resolve(prof__an *an, prof__stacks_st *s, uintptr_t pc) {
  prof__frame *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->pc = pc;
  if (prof__pc_is_python(pc)) {
    prof__symbols_python(s, pc, f);
    make_label(f);
    return f;
  }
  prof__an_module *m = s ? module_of(s, pc) : NULL;
  prof__elfsyms *es = m ? syms_of(m) : NULL;
  char buf[64];
  if (m) {
    const char *slash = strrchr(m->path, '/');
    f->module = strdup(slash ? slash + 1 : m->path);
  }
  char *plt = es ? plt_name(es, pc - m->bias) : NULL;
  const char *name = plt;
  if (!name && es) {
    const sym *sy = find_sym(es, pc - m->bias);
    name = sy ? sy->name : NULL;
  }
  if (plt) {
    f->func = plt;
  } else if (name) {
    set_name(f, name);
    line_of(es, pc - m->bias, f);
#ifdef MLPROF_HAVE_LIBDW
    inline_of(es, pc - m->bias, f);
#endif
  } else if (!m && prof__symbols_perfmap(an, s, pc, f) == 0) {
    /* named by a JIT's perf map */
  } else if (es) {
    unnamed_function(es, pc - m->bias, f);
  } else {
    if (m) snprintf(buf, sizeof buf, "%s+0x%llx", f->module ? f->module : "?", (unsigned long long)(pc - m->bias));
    else snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)pc);
    f->func = strdup(buf);
  }
  if (!f->func) f->func = strdup("?");
  make_label(f);
  for (int k = 0; k < f->ninl; k++) make_label((prof__frame *)&f->inl[k]);
  return f;
}

static size_t slot_of(uintptr_t pc, size_t cap) { return (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1); }

static int cache_grow(prof__symcache *c) {
  size_t cap = c->cap ? c->cap * 2 : 1024;
  centry *v = calloc(cap, sizeof *v);
  if (!v) return -1;
  for (size_t i = 0; i < c->cap; i++) {
    if (!c->v[i].f) continue;
    size_t k = slot_of(c->v[i].pc, cap);
    while (v[k].f) k = (k + 1) & (cap - 1);
    v[k] = c->v[i];
  }
  free(c->v);
  c->v = v;
  c->cap = cap;
  return 0;
}

const prof__frame *prof__an_frame(prof__an *an, uintptr_t pc) {
  static prof__frame oom = {.func = "?", .label = "?"};
  prof__stacks_st *s = an ? prof__an_section(an, "stacks") : NULL;
  if (!s) return &oom;
  if (!s->cache && !(s->cache = calloc(1, sizeof *s->cache))) return &oom;
  prof__symcache *c = s->cache;
  if ((c->n + 1) * 2 > c->cap && cache_grow(c) != 0) return &oom;
  size_t k = slot_of(pc, c->cap);
  while (c->v[k].f) {
    if (c->v[k].pc == pc) return c->v[k].f;
    k = (k + 1) & (c->cap - 1);
  }
  prof__frame *f = resolve(an, s, pc);
  if (!f) return &oom;
  c->v[k].pc = pc;
  c->v[k].f = f;
  c->n++;
  return f;
}

int prof__an_frame_is_profiler(const prof__frame *f) {
  if (!f || !f->func) return 0;
  if (strncmp(f->func, "prof_", 5) == 0 || strncmp(f->func, "_ULx86", 6) == 0 ||
      strncmp(f->func, "unw_", 4) == 0 || strcmp(f->func, "__restore_rt") == 0)
    return 1;
  return f->module && strncmp(f->module, "libmlprof", 9) == 0;
}

static void free_strings(prof__frame *f) {
  if (f->label != f->func) free((char *)f->label);
  free((char *)f->func);
  free((char *)f->mangled);
  free((char *)f->file);
  free((char *)f->module);
}

void prof__symbols_free(prof__stacks_st *s) {
  prof__symcache *c = s->cache;
  if (c) {
    for (size_t i = 0; i < c->cap; i++) {
      prof__frame *f = c->v[i].f;
      if (!f) continue;
      for (int k = 0; k < f->ninl; k++) free_strings((prof__frame *)&f->inl[k]);
      free((void *)f->inl);
      free_strings(f);
      free(f);
    }
    free(c->v);
    free(c);
  }
  prof__symbols_extra_free(s);
  for (size_t i = 0; i < s->nmods; i++) {
    prof__elfsyms *es = s->mods[i].syms;
    if (!es) continue;
    for (size_t k = 0; k < es->n; k++) free(es->v[k].name);
    free(es->v);
    for (size_t k = 0; k < es->nplt; k++) free(es->plt_names[k]);
    free(es->plt_names);
    free(es->base);
    free(es->fns);
#ifdef MLPROF_HAVE_LIBDW
    if (es->dwfl) DW->dwfl_end(es->dwfl);
#endif
    free(es);
  }
}

const prof__frame prof__profiler_frame = {.func = "[mlprof]", .label = "[mlprof]", .module = "libmlprof"};

int prof__an_stack_frames(prof__an *an, uint32_t id, const prof__frame **out, int max, int keep_profiler_leaf) {
  const uintptr_t *pcs;
  int d = prof__an_stack(an, id, &pcs), n = 0, leaf = 1;
  for (int i = 0; i < d && n < max; i++) {
    uintptr_t pc = pcs[i];
    const prof__frame *f = prof__an_frame(an, i && !prof__pc_is_python(pc) ? pc - 1 : pc);
    if (prof__an_frame_is_profiler(f)) {
      if (leaf && keep_profiler_leaf && n == 0) out[n++] = &prof__profiler_frame;
      continue;
    }
    leaf = 0;
    for (int k = 0; k < f->ninl && n < max; k++) out[n++] = &f->inl[k];
    if (n < max) out[n++] = f;
  }
  return n;
}
