/* procfile.h — small /proc files read without opening them again.
 *
 * The background writer reads the same /proc files every cycle (RSS, load,
 * I/O, per-thread stat). Opening, reading and closing one costs three
 * system calls and 6–16 µs here; a descriptor kept open and read again
 * with pread() at offset 0 (the kernel regenerates the text) costs 1–7 µs.
 * The descriptor is opened on first use with O_CLOEXEC, so it never
 * reaches an exec'd program; a read error closes it (a thread that exited)
 * and the next read opens the file again.
 *
 * The program may close the descriptor and get the same number for a file
 * of its own: every read first checks (fstat: device and inode) that the
 * descriptor is still the file opened, and a descriptor that is not is
 * forgotten, never read and never closed. Two system calls a read, still
 * a fraction of opening the file.
 *
 * A prof__procfile is zero-initialised. Reads are safe from several
 * threads at once (pread has no shared offset; a thread that loses the
 * race to open closes its own descriptor and reads nothing this time). No
 * allocation, no lock.
 */
#ifndef PROF_CORE_PROCFILE_H
#define PROF_CORE_PROCFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct prof__procfile {
  int fd1;           /* descriptor + 1; 0: not open; -1: being opened */
  uint64_t dev, ino; /* the file opened, to tell it from a reused number */
} prof__procfile;

/* Read up to cap - 1 bytes of `path` (the same path on every call for one
 * prof__procfile) into buf, NUL-terminated. Returns the length, or -1 when
 * the file cannot be opened or read. */
long prof__procfile_read(prof__procfile *f, const char *path, char *buf, size_t cap);

/* fstat() of the file kept open (opened on first use, O_RDONLY, so a
 * directory too): 0 with *st filled, or -1 (cannot be opened, or the
 * descriptor is no longer ours: forgotten, opened again next time). */
struct stat;
int prof__procfile_stat(prof__procfile *f, const char *path, struct stat *st);

/* Close the descriptor if it is still ours (the next read opens it again). */
void prof__procfile_close(prof__procfile *f);

/* Resident set size of the process in bytes (second field of
 * /proc/self/statm); 0 when unknown. One read on a shared descriptor. */
uint64_t prof__proc_rss(void);

#endif
