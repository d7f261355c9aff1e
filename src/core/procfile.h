/* procfile.h — small /proc files read with one system call.
 *
 * The background writer reads the same /proc files every cycle (RSS, load,
 * I/O, per-thread stat). Opening, reading and closing one costs three
 * system calls and 6–16 µs here; a descriptor kept open and read again
 * with pread() at offset 0 (the kernel regenerates the text) costs one
 * call and 1–7 µs. The descriptor is opened on first use with O_CLOEXEC,
 * so it never reaches an exec'd program; a read error closes it (a thread
 * that exited) and the next read opens the file again.
 *
 * A prof__procfile is zero-initialised. Reads are safe from several
 * threads at once (pread has no shared offset; a lost race to open closes
 * the extra descriptor). No allocation, no lock.
 */
#ifndef PROF_CORE_PROCFILE_H
#define PROF_CORE_PROCFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct prof__procfile {
  int fd1; /* descriptor + 1; 0: not open */
} prof__procfile;

/* Read up to cap - 1 bytes of `path` (the same path on every call for one
 * prof__procfile) into buf, NUL-terminated. Returns the length, or -1 when
 * the file cannot be opened or read. */
long prof__procfile_read(prof__procfile *f, const char *path, char *buf, size_t cap);

/* Close the descriptor (the next read opens it again). */
void prof__procfile_close(prof__procfile *f);

/* Resident set size of the process in bytes (second field of
 * /proc/self/statm); 0 when unknown. One pread on a shared descriptor. */
uint64_t prof__proc_rss(void);

#endif
