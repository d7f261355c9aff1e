/* advice.h — what to do about a hot function, chosen from what was measured
 * (its name and the module it ran in), for the hot_function finding. */
#ifndef PROF_ADVICE_H
#define PROF_ADVICE_H

#include <stddef.h>

/* Kinds of advice, the "advice" key of the finding. */
#define PROF_ADVICE_KINDS(X)                                   \
  X(PROF_ADV_REFERENCE_BLAS, "reference_blas")                 \
  X(PROF_ADV_OPENMP_SPIN, "openmp_spin")                       \
  X(PROF_ADV_PYTHON, "python_interpreter")                     \
  X(PROF_ADV_MEMORY, "allocation_copies")                      \
  X(PROF_ADV_CLOCK, "clock_reads")                             \
  X(PROF_ADV_GENERIC, "generic")                               \
  X(PROF_ADV_MATMUL, "matrix_kernel")

enum {
#define PROF__ADV_ENUM(e, s) e,
  PROF_ADVICE_KINDS(PROF__ADV_ENUM)
#undef PROF__ADV_ENUM
};

/* Classify a hot function by name and module (a path or file name; either
 * may be NULL). Returns a PROF_ADV_* kind. */
int prof__advice_kind(const char *func, const char *module);
/* The kind's name ("reference_blas", ...). */
const char *prof__advice_name(int kind);
/* The recommendation for a hot function into buf (n >= 256 bytes), naming
 * the function and, for generic advice, its hottest line (file may be NULL,
 * line <= 0 when unknown). Returns buf. */
const char *prof__advice_text(const char *func, const char *module, const char *file, int line, char *buf,
                              size_t n);

#endif
