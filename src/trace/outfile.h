/* outfile.h — creating the profiler's output files safely in directories
 * other users may write to, and writing them without raising SIGXFSZ in the
 * host.
 *
 * Every file is first created under a fresh temporary name beside its final
 * name (O_CREAT | O_EXCL | O_NOFOLLOW, so a planted file or symlink is never
 * opened), then renamed over the final name, which must be absent or a
 * regular file the user owns (a symlink there is refused, never followed).
 */
#ifndef PROF_OUTFILE_H
#define PROF_OUTFILE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "errbuf.h"

/* Is `path` fit to be replaced: absent, or a regular file owned by the
 * effective user? 0 when it is; otherwise -1 with a reason in `err` (PROF_ERR_MAX
 * bytes) naming `path`. */
int prof__out_check(const char *path, char *err);

/* Create a temporary file for `path` (`<path>.<pid>.<n>.tmp`, written into
 * `tmp`, at least strlen(path) + 48 bytes) with `mode`. Returns its fd
 * (O_CLOEXEC) or -1 with a message in `err`. */
int prof__out_create(const char *path, char *tmp, size_t tmp_n, int mode, char *err);

/* Move the finished temporary file to `path` (after prof__out_check).
 * 0, or -1 with a message in `err`; the temporary file is removed either
 * way. */
int prof__out_commit(const char *tmp, const char *path, char *err);

/* A stdio stream onto a temporary file that becomes `path` when closed
 * well: the one way the profiler and the analyzer write a whole file
 * (reports, snapshots, exports). */
typedef struct prof__outf {
  FILE *f;
  char *path, *tmp;
} prof__outf;

/* prof__out_check, prof__out_create with `mode` and fdopen: 0 with o->f open
 * for writing, or -1 with a message in `err` (nothing is left behind).
 * Allocates; not for the recording hot path. */
int prof__out_fopen(prof__outf *o, const char *path, int mode, char *err);

/* Close o->f; when `ok` and the close succeeded, move the file to its path
 * (prof__out_commit), otherwise remove the temporary file. 0 when the file is
 * in place, -1 otherwise (with a message in `err` when the close or the move
 * failed; `err` is left alone when !ok). */
int prof__out_fclose(prof__outf *o, int ok, char *err);

/* Create the directory `dir` and every missing folder above it (mode 0777
 * less the umask), as `mkdir -p` does. 0 when it exists afterwards and
 * passes prof__out_dir_check; -1 with a message in `err` (PROF_ERR_MAX bytes)
 * otherwise. Allocates nothing. */
int prof__mkdirs(const char *dir, char *err);

/* May the profiler write into the folder `dir`? It must be a folder owned by
 * the effective user or by root, checked with fstat on a descriptor opened
 * O_DIRECTORY | O_NOFOLLOW (a symlink counts when the link itself is the
 * user's or root's and leads to such a folder). 0, or -1 with a message in
 * `err` (PROF_ERR_MAX bytes). Another user's folder in a shared directory (/tmp) is
 * refused: its owner could read, replace or remove what is written there. */
int prof__out_dir_check(const char *dir, char *err);

/* Is `path` a trace that a live process is writing now (it holds the file's
 * lock)? Writers lock their trace with flock(LOCK_EX) while it is open. */
int prof__out_busy(const char *path);

/* Writing files must never raise SIGXFSZ (RLIMIT_FSIZE) in the host: between
 * block and restore, SIGXFSZ is blocked on the calling thread (the write
 * then fails with EFBIG) and one raised meanwhile is consumed. */
typedef struct prof__xfsz_guard {
  sigset_t old;
  int pending_before;
} prof__xfsz_guard;
void prof__xfsz_block(prof__xfsz_guard *g);
void prof__xfsz_restore(prof__xfsz_guard *g);

#endif
