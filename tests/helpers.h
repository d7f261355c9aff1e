/* helpers.h — small utilities shared by the cmocka tests: temporary paths,
 * running a command, reading a whole file. */
#ifndef MLPROF_TEST_HELPERS_H
#define MLPROF_TEST_HELPERS_H
#include <stddef.h>

/* A fresh path under the build's test tmp folder: "<tmp>/<stem>.<pid>.<n><ext>". */
const char *th_tmp_path(const char *stem, const char *ext);
/* Run a shell command; returns its exit status (or -1). Output goes to `out_path` if non-NULL. */
int th_run(const char *cmd, const char *out_path);
/* Read a whole file into a NUL-terminated malloc'd buffer; NULL if missing. */
char *th_read_file(const char *path, size_t *len);
/* Does the file exist? */
int th_exists(const char *path);
#endif
