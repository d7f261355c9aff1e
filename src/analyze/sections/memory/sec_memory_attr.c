/* sec_memory_attr.c — what an allocation is attributed to, for the
 * "memory" section: the first frame of its stack that is not allocator
 * code (malloc and operator new wrappers, c10::alloc_cpu, at::detail::
 * empty_*, CPython's object allocator), the Python line (the innermost frame
 * of the user's code, else the innermost Python frame), the PyTorch
 * operator (the innermost one that is not an allocation operator such as
 * aten::empty), and why a block still live at exit is retained rather than
 * leaked. Also the section's parts built on them: the retained blocks, and
 * the live bytes at the heap peak by range (module) and by operator.
 *
 * Retained (docs/memory.md): blocks made while a shared library was
 * initialised (static constructors, _dl_init, dlopen) or a Python module
 * imported (importlib's frames, PyInit_*), before the first step of a
 * program that marks steps (its set-up), or by the Python interpreter,
 * which does not free every object at exit by design. */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/op_names.h"
#include "analyze/sections/memory/sec_memory.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/fmt.h"
#include "analyze/util/shortname.h"
#include "analyze/util/termsafe.h"

#define ATTR_FRAMES 64  /* frames looked at */
#define LINE_CALLERS 2  /* callers shown after the first meaningful frame */
#define TOP_GROUPS 20   /* rows of the by-range / by-operator / retained lists */
#define TEXT_ROWS 5

/* ---- frames ------------------------------------------------------------------ */

/* Allocator code: the allocation functions and their wrappers. */
static const char *const alloc_prefixes[] = {
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign", "valloc",
    "pvalloc", "__libc_", "_int_malloc", "_int_realloc", "_int_memalign", "tcache_", "sysmalloc", "operator new",
    "__gnu_cxx::new_allocator", "std::__new_allocator", "std::allocator", "std::allocator_traits",
    "c10::alloc_cpu", "c10::DefaultCPUAllocator", "c10::(anonymous namespace)::", "c10::Allocator",
    "c10::StorageImpl", "c10::make_intrusive", "c10::intrusive_ptr", "c10::TensorImpl::TensorImpl",
    "at::detail::empty", "at::empty", "at::native::empty", "at::TensorBase::TensorBase", "at::_ops::empty",
    "at::meta::", "at::TensorIteratorBase::", "at::TensorIterator::", "at::(anonymous namespace)::", "at::impl::",
    "at::native::resize_",
    "PyMem_", "_PyMem_", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "_PyObject_Malloc",
    "_PyObject_Calloc", "_PyObject_Realloc", "_PyObject_GC_", "PyObject_GC_", "_PyObject_New", "PyType_GenericAlloc",
    "_PyType_AllocNoTrack",
};

static int starts(const char *s, const char *p) { return s && strncmp(s, p, strlen(p)) == 0; }

static int alloc_internal(const prof__frame *f) {
  if (f->python || !f->func) return 0;
  for (size_t i = 0; i < sizeof alloc_prefixes / sizeof *alloc_prefixes; i++)
    if (starts(f->func, alloc_prefixes[i])) return 1;
  return 0;
}

/* A frame without a symbol ("libc10.so+0x1b1e2", "0x7f...", "<python>"). */
static int unnamed(const prof__frame *f) {
  if (f->python) return !f->file; /* a code object freed before it was resolved */
  return (!f->func || starts(f->func, "0x") || (strstr(f->func, ".so") && strstr(f->func, "+0x")) ||
                        (f->module && starts(f->func, f->module)));
}

/* Initialisation of a shared library or a Python module. */
static int init_kind(const prof__frame *f) {
  const char *n = f->func ? f->func : "";
  if (f->python)
    return f->file && starts(f->file, "<frozen importlib") ? MEM_KEPT_PYTHON_IMPORT : MEM_KEPT_NO;
  if (starts(n, "PyInit_") || starts(n, "PyImport_") || starts(n, "_PyImport_")) return MEM_KEPT_PYTHON_IMPORT;
  if (starts(n, "_dl_init") || starts(n, "call_init") || starts(n, "dl_open_worker") || starts(n, "_GLOBAL__sub_I_") ||
      starts(n, "global constructors keyed to") || starts(f->mangled, "_GLOBAL__sub_I_") ||
      starts(n, "__libc_csu_init") || strstr(n, "__static_initialization_and_destruction"))
    return MEM_KEPT_LIBRARY_INIT;
  return MEM_KEPT_NO;
}

static int interpreter_module(const prof__frame *f) {
  return f && f->module && (starts(f->module, "python3") || starts(f->module, "libpython"));
}

void prof__sec_mem_attr(prof__an *an, uint32_t stack, mem_attr *a) {
  memset(a, 0, sizeof *a);
  const prof__frame *fr[ATTR_FRAMES];
  int d = stack ? prof__an_stack_frames(an, stack, fr, ATTR_FRAMES, 0) : 0;
  const prof__frame *raw = NULL, *py_any = NULL;
  int got_op = 0;
  for (int i = 0; i < d; i++) {
    const prof__frame *f = fr[i];
    int internal = alloc_internal(f);
    if (!internal && !raw) raw = f;
    if (!internal && !a->frame && !unnamed(f)) a->frame = f;
    if (f->python && f->file) { /* (a code object freed before it was resolved has no file) */
      if (!py_any) py_any = f;
      if (!a->py && prof__py_user_file(f->file)) a->py = f;
    } else if (!got_op) {
      char op[sizeof a->op];
      int k = prof__op_classify(f->func, op, sizeof op);
      if ((k == PROF_OP_ATEN || k == PROF_OP_AUTOGRAD) && !starts(op, "aten::empty") && !starts(op, "aten::new_empty")) {
        memcpy(a->op, op, sizeof op);
        got_op = 1;
      }
    }
    if (!a->kept) a->kept = init_kind(f);
  }
  if (!a->py) a->py = py_any;
  if (!a->frame) a->frame = raw ? raw : d ? fr[0] : NULL;
  if (!a->kept && interpreter_module(raw) && !a->op[0]) a->kept = MEM_KEPT_INTERPRETER;
}

const char *prof__sec_mem_kept_name(int why) {
  switch (why) {
  case MEM_KEPT_LIBRARY_INIT: return "library_init";
  case MEM_KEPT_PYTHON_IMPORT: return "python_import";
  case MEM_KEPT_STARTUP: return "startup";
  case MEM_KEPT_INTERPRETER: return "interpreter";
  default: return "none";
  }
}

static const char *base_name(const char *file) {
  const char *b = file ? strrchr(file, '/') : NULL;
  return b ? b + 1 : file ? file : "?";
}

static const char *frame_name(const prof__frame *f) { return f->func ? f->func : "?"; }

/* ---- one site ------------------------------------------------------------------ */

void prof__sec_mem_site_line(prof__an *an, uint32_t stack, char *buf, size_t len) {
  buf[0] = 0;
  mem_attr a;
  prof__sec_mem_attr(an, stack, &a);
  if (!a.frame) {
    snprintf(buf, len, "(no stack)");
    return;
  }
  const prof__frame *fr[ATTR_FRAMES];
  int d = prof__an_stack_frames(an, stack, fr, ATTR_FRAMES, 0), at = 0, shown = 0;
  while (at < d && fr[at] != a.frame) at++;
  size_t off = 0;
  char sh[256];
  for (int i = at; i < d && shown <= LINE_CALLERS && off < len; i++) {
    if (i > at && unnamed(fr[i])) continue; /* a caller without a name says nothing */
    const prof__frame *f = fr[i];
    if (f->python) snprintf(sh, sizeof sh, "%s (%s:%d)", frame_name(f), base_name(f->file), f->line);
    else prof__short_name(frame_name(f), sh, sizeof sh);
    int w = snprintf(buf + off, len - off, "%s%s", shown ? " < " : "", sh);
    if (w < 0) break;
    off += (size_t)w;
    shown++;
  }
  char tag[320] = "";
  if (a.op[0] && a.py) snprintf(tag, sizeof tag, "  [%s, %s:%d]", a.op, base_name(a.py->file), a.py->line);
  else if (a.op[0]) snprintf(tag, sizeof tag, "  [%s]", a.op);
  else if (a.py) snprintf(tag, sizeof tag, "  [%s:%d]", base_name(a.py->file), a.py->line);
  if (off < len) snprintf(buf + off, len - off, "%s", tag);
}

void prof__sec_mem_attr_json(prof__an *an, prof__json *j, uint32_t stack) {
  mem_attr a;
  prof__sec_mem_attr(an, stack, &a);
  if (a.frame) prof__json_kstr(j, "frame", frame_name(a.frame));
  if (a.op[0]) prof__json_kstr(j, "operator", a.op);
  if (a.py) {
    prof__json_key(j, "python");
    prof__json_obj_begin(j);
    prof__json_kstr(j, "file", a.py->file ? a.py->file : "?");
    prof__json_kint(j, "line", a.py->line);
    prof__json_kstr(j, "function", frame_name(a.py));
    prof__json_obj_end(j);
  }
}

/* ---- groups: live bytes at the peak by range and by operator -------------------- */

typedef struct group {
  char name[160];
  double bytes;
} group;

static int by_bytes(const void *x, const void *y) {
  const group *a = x, *b = y;
  return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : strcmp(a->name, b->name);
}

static void group_add(group *g, size_t *n, size_t cap, const char *name, double bytes) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(g[i].name, name) == 0) {
      g[i].bytes += bytes;
      return;
    }
  if (*n == cap) return;
  snprintf(g[*n].name, sizeof g[*n].name, "%s", name);
  g[(*n)++].bytes = bytes;
}

/* Live heap bytes at the peak by the range that allocated them (*n rows;
 * malloc'd, sorted); NULL without ranges. */
static group *peak_by_range(prof__an *an, const mem_state *s, size_t *n) {
  *n = 0;
  if (!s->nranges) return NULL;
  group *g = calloc(s->nranges + 1, sizeof *g);
  for (size_t i = 0; g && i < s->nranges; i++)
    if (s->ranges[i].at_peak > 0) group_add(g, n, s->nranges + 1, prof__an_str(an, s->ranges[i].name), s->ranges[i].at_peak);
  if (g && s->norange_at_peak > 0) group_add(g, n, s->nranges + 1, "(outside every range)", s->norange_at_peak);
  if (g) qsort(g, *n, sizeof *g, by_bytes);
  return g;
}

/* Live heap bytes at the peak by the operator that allocated them; NULL
 * when no site is under an operator. */
static group *peak_by_operator(prof__an *an, const mem_state *s, size_t *n) {
  *n = 0;
  size_t cap = 256;
  group *g = calloc(cap, sizeof *g);
  int any = 0;
  for (size_t i = 0; g && i < s->nsites; i++) {
    if (!(s->sites[i].at_peak > 0)) continue;
    mem_attr a;
    prof__sec_mem_attr(an, s->sites[i].stack, &a);
    any |= a.op[0] != 0;
    group_add(g, n, cap, a.op[0] ? a.op : "(no operator)", s->sites[i].at_peak);
  }
  if (!any) {
    free(g);
    *n = 0;
    return NULL;
  }
  qsort(g, *n, sizeof *g, by_bytes);
  return g;
}

static void json_groups(prof__json *j, const char *key, const group *g, size_t n) {
  prof__json_key(j, key);
  prof__json_arr_begin(j);
  for (size_t i = 0; i < n && i < TOP_GROUPS; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "name", g[i].name);
    prof__json_knum(j, "bytes", g[i].bytes);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

/* Heap blocks cannot be seen: the library was loaded after the program
 * started (`import mlprof`, dlopen), so malloc is not its. */
static int heap_untracked(prof__an *an, const mem_state *s) {
  const char *v = prof__an_header(an, PROF_MEM_KEY_INTERPOSER);
  return v && strcmp(v, "0") == 0 && prof__ev_mem_mode_has_events(s->mode) && !s->nalloc_events;
}

void prof__sec_mem_attr_section_json(prof__an *an, const mem_state *s, prof__json *j) {
  if (heap_untracked(an, s)) prof__json_kbool(j, "heap_tracked", 0);
  if (!prof__sec_mem_from_events(s)) return;
  if (s->kept_order) {
    prof__json_knum(j, "retained_bytes", s->kept_bytes);
    prof__json_knum(j, "retained_blocks", s->kept_count);
    prof__json_key(j, "retained");
    prof__json_arr_begin(j);
    for (size_t i = 0; i < s->nkept && i < TOP_GROUPS; i++) {
      const mem_site *x = &s->sites[s->kept_order[i]];
      const char *names[16];
      int n = prof__sec_mem_stack_names(an, x->stack, names, 16);
      prof__json_obj_begin(j);
      prof__json_knum(j, "bytes", x->kept_bytes);
      prof__json_knum(j, "count", x->kept_count);
      prof__json_kstr(j, "why", prof__sec_mem_kept_name(x->kept_why));
      prof__json_kstr(j, "pool", prof__sec_mem_pool_name(s, x->pool));
      prof__json_key(j, "stack");
      prof__json_arr_begin(j);
      for (int k = 0; k < n; k++) prof__json_str(j, names[k]);
      prof__json_arr_end(j);
      prof__sec_mem_attr_json(an, j, x->stack);
      prof__json_obj_end(j);
    }
    prof__json_arr_end(j);
  }
  size_t n;
  group *g = peak_by_range(an, s, &n);
  if (g) json_groups(j, "peak_by_range", g, n);
  free(g);
  g = peak_by_operator(an, s, &n);
  if (g) json_groups(j, "peak_by_operator", g, n);
  free(g);
}

static void text_groups(FILE *out, const char *title, const group *g, size_t n) {
  if (!n) return;
  fprintf(out, "  %s:", title);
  char b[32], nm[PROF_TERM_NAME];
  for (size_t i = 0; i < n && i < TEXT_ROWS; i++)
    fprintf(out, "%s %s %s", i ? "," : "", prof__term_name(nm, sizeof nm, g[i].name), prof__fmt_bytes(b, sizeof b, g[i].bytes));
  fputc('\n', out);
}

void prof__sec_mem_attr_text(prof__an *an, const mem_state *s, FILE *out) {
  if (heap_untracked(an, s))
    fputs("  heap not tracked: libmlprof was loaded after the program started (import mlprof, dlopen), so it does "
          "not see malloc; run the program under `mlprof run` (which preloads it) for the heap peak, allocation "
          "sites and leaks\n", out);
  if (!prof__sec_mem_from_events(s)) return;
  char b[32], line[1024], shown[1024];
  if (s->nkept) {
    fprintf(out, "  retained until exit on purpose (not leaks): %s in %.0f blocks\n",
            prof__fmt_bytes(b, sizeof b, s->kept_bytes), s->kept_count);
    for (size_t i = 0; i < s->nkept && i < 3; i++) {
      const mem_site *x = &s->sites[s->kept_order[i]];
      prof__sec_mem_site_line(an, x->stack, line, sizeof line);
      fprintf(out, "    %10s %6.0f blocks  %-14s %s\n", prof__fmt_bytes(b, sizeof b, x->kept_bytes), x->kept_count,
              prof__sec_mem_kept_name(x->kept_why), prof__term_name(shown, sizeof shown, line));
    }
  }
  size_t n;
  group *g = peak_by_range(an, s, &n);
  if (g) text_groups(out, "live at the heap peak by range", g, n);
  free(g);
  g = peak_by_operator(an, s, &n);
  if (g) text_groups(out, "live at the heap peak by operator", g, n);
  free(g);
}
