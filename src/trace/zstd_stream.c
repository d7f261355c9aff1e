/* zstd_stream.c — see zstd_stream.h. Each chunk is one independent zstd
 * frame, so a trace cut at any point still decodes up to its last whole
 * chunk. */
#include "zstd_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

struct prof__zc {
  ZSTD_CCtx *cctx;
  int level;
};
struct prof__zd {
  ZSTD_DCtx *dctx;
};

prof__zc *prof__zc_new(int level) {
  prof__zc *z = calloc(1, sizeof *z);
  if (!z) return NULL;
  z->cctx = ZSTD_createCCtx();
  if (!z->cctx) {
    free(z);
    return NULL;
  }
  z->level = level;
  ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
  return z;
}

void prof__zc_level(prof__zc *z, int level) {
  if (z->level == level) return;
  z->level = level;
  ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
}

void prof__zc_free(prof__zc *z) {
  if (!z) return;
  ZSTD_freeCCtx(z->cctx);
  free(z);
}

size_t prof__zc_compress(prof__zc *z, const void *src, size_t n, uint8_t **dst, size_t *dst_cap) {
  size_t bound = ZSTD_compressBound(n);
  if (*dst_cap < bound) {
    uint8_t *p = realloc(*dst, bound);
    if (!p) return 0;
    *dst = p;
    *dst_cap = bound;
  }
  size_t r = ZSTD_compress2(z->cctx, *dst, *dst_cap, src, n);
  if (ZSTD_isError(r)) return 0;
  return r;
}

prof__zd *prof__zd_new(void) {
  prof__zd *z = calloc(1, sizeof *z);
  if (!z) return NULL;
  z->dctx = ZSTD_createDCtx();
  if (!z->dctx) {
    free(z);
    return NULL;
  }
  return z;
}

void prof__zd_free(prof__zd *z) {
  if (!z) return;
  ZSTD_freeDCtx(z->dctx);
  free(z);
}

int prof__zd_decompress(prof__zd *z, const void *src, size_t n, void *dst, size_t raw, char *err) {
  unsigned long long size = ZSTD_getFrameContentSize(src, n);
  if (size == ZSTD_CONTENTSIZE_ERROR) {
    snprintf(err, 128, "payload is not a zstd frame");
    return -1;
  }
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != raw) {
    snprintf(err, 128, "zstd frame holds %llu bytes, chunk header says %zu", size, raw);
    return -1;
  }
  size_t r = ZSTD_decompressDCtx(z->dctx, dst, raw, src, n);
  if (ZSTD_isError(r)) {
    snprintf(err, 128, "zstd: %s", ZSTD_getErrorName(r));
    return -1;
  }
  if (r != raw) {
    snprintf(err, 128, "zstd frame decoded to %zu bytes, expected %zu", r, raw);
    return -1;
  }
  return 0;
}
