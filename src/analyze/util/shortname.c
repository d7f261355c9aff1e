/* shortname.c — eliding template arguments and parameter lists of C++
 * function names for the text report (shortname.h). One pass; brackets
 * are matched by depth, so a malformed name is shortened no worse than
 * cut. */
#include "analyze/util/shortname.h"

#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

typedef struct sbuf {
  char *p;
  size_t n, len;
} sbuf;

/* All of s[0..k) or nothing (an ellipsis is never cut in two). */
static void put(sbuf *b, const char *s, size_t k) {
  if (b->len + k >= b->n) {
    b->len = b->n; /* full: nothing more goes in */
    return;
  }
  memcpy(b->p + b->len, s, k);
  b->len += k;
  b->p[b->len] = 0;
}

/* Index just past the bracket group opening at s[i] ('<' or '('), or the
 * end of the string when it never closes. */
static size_t group_end(const char *s, size_t i) {
  int depth = 0;
  for (; s[i]; i++) {
    if (s[i] == '<' || s[i] == '(') depth++;
    else if ((s[i] == '>' || s[i] == ')') && --depth == 0) return i + 1;
  }
  return i;
}

/* Length of an operator token after "operator" at s (e.g. "<<=", "()", "[]"). */
static size_t operator_token(const char *s) {
  if (strncmp(s, "()", 2) == 0 || strncmp(s, "[]", 2) == 0) return 2;
  size_t k = 0;
  while (s[k] && strchr("<>=!+-*/%^&|~,", s[k])) k++;
  return k;
}

const char *prof__short_name(const char *name, char *out, size_t n) {
  if (!n) return out;
  out[0] = 0;
  if (!name) return out;
  sbuf b = {out, n, 0};
  size_t i = 0;
  while (name[i]) {
    if (strncmp(name + i, "operator", 8) == 0 && (i == 0 || name[i - 1] == ':')) {
      size_t k = operator_token(name + i + 8);
      put(&b, name + i, 8 + k);
      i += 8 + k;
      continue;
    }
    if (strncmp(name + i, "(anonymous namespace)", 21) == 0) {
      put(&b, name + i, 21);
      i += 21;
      continue;
    }
    if (name[i] == '<' || name[i] == '(') {
      size_t e = group_end(name, i);
      int empty = name[i] == '(' && name[i + 1] == ')';
      if (empty) put(&b, "()", 2);
      else {
        put(&b, name + i, 1);
        put(&b, ELLIPSIS, sizeof ELLIPSIS - 1);
        if (e > i + 1 && (name[e - 1] == '>' || name[e - 1] == ')')) put(&b, name + e - 1, 1);
      }
      i = e;
      continue;
    }
    put(&b, name + i, 1);
    i++;
  }
  return out;
}
