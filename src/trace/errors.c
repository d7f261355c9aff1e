/* errors.c — prof_strerror(): the text of each error code of the one table
 * in mlprof.h (PROF_ERRORS). Shared by the recorder, the reader and the CLI.
 */
#include "mlprof.h"

PROF_API const char *prof_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define PROF__ERR_CASE(name, value, msg) \
  case value:                            \
    return msg;
    PROF_ERRORS(PROF__ERR_CASE)
#undef PROF__ERR_CASE
  default:
    return "unknown error";
  }
}
