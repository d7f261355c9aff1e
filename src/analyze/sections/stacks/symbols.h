/* symbols.h — call stacks and symbols on the analysis side.
 *
 * The "stacks" section (sec_stacks.c) decodes PROF_CHUNK_STACKS and
 * PROF_CHUNK_MODULES records; other sections (memory, functions) ask it for
 * a stack's frames and each frame's function, file and line, resolved from
 * the recorded module map (ELF symbol tables, DWARF line info via libdw
 * when available). Symbolization is cached per address.
 */
#ifndef PROF_SYMBOLS_H
#define PROF_SYMBOLS_H

#include <stdint.h>

#include "analyze/analyze.h"

typedef struct prof__frame {
  uintptr_t pc;
  const char *func;   /* demangled when possible; "0x..." when unknown */
  const char *file;   /* source file or NULL */
  int line;           /* 0 when unknown */
  const char *module; /* basename of the module, or NULL */
  const char *mangled; /* the symbol as linked when func is its demangled form, else NULL */
  const char *label;   /* name in call paths and exports ("f [inlined]", "train.py:42 forward") */
  int inlined;         /* a function the compiler inlined into the frame's caller */
  int python;          /* a Python frame (func: qualified name, file: the .py file) */
  int nosym;           /* no symbol covers the address: func is "module+0xSTART" of the function
                        * that .eh_frame says holds it, else "module+0xADDRESS" */
  int ninl;            /* inlined frames at this address, innermost first, in inl[] */
  const struct prof__frame *inl;
} prof__frame;

/* The demangled form of a C++ or Rust legacy symbol (malloc'd), or NULL
 * when `name` is not mangled or no demangler is available. */
char *prof__demangle(const char *name);

/* Address tag of a Python frame in a recorded stack (src/cpu/pyframes.c):
 * bit 63 set, bits 47..62 the instruction index + 1, bits 0..46 the code
 * object's address. */
#define PROF_PYFRAME_TAG (1ull << 63)
static inline int prof__pc_is_python(uintptr_t pc) { return ((uint64_t)pc & PROF_PYFRAME_TAG) != 0; }

/* The frames of stack `id` as people read them, innermost first: return
 * addresses looked up one byte earlier, inlined functions expanded into
 * frames of their own, Python frames resolved. Frames of mlprof itself are
 * left out; with keep_profiler_leaf, a run of them at the innermost end
 * becomes one "[mlprof]" frame (the profiler's own time, charged to it the
 * same way by every writer). Returns the count (<= max). */
int prof__an_stack_frames(prof__an *an, uint32_t id, const prof__frame **out, int max, int keep_profiler_leaf);

/* The frame standing for mlprof's own code in prof__an_stack_frames. */
extern const prof__frame prof__profiler_frame;

/* Frames of stack `id` (innermost first). Returns the depth, 0 when the id
 * is unknown. *pcs stays valid for the life of the analysis. */
int prof__an_stack(prof__an *an, uint32_t id, const uintptr_t **pcs);

/* Symbolize one address (cached; never NULL). */
const prof__frame *prof__an_frame(prof__an *an, uintptr_t pc);

/* Is the frame part of mlprof itself (to hide profiler frames)? */
int prof__an_frame_is_profiler(const prof__frame *f);

#endif
