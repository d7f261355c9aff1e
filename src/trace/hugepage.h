/* hugepage.h — large buffers on transparent huge pages where the kernel
 * offers them (its "madvise" mode, a common default).
 *
 * On a virtual machine a page fault can cost 10 us or more, and an analysis
 * that touches 45 MB of fresh memory pays 11 000 of them: a third of a
 * small trace's analysis here. A 2 MiB page takes one fault where 4 KiB
 * pages take 512. Memory from both functions is released with free(). */
#ifndef PROF_TRACE_HUGEPAGE_H
#define PROF_TRACE_HUGEPAGE_H

#include <stddef.h>

#define PROF_HUGEPAGE ((size_t)2 << 20)

/* n bytes (n > 0) for a buffer written from scratch: from n >= 2 MiB on,
 * huge-page aligned, rounded up to whole huge pages and advised for them;
 * smaller ones are plain malloc(). NULL without memory. */
void *prof__hugepage_alloc(size_t n);

/* The same, zeroed (calloc for small ones). */
void *prof__hugepage_calloc(size_t n);

/* realloc(p, n) for a block of `old` bytes: from n >= 2 MiB on, a fresh
 * block from prof__hugepage_alloc() with the first min(old, n) bytes
 * copied, and p freed. NULL without memory (p then unchanged). */
void *prof__hugepage_realloc(void *p, size_t old, size_t n);

/* Advise the whole 2 MiB-aligned pages inside [p, p + n) (memory from
 * malloc or realloc, such as a grown array) for huge pages when they are
 * first touched. It changes no content and no ownership; small blocks, a
 * kernel without transparent huge pages and any failure leave everything
 * as it was. */
void prof__hugepage_advise(void *p, size_t n);

#endif
