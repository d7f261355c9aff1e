/* symbols.c — address → function, file and line for the analysis.
 *
 * An address is looked up in the most recent recorded module that covers
 * it; the module's file is opened once, its build id checked against the
 * recorded one, and its ELF symbol table (.symtab, else .dynsym) read into
 * a sorted array. Source lines come from DWARF through libdw when the build
 * has it. Results are cached per address for the life of the analysis.
 * Names are not demangled (C++ symbols appear mangled).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef MLPROF_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

#include "analyze/sections/stacks/sec_stacks.h"

typedef struct sym {
  uint64_t addr, size;
  char *name;
} sym;

typedef struct prof__elfsyms {
  sym *v;
  size_t n;
  char *base; /* basename of the module */
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

static int cmp_sym(const void *a, const void *b) {
  const sym *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int in_file(size_t fsz, uint64_t off, uint64_t len) { return off <= fsz && len <= fsz - off; }

static int build_id_matches(const uint8_t *img, size_t fsz, const Elf64_Shdr *sh, int nsh,
                            const prof__an_module *m) {
  if (!m->build_id_len) return 1;
  for (int i = 0; i < nsh; i++) {
    if (sh[i].sh_type != SHT_NOTE || !in_file(fsz, sh[i].sh_offset, sh[i].sh_size)) continue;
    const uint8_t *p = img + sh[i].sh_offset;
    size_t left = sh[i].sh_size;
    while (left >= sizeof(Elf64_Nhdr)) {
      const Elf64_Nhdr *nh = (const Elf64_Nhdr *)p;
      size_t nsz = (nh->n_namesz + 3u) & ~3u, dsz = (nh->n_descsz + 3u) & ~3u;
      if (sizeof *nh + nsz + dsz > left) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(p + sizeof *nh, "GNU", 4) == 0)
        return nh->n_descsz == m->build_id_len && memcmp(p + sizeof *nh + nsz, m->build_id, m->build_id_len) == 0;
      p += sizeof *nh + nsz + dsz;
      left -= sizeof *nh + nsz + dsz;
    }
  }
  return 1; /* the file has no build id: trust the path */
}

static void read_symtab(prof__elfsyms *es, const uint8_t *img, size_t fsz, const Elf64_Shdr *sh, int nsh,
                        unsigned type) {
  for (int i = 0; i < nsh && !es->n; i++) {
    if (sh[i].sh_type != type || sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= (unsigned)nsh) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (!in_file(fsz, sh[i].sh_offset, sh[i].sh_size) || !in_file(fsz, str->sh_offset, str->sh_size)) continue;
    size_t cnt = sh[i].sh_size / sizeof(Elf64_Sym);
    es->v = calloc(cnt ? cnt : 1, sizeof *es->v);
    if (!es->v) return;
    const Elf64_Sym *s = (const Elf64_Sym *)(img + sh[i].sh_offset);
    const char *names = (const char *)img + str->sh_offset;
    for (size_t k = 0; k < cnt; k++) {
      int t = ELF64_ST_TYPE(s[k].st_info);
      if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !s[k].st_value || s[k].st_name >= str->sh_size) continue;
      const char *nm = names + s[k].st_name;
      if (!memchr(nm, 0, str->sh_size - s[k].st_name)) continue;
      es->v[es->n].addr = s[k].st_value;
      es->v[es->n].size = s[k].st_size;
      es->v[es->n].name = strdup(nm);
      if (es->v[es->n].name) es->n++;
    }
    qsort(es->v, es->n, sizeof *es->v, cmp_sym);
  }
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
  size_t fsz;
  int fd = open_module(m->path, &fsz);
  *fd_out = -1;
  if (fd < 0) return -1;
  uint8_t *img = mmap(NULL, fsz, PROT_READ, MAP_PRIVATE, fd, 0);
  if (img == MAP_FAILED) {
    close(fd);
    return -1;
  }
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
  int rc = -1;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr) && in_file(fsz, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    if (build_id_matches(img, fsz, sh, eh->e_shnum, m)) {
      read_symtab(es, img, fsz, sh, eh->e_shnum, SHT_SYMTAB);
      read_symtab(es, img, fsz, sh, eh->e_shnum, SHT_DYNSYM);
      rc = 0;
    }
  }
  munmap(img, fsz);
  if (rc == 0) *fd_out = fd;
  else close(fd);
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

/* Takes ownership of fd (libdwfl closes it with the Dwfl). */
static void open_lines(prof__elfsyms *es, const prof__an_module *m, int fd) {
#ifdef MLPROF_HAVE_LIBDW
  static const Dwfl_Callbacks cb = {
      .find_elf = dwfl_build_id_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = dwfl_offline_section_address,
  };
  es->dwfl = dwfl_begin(&cb);
  if (!es->dwfl) {
    close(fd);
    return;
  }
  es->mod = dwfl_report_elf(es->dwfl, es->base, m->path, fd, 0, false);
  if (!es->mod) close(fd); /* consumed only on success */
  dwfl_report_end(es->dwfl, NULL, NULL);
#else
  (void)es, (void)m;
  close(fd);
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
  m->syms = es;
  m->load_state = 1;
  return es;
}

static void line_of(prof__elfsyms *es, uint64_t rel, prof__frame *f) {
#ifdef MLPROF_HAVE_LIBDW
  if (!es->mod) return;
  Dwfl_Line *ln = dwfl_module_getsrc(es->mod, (Dwarf_Addr)rel);
  int line = 0;
  const char *file = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
  if (file) {
    f->file = strdup(file);
    f->line = line;
  }
#else
  (void)es, (void)rel, (void)f;
#endif
}

/* ---- cache ------------------------------------------------------------------ */

static prof__frame *resolve(prof__stacks_st *s, uintptr_t pc) {
  prof__frame *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->pc = pc;
  prof__an_module *m = s ? module_of(s, pc) : NULL;
  prof__elfsyms *es = m ? syms_of(m) : NULL;
  char buf[64];
  if (m) {
    const char *slash = strrchr(m->path, '/');
    f->module = strdup(slash ? slash + 1 : m->path);
  }
  const sym *sy = es ? find_sym(es, pc - m->bias) : NULL;
  if (sy) {
    f->func = strdup(sy->name);
    line_of(es, pc - m->bias, f);
  } else {
    if (m) snprintf(buf, sizeof buf, "%s+0x%llx", f->module ? f->module : "?", (unsigned long long)(pc - m->bias));
    else snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)pc);
    f->func = strdup(buf);
  }
  if (!f->func) f->func = "?";
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
  static prof__frame oom = {0, "?", NULL, 0, NULL};
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
  prof__frame *f = resolve(s, pc);
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

void prof__symbols_free(prof__stacks_st *s) {
  prof__symcache *c = s->cache;
  if (c) {
    for (size_t i = 0; i < c->cap; i++) {
      prof__frame *f = c->v[i].f;
      if (!f) continue;
      if (f->func && strcmp(f->func, "?") != 0) free((char *)f->func);
      free((char *)f->file);
      free((char *)f->module);
      free(f);
    }
    free(c->v);
    free(c);
  }
  for (size_t i = 0; i < s->nmods; i++) {
    prof__elfsyms *es = s->mods[i].syms;
    if (!es) continue;
    for (size_t k = 0; k < es->n; k++) free(es->v[k].name);
    free(es->v);
    free(es->base);
#ifdef MLPROF_HAVE_LIBDW
    if (es->dwfl) dwfl_end(es->dwfl);
#endif
    free(es);
  }
}
