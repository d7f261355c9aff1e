/* fmt.h — byte amounts for people: the one formatter the text, JSON-side
 * messages and HTML panels share ("512 B", "1.5 MiB"). Times are formatted
 * by prof__an_fmt_ns() (analyze.h).
 */
#ifndef MLPROF_ANALYZE_FMT_H
#define MLPROF_ANALYZE_FMT_H

#include <stddef.h>

/* A binary unit ("B", "KiB", "MiB", "GiB", "TiB") fitting max_bytes (the
 * largest magnitude to show), and its size in bytes through *scale (may be
 * NULL). */
const char *prof__fmt_byte_unit(double max_bytes, double *scale);
/* `bytes` (may be negative) in its own unit: "%.0f B" below 1 KiB, else one
 * decimal ("1.5 MiB"). Writes at most n bytes to buf; returns buf. */
const char *prof__fmt_bytes(char *buf, size_t n, double bytes);

#endif
