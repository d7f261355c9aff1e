/* glibc_chunk.h — the usable size of a glibc malloc block, read from its
 * chunk header instead of calling malloc_usable_size().
 *
 * glibc keeps the chunk size (a multiple of 16 with three flag bits below)
 * in the word before the user pointer. For a block in use,
 * malloc_usable_size() returns that size minus one word, or minus two for
 * an mmapped chunk (flag IS_MMAPPED). The interposer uses this only when the
 * next allocator is glibc's own (its malloc and free are __libc_malloc and
 * __libc_free), on pointers that allocator returned and that are not yet
 * freed; otherwise it calls the allocator's malloc_usable_size().
 */
#ifndef PROF_MEM_GLIBC_CHUNK_H
#define PROF_MEM_GLIBC_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#define PROF_GLIBC_IS_MMAPPED ((size_t)2)
#define PROF_GLIBC_SIZE_BITS ((size_t)7)

static inline size_t prof__glibc_usable(const void *p) {
  uintptr_t at = (uintptr_t)p - sizeof(size_t);
  __asm__("" : "+r"(at)); /* the header lies before the block: hide that from bounds checks */
  size_t hdr = *(const size_t *)at;
  size_t chunk = hdr & ~PROF_GLIBC_SIZE_BITS;
  /* one word of overhead, two for an mmapped chunk (flag 2 times half a word) */
  return chunk - sizeof(size_t) - (hdr & PROF_GLIBC_IS_MMAPPED) * (sizeof(size_t) / 2);
}

#endif
