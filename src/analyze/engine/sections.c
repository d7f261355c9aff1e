/* sections.c — the registry of report sections, generated from
 * sections.def. Adding a section is one PROF_SECTION(sym) line there plus
 * the section's own source file defining `const prof__section sym`. */
#include "analyze/analyze.h"

#define PROF_SECTION(sym) extern const prof__section sym;
#include "analyze/engine/sections.def"
#undef PROF_SECTION

/* The trailing NULL keeps the array valid when no section is listed. */
const prof__section *const prof__sections[] = {
#define PROF_SECTION(sym) &sym,
#include "analyze/engine/sections.def"
#undef PROF_SECTION
    NULL};

const size_t prof__nsections = sizeof prof__sections / sizeof prof__sections[0] - 1;
