/* termsafe.c — a FILE that makes text safe for a terminal.
 *
 * Names in a trace (ranges, threads, functions, metric tags, file paths)
 * are bytes chosen by the profiled program or by whoever crafted the trace.
 * Text reports go to a terminal, where an ESC or a C1 control byte starts a
 * command (move the cursor, retitle the window, rewrite what was printed).
 * Everything a text writer prints passes through this filter: newline and
 * tab pass, every other control byte (C0, DEL, C1 in UTF-8 or alone) and
 * every byte that is not part of valid UTF-8 is shown as \xNN. Valid UTF-8
 * passes unchanged. The newlines the filter lets through are the report's
 * own: the writers print names through prof__term_name(), which shows a
 * newline inside a name as \x0a, so a trace can not add lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/util/termsafe.h"

typedef struct term_cookie {
  FILE *out;
  unsigned char pend[4]; /* a UTF-8 sequence not yet complete */
  int npend, need;
  int err;
} term_cookie;

static void put_hex(term_cookie *t, unsigned char b) {
  static const char hex[] = "0123456789abcdef";
  char e[4] = {'\\', 'x', hex[b >> 4], hex[b & 15]};
  if (fwrite(e, 1, 4, t->out) != 4) t->err = 1;
}

static void put_raw(term_cookie *t, const unsigned char *p, size_t n) {
  if (n && fwrite(p, 1, n, t->out) != n) t->err = 1;
}

static void flush_pending_escaped(term_cookie *t) {
  for (int i = 0; i < t->npend; i++) put_hex(t, t->pend[i]);
  t->npend = t->need = 0;
}

/* Is `b` a valid byte at position npend of a sequence that began with
 * pend[0]? (Rules out overlong forms, surrogates and values past U+10FFFF.) */
static int continues(const term_cookie *t, unsigned char b) {
  if ((b & 0xc0) != 0x80) return 0;
  if (t->npend != 1) return 1;
  switch (t->pend[0]) {
  case 0xe0: return b >= 0xa0;
  case 0xed: return b < 0xa0;
  case 0xf0: return b >= 0x90;
  case 0xf4: return b < 0x90;
  default: return 1;
  }
}

static void feed(term_cookie *t, unsigned char b) {
  if (t->npend) {
    if (continues(t, b)) {
      t->pend[t->npend++] = b;
      if (t->npend < t->need) return;
      if (t->pend[0] == 0xc2 && t->pend[1] < 0xa0) flush_pending_escaped(t); /* C1 control */
      else put_raw(t, t->pend, (size_t)t->npend);
      t->npend = t->need = 0;
      return;
    }
    flush_pending_escaped(t); /* broken sequence; b starts afresh */
  }
  if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f)) {
    put_raw(t, &b, 1);
    return;
  }
  int need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (!need) {
    put_hex(t, b);
    return;
  }
  t->pend[0] = b;
  t->npend = 1;
  t->need = need;
}

static ssize_t term_write(void *c, const char *buf, size_t n) {
  term_cookie *t = c;
  const unsigned char *p = (const unsigned char *)buf;
  size_t i = 0;
  while (i < n) {
    if (!t->npend) { /* fast path: a run of plain printable ASCII */
      size_t j = i;
      while (j < n && ((p[j] >= 0x20 && p[j] < 0x7f) || p[j] == '\n' || p[j] == '\t')) j++;
      put_raw(t, p + i, j - i);
      i = j;
      if (i == n) break;
    }
    feed(t, p[i++]);
  }
  return t->err ? -1 : (ssize_t)n;
}

static int term_close(void *c) {
  term_cookie *t = c;
  flush_pending_escaped(t);
  int err = t->err || fflush(t->out) != 0 || ferror(t->out);
  free(t);
  return err ? -1 : 0;
}

FILE *prof__term_open(FILE *out) {
  term_cookie *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->out = out;
  cookie_io_functions_t io = {NULL, term_write, NULL, term_close};
  FILE *f = fopencookie(t, "w", io);
  if (!f) free(t);
  return f;
}

int prof__term_close(FILE *f) { return fclose(f) == 0 ? 0 : PROF_EIO; }

const char *prof__term_name(char *buf, size_t n, const char *s) {
  if (!s) return "";
  if (!strchr(s, '\n')) return s;
  size_t k = 0;
  for (; *s && k + 1 < n; s++) {
    if (*s != '\n') {
      buf[k++] = *s;
      continue;
    }
    if (k + 5 > n) break;
    memcpy(buf + k, "\\x0a", 4);
    k += 4;
  }
  buf[k] = 0;
  return buf;
}
