/* jsonparse.h — a small strict JSON reader (RFC 8259) into a tree.
 *
 * Used to read reports back (tests, report comparison). Rejects anything a
 * strict parser would: trailing commas, bare control characters in strings,
 * bad escapes, leading zeros, garbage after the value. Nesting is limited to
 * 256 levels. The tree is allocated; free it with prof__jv_free().
 */
#ifndef PROF_JSONPARSE_H
#define PROF_JSONPARSE_H

#include <stddef.h>

enum {
  PROF_JV_NULL = 0,
  PROF_JV_BOOL = 1,
  PROF_JV_NUM = 2,
  PROF_JV_STR = 3,
  PROF_JV_ARR = 4,
  PROF_JV_OBJ = 5
};

typedef struct prof__jv {
  int type;
  int boolean;
  double num;
  char *str;              /* PROF_JV_STR: decoded UTF-8, NUL-terminated */
  size_t len;             /* string length, or number of items */
  struct prof__jv *items; /* array items / object values */
  char **keys;            /* object keys, parallel to items */
} prof__jv;

/* Parse `len` bytes. Returns the tree or NULL with a message in err
 * (>= 128 bytes) that names the byte offset. */
prof__jv *prof__jv_parse(const char *text, size_t len, char *err);
void prof__jv_free(prof__jv *v);

/* Member `key` of an object (the last one if repeated), or NULL. */
const prof__jv *prof__jv_get(const prof__jv *obj, const char *key);
/* Item i of an array, or NULL. */
const prof__jv *prof__jv_at(const prof__jv *arr, size_t i);
/* Follow a path of object keys separated by '.', e.g. "trace.pid". */
const prof__jv *prof__jv_path(const prof__jv *v, const char *path);

#endif
