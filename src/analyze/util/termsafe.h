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

#endif
