/* zstd_stream.h — the only door to libzstd. Compresses and decompresses one
 * chunk payload at a time with reusable contexts, translating zstd's errors
 * into ours. */
#ifndef PROF_ZSTD_STREAM_H
#define PROF_ZSTD_STREAM_H
#include <stddef.h>
#include <stdint.h>

typedef struct prof__zc prof__zc;
typedef struct prof__zd prof__zd;

prof__zc *prof__zc_new(int level);
void prof__zc_free(prof__zc *z);
/* The level of the next frames (negative: zstd's fast levels). */
void prof__zc_level(prof__zc *z, int level);
/* Compress src into *dst (grown with realloc as needed). Returns the
 * compressed size, or 0 on failure. */
size_t prof__zc_compress(prof__zc *z, const void *src, size_t n, uint8_t **dst, size_t *dst_cap);

prof__zd *prof__zd_new(void);
void prof__zd_free(prof__zd *z);
/* Decompress exactly `raw` bytes from src into dst (capacity >= raw).
 * Returns 0, or -1 with a message in err (>= 128 bytes). */
int prof__zd_decompress(prof__zd *z, const void *src, size_t n, void *dst, size_t raw, char *err);
#endif
