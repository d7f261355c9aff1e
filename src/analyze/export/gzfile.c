/* gzfile.c — gzip output through zlib behind a fopencookie() stream (see
 * gzfile.h). The only file that includes zlib.h. zlib is opened at the
 * first gzip output (dlopen of its soname, found at configure time), not
 * linked: only this export needs it, and a linked library is one more for
 * every profiled program and `mlprof` command to load at start. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/export/gzfile.h"
#include "trace/outfile.h"

int prof__gz_wanted(const char *path) {
  size_t n = path ? strlen(path) : 0;
  return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

#if MLPROF_HAVE_ZLIB
#include <zlib.h>

#ifndef MLPROF_ZLIB_SONAME
#define MLPROF_ZLIB_SONAME "libz.so.1"
#endif

/* zlib's entry points, from the library opened once. */
static struct {
  int (*init2)(z_streamp, int, int, int, int, int, const char *, int);
  int (*deflate)(z_streamp, int);
  int (*end)(z_streamp);
  char why[160];
} once_zlib;
static pthread_once_t zl_once = PTHREAD_ONCE_INIT;

static void zl_open(void) {
  void *h = dlopen(MLPROF_ZLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(once_zlib.why, sizeof once_zlib.why, "%.150s", e ? e : "cannot be opened");
    return;
  }
  *(void **)&once_zlib.init2 = dlsym(h, "deflateInit2_");
  *(void **)&once_zlib.deflate = dlsym(h, "deflate");
  *(void **)&once_zlib.end = dlsym(h, "deflateEnd");
  if (!once_zlib.init2 || !once_zlib.deflate || !once_zlib.end) {
    once_zlib.init2 = NULL;
    snprintf(once_zlib.why, sizeof once_zlib.why, "%s lacks deflate", MLPROF_ZLIB_SONAME);
  }
}

typedef struct gz_cookie {
  prof__outf o; /* the file under its temporary name until closed well */
  FILE *f;
  z_stream z;
  int failed;
  unsigned char out[1 << 16];
} gz_cookie;

/* Compress what is in z.next_in with `flush`, writing every full buffer. */
static int pump(gz_cookie *g, int flush) {
  do {
    g->z.next_out = g->out;
    g->z.avail_out = sizeof g->out;
    int rc = once_zlib.deflate(&g->z, flush);
    if (rc == Z_STREAM_ERROR) return -1;
    size_t have = sizeof g->out - g->z.avail_out;
    if (have && fwrite(g->out, 1, have, g->f) != have) return -1;
  } while (g->z.avail_out == 0);
  return 0;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t n) {
  gz_cookie *g = cookie;
  if (g->failed) return -1;
  g->z.next_in = (unsigned char *)(uintptr_t)buf;
  g->z.avail_in = (uInt)n;
  if (pump(g, Z_NO_FLUSH)) {
    g->failed = 1;
    errno = EIO;
    return -1;
  }
  return (ssize_t)n;
}

static int gz_close(void *cookie) {
  gz_cookie *g = cookie;
  int bad = g->failed;
  g->z.next_in = NULL;
  g->z.avail_in = 0;
  if (!bad && pump(g, Z_FINISH)) bad = 1;
  once_zlib.end(&g->z);
  char err[PROF_ERR_MAX];
  if (prof__out_fclose(&g->o, !bad, err) != 0) bad = 1;
  free(g);
  return bad ? EOF : 0;
}

FILE *prof__gz_open(const char *path, char *err) {
  pthread_once(&zl_once, zl_open);
  if (!once_zlib.init2) {
    snprintf(err, PROF_ERR_MAX, "cannot write '%.60s': zlib (gzip output) cannot be loaded: %.100s", path,
             once_zlib.why);
    return NULL;
  }
  gz_cookie *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, PROF_ERR_MAX, "out of memory");
    return NULL;
  }
  /* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
  if (once_zlib.init2(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof g->z) != Z_OK) {
    snprintf(err, PROF_ERR_MAX, "zlib initialisation failed");
    free(g);
    return NULL;
  }
  if (prof__out_fopen(&g->o, path, 0600, err) != 0) {
    once_zlib.end(&g->z);
    free(g);
    return NULL;
  }
  g->f = g->o.f;
  cookie_io_functions_t io = {.write = gz_write, .close = gz_close};
  FILE *f = fopencookie(g, "w", io);
  if (!f) {
    snprintf(err, PROF_ERR_MAX, "cannot open a stream: %s", strerror(errno));
    prof__out_fclose(&g->o, 0, err);
    once_zlib.end(&g->z);
    free(g);
    return NULL;
  }
  setvbuf(f, NULL, _IOFBF, 1 << 16);
  return f;
}

#else

FILE *prof__gz_open(const char *path, char *err) {
  snprintf(err, PROF_ERR_MAX, "cannot write '%s': this build has no zlib (gzip output)", path);
  return NULL;
}

#endif
