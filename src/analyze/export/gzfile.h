/* gzfile.h — a stdio stream that gzip-compresses what is written to it, so
 * exporters that write to a FILE * can produce `.json.gz` files directly. */
#ifndef PROF_GZFILE_H
#define PROF_GZFILE_H

#include <stdio.h>

/* Create `path` and return a write-only stream whose bytes are stored
 * gzip-compressed (level 6). The file is written under a temporary name
 * (trace/outfile.h) and replaces `path` when fclose() finishes the gzip
 * member well; fclose() fails (returns EOF, nothing replaced) if any write,
 * the compression or the move failed. Returns NULL with a
 * message in err (>= PROF_ERR_MAX bytes) when the file cannot be created or zlib is
 * not available in this build. */
FILE *prof__gz_open(const char *path, char *err);

/* Does the name end in ".gz"? */
int prof__gz_wanted(const char *path);

#endif
