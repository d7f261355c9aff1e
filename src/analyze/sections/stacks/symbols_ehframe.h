/* symbols_ehframe.h — function boundaries from .eh_frame (symbols_ehframe.c),
 * which name the code of a module without symbols one function at a time. */
#ifndef PROF_SYMBOLS_EHFRAME_H
#define PROF_SYMBOLS_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

typedef struct prof__fnrange {
  uint64_t start, size; /* link-time address of the function and its length */
} prof__fnrange;

/* The functions described by the FDEs of an .eh_frame section (`sec`,
 * `len` bytes, loaded at link-time address `sec_addr`), sorted by start;
 * malloc'd, count in *n. NULL only when out of memory. */
prof__fnrange *prof__ehframe_ranges(const uint8_t *sec, size_t len, uint64_t sec_addr, size_t *n);

/* The range that covers link-time address a, or NULL. */
const prof__fnrange *prof__fnrange_find(const prof__fnrange *v, size_t n, uint64_t a);

#endif
