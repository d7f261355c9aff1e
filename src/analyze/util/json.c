/* json.c — the streaming JSON writer behind json.h.
 *
 * The writer remembers, per nesting level, whether a value was already
 * written, so callers never place commas themselves. Strings are escaped and
 * invalid UTF-8 is replaced by U+FFFD so strict parsers accept the output.
 * Numbers that are not finite become null. Nothing here allocates.
 */
#include "analyze/util/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH ((int)sizeof(((prof__json *)0)->first) - 1)

static int depth_slot(const prof__json *j) {
  return j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;
}

static void newline_indent(prof__json *j) {
  if (!j->pretty) return;
  fputc('\n', j->out);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Called before every value and key: comma and indentation as needed. */
static void before_item(prof__json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  int s = depth_slot(j);
  if (j->depth > 0) {
    if (!j->first[s]) fputc(',', j->out);
    newline_indent(j);
  }
  j->first[s] = 0;
}

void prof__json_init(prof__json *j, FILE *out, int pretty) {
  memset(j, 0, sizeof *j);
  j->out = out;
  j->pretty = pretty;
  j->first[0] = 1;
}

static void open_container(prof__json *j, int ch) {
  before_item(j);
  fputc(ch, j->out);
  j->depth++;
  j->first[depth_slot(j)] = 1;
}

static void close_container(prof__json *j, int ch) {
  int empty = j->first[depth_slot(j)];
  if (j->depth > 0) j->depth--;
  if (!empty) newline_indent(j);
  fputc(ch, j->out);
  if (j->depth == 0 && j->pretty) fputc('\n', j->out);
}

void prof__json_obj_begin(prof__json *j) { open_container(j, '{'); }
void prof__json_obj_end(prof__json *j) { close_container(j, '}'); }
void prof__json_arr_begin(prof__json *j) { open_container(j, '['); }
void prof__json_arr_end(prof__json *j) { close_container(j, ']'); }

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) { len = 2; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { len = 3; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { len = 4; min = 0x10000; }
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (0x3f >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

static void write_escape(FILE *out, unsigned char c) {
  switch (c) {
  case '"': fputs("\\\"", out); break;
  case '\\': fputs("\\\\", out); break;
  case '\n': fputs("\\n", out); break;
  case '\r': fputs("\\r", out); break;
  case '\t': fputs("\\t", out); break;
  case '\b': fputs("\\b", out); break;
  case '\f': fputs("\\f", out); break;
  default: fprintf(out, "\\u%04x", c); break;
  }
}

static void write_string(FILE *out, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t run = 0; /* start of the pending run of bytes copied verbatim */
  fputc('"', out);
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : utf8_len(s + i, n - i);
    if (len && c >= 0x20 && c != '"' && c != '\\') {
      i += len;
      continue;
    }
    if (i > run) fwrite(s + run, 1, i - run, out);
    if (len) write_escape(out, c);
    else fputs("\xef\xbf\xbd", out); /* U+FFFD for an invalid byte */
    i++;
    run = i;
  }
  if (n > run) fwrite(s + run, 1, n - run, out);
  fputc('"', out);
}

void prof__json_key(prof__json *j, const char *key) {
  before_item(j);
  write_string(j->out, key ? key : "", key ? strlen(key) : 0);
  fputs(j->pretty ? ": " : ":", j->out);
  j->after_key = 1;
}

void prof__json_str(prof__json *j, const char *s) {
  if (!s) {
    prof__json_null(j);
    return;
  }
  prof__json_strn(j, s, strlen(s));
}

void prof__json_strn(prof__json *j, const char *s, size_t n) {
  before_item(j);
  write_string(j->out, s ? s : "", s ? n : 0);
}

void prof__json_num(prof__json *j, double v) {
  if (!isfinite(v)) {
    prof__json_null(j);
    return;
  }
  char buf[40];
  /* Shortest of the usual precisions that reads back exactly. */
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  before_item(j);
  fputs(buf, j->out);
}

void prof__json_int(prof__json *j, int64_t v) {
  before_item(j);
  fprintf(j->out, "%" PRId64, v);
}

void prof__json_uint(prof__json *j, uint64_t v) {
  before_item(j);
  fprintf(j->out, "%" PRIu64, v);
}

void prof__json_bool(prof__json *j, int v) {
  before_item(j);
  fputs(v ? "true" : "false", j->out);
}

void prof__json_null(prof__json *j) {
  before_item(j);
  fputs("null", j->out);
}

void prof__json_raw(prof__json *j, const char *s) {
  before_item(j);
  fputs(s ? s : "null", j->out);
}

void prof__json_kstr(prof__json *j, const char *k, const char *s) {
  prof__json_key(j, k);
  prof__json_str(j, s);
}

void prof__json_knum(prof__json *j, const char *k, double v) {
  prof__json_key(j, k);
  prof__json_num(j, v);
}

void prof__json_kint(prof__json *j, const char *k, int64_t v) {
  prof__json_key(j, k);
  prof__json_int(j, v);
}

void prof__json_kuint(prof__json *j, const char *k, uint64_t v) {
  prof__json_key(j, k);
  prof__json_uint(j, v);
}

void prof__json_kbool(prof__json *j, const char *k, int v) {
  prof__json_key(j, k);
  prof__json_bool(j, v);
}
