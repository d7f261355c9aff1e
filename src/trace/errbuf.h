/* errbuf.h — the size of an error-message buffer, one for the whole
 * project. Functions that can fail with a reason take `char *err` of at
 * least PROF_ERR_MAX bytes and write one line there (no "mlprof: " prefix,
 * no newline); callers declare `char err[PROF_ERR_MAX]`. Both halves use it:
 * the recorder, the reader, the mlprof command.
 */
#ifndef PROF_ERRBUF_H
#define PROF_ERRBUF_H

#define PROF_ERR_MAX 256 /* bytes of an error message, with its terminating NUL */

#endif
