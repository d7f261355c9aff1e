/* termsafe.h — wrap a FILE so that what is written to it is safe to show
 * on a terminal (termsafe.c says what is escaped and how). */
#ifndef PROF_TERMSAFE_H
#define PROF_TERMSAFE_H

#include <stdio.h>

/* A write-only FILE that escapes control bytes and invalid UTF-8 as \xNN
 * and forwards the rest to `out`. NULL when out of memory. Close it with
 * prof__term_close() before using `out` again (it does not close `out`). */
FILE *prof__term_open(FILE *out);
/* Flush, close the wrapper; 0, or PROF_EIO when a write to `out` failed. */
int prof__term_close(FILE *f);

/* A name (or any text from a trace) as one field of a text report: `s`
 * itself when it holds no newline, else a copy in buf (n >= 1 bytes, cut
 * to fit) with each newline written \x0a. The filter lets newlines through,
 * since the report is made of lines; a name must not start a line of its
 * own. Every text writer prints names through this. */
const char *prof__term_name(char *buf, size_t n, const char *s);
/* A buffer for prof__term_name: names are shown cut to this. */
#define PROF_TERM_NAME 512

#endif
