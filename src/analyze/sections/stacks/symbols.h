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
} prof__frame;

/* Frames of stack `id` (innermost first). Returns the depth, 0 when the id
 * is unknown. *pcs stays valid for the life of the analysis. */
int prof__an_stack(prof__an *an, uint32_t id, const uintptr_t **pcs);

/* Symbolize one address (cached; never NULL). */
const prof__frame *prof__an_frame(prof__an *an, uintptr_t pc);

/* Is the frame part of mlprof itself (to hide profiler frames)? */
int prof__an_frame_is_profiler(const prof__frame *f);

#endif
