/* jsonparse.c — recursive-descent JSON reader behind jsonparse.h. */
#include "analyze/util/jsonparse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JP_MAX_DEPTH 256

typedef struct jp {
  const char *s, *end, *start;
  char *err;
  int failed;
} jp;

static int jp_fail(jp *p, const char *what) {
  if (!p->failed)
    snprintf(p->err, 128, "JSON error at byte %zu: %s", (size_t)(p->s - p->start), what);
  p->failed = 1;
  return -1;
}

static void jp_ws(jp *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static int jp_lit(jp *p, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(p->end - p->s) < n || memcmp(p->s, lit, n) != 0) return jp_fail(p, "bad literal");
  p->s += n;
  return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int jp_number(jp *p, prof__jv *v) {
  const char *b = p->s;
  if (p->s < p->end && *p->s == '-') p->s++;
  if (p->s >= p->end || !is_digit(*p->s)) return jp_fail(p, "bad number");
  if (*p->s == '0') p->s++;
  else while (p->s < p->end && is_digit(*p->s)) p->s++;
  if (p->s < p->end && *p->s == '.') {
    p->s++;
    if (p->s >= p->end || !is_digit(*p->s)) return jp_fail(p, "bad fraction");
    while (p->s < p->end && is_digit(*p->s)) p->s++;
  }
  if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
    p->s++;
    if (p->s < p->end && (*p->s == '+' || *p->s == '-')) p->s++;
    if (p->s >= p->end || !is_digit(*p->s)) return jp_fail(p, "bad exponent");
    while (p->s < p->end && is_digit(*p->s)) p->s++;
  }
  char buf[64];
  size_t n = (size_t)(p->s - b);
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, b, n);
  buf[n] = 0;
  v->type = PROF_JV_NUM;
  v->num = strtod(buf, NULL);
  return 0;
}

static int hex4(jp *p, unsigned *out) {
  if (p->end - p->s < 4) return jp_fail(p, "short \\u escape");
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    char c = *p->s++;
    x <<= 4;
    if (c >= '0' && c <= '9') x |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') x |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') x |= (unsigned)(c - 'A' + 10);
    else return jp_fail(p, "bad \\u escape");
  }
  *out = x;
  return 0;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xc0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static int jp_escape(jp *p, char *o, size_t *n) {
  char c = *p->s++;
  const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
  const char *k = c ? strchr(from, c) : NULL;
  if (k) { o[(*n)++] = to[k - from]; return 0; }
  if (c != 'u') return jp_fail(p, "bad escape");
  unsigned cp;
  if (hex4(p, &cp)) return -1;
  if (cp >= 0xd800 && cp <= 0xdbff) {
    unsigned lo;
    if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u') return jp_fail(p, "lone surrogate");
    p->s += 2;
    if (hex4(p, &lo)) return -1;
    if (lo < 0xdc00 || lo > 0xdfff) return jp_fail(p, "bad surrogate pair");
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  } else if (cp >= 0xdc00 && cp <= 0xdfff) {
    return jp_fail(p, "lone surrogate");
  }
  *n += put_utf8(o + *n, cp);
  return 0;
}

static int jp_string(jp *p, char **out, size_t *outlen) {
  p->s++; /* opening quote */
  const char *b = p->s;
  while (p->s < p->end && *p->s != '"') p->s += (*p->s == '\\' && p->s + 1 < p->end) ? 2 : 1;
  if (p->s >= p->end) return jp_fail(p, "unterminated string");
  size_t cap = (size_t)(p->s - b) + 1;
  char *o = malloc(cap);
  if (!o) return jp_fail(p, "out of memory");
  size_t n = 0;
  p->s = b;
  while (*p->s != '"') {
    unsigned char c = (unsigned char)*p->s;
    if (c < 0x20) { free(o); return jp_fail(p, "control character in string"); }
    p->s++;
    if (c != '\\') { o[n++] = (char)c; continue; }
    if (jp_escape(p, o, &n)) { free(o); return -1; }
  }
  p->s++;
  o[n] = 0;
  *out = o;
  *outlen = n;
  return 0;
}

static int jp_value(jp *p, prof__jv *v, int depth);

static int jp_push(jp *p, prof__jv *v, size_t *cap) {
  if (v->len < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  prof__jv *it = realloc(v->items, nc * sizeof *it);
  if (!it) return jp_fail(p, "out of memory");
  v->items = it;
  if (v->type == PROF_JV_OBJ) {
    char **k = realloc(v->keys, nc * sizeof *k);
    if (!k) return jp_fail(p, "out of memory");
    v->keys = k;
  }
  *cap = nc;
  return 0;
}

static int jp_container(jp *p, prof__jv *v, int depth, int obj) {
  char close = obj ? '}' : ']';
  size_t cap = 0;
  v->type = obj ? PROF_JV_OBJ : PROF_JV_ARR;
  p->s++;
  jp_ws(p);
  if (p->s < p->end && *p->s == close) { p->s++; return 0; }
  for (;;) {
    if (jp_push(p, v, &cap)) return -1;
    prof__jv *it = &v->items[v->len];
    memset(it, 0, sizeof *it);
    if (obj) {
      v->keys[v->len] = NULL;
      jp_ws(p);
      size_t kl;
      if (p->s >= p->end || *p->s != '"') return jp_fail(p, "expected key");
      if (jp_string(p, &v->keys[v->len], &kl)) return -1;
      v->len++;
      jp_ws(p);
      if (p->s >= p->end || *p->s != ':') return jp_fail(p, "expected ':'");
      p->s++;
    } else {
      v->len++;
    }
    if (jp_value(p, it, depth + 1)) return -1;
    jp_ws(p);
    if (p->s < p->end && *p->s == ',') { p->s++; continue; }
    if (p->s < p->end && *p->s == close) { p->s++; return 0; }
    return jp_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int jp_value(jp *p, prof__jv *v, int depth) {
  if (depth > JP_MAX_DEPTH) return jp_fail(p, "nesting too deep");
  jp_ws(p);
  if (p->s >= p->end) return jp_fail(p, "unexpected end");
  switch (*p->s) {
  case '{': return jp_container(p, v, depth, 1);
  case '[': return jp_container(p, v, depth, 0);
  case '"': v->type = PROF_JV_STR; return jp_string(p, &v->str, &v->len);
  case 't': v->type = PROF_JV_BOOL; v->boolean = 1; return jp_lit(p, "true");
  case 'f': v->type = PROF_JV_BOOL; return jp_lit(p, "false");
  case 'n': v->type = PROF_JV_NULL; return jp_lit(p, "null");
  default: return jp_number(p, v);
  }
}

static void jv_clear(prof__jv *v) {
  if (v->type == PROF_JV_ARR || v->type == PROF_JV_OBJ) {
    for (size_t i = 0; i < v->len; i++) {
      jv_clear(&v->items[i]);
      if (v->keys) free(v->keys[i]);
    }
  }
  free(v->items);
  free(v->keys);
  free(v->str);
}

prof__jv *prof__jv_parse(const char *text, size_t len, char *err) {
  jp p = {text, text + len, text, err, 0};
  prof__jv *v = calloc(1, sizeof *v);
  if (!v) {
    snprintf(err, 128, "out of memory");
    return NULL;
  }
  if (jp_value(&p, v, 0) == 0) {
    jp_ws(&p);
    if (p.s != p.end) jp_fail(&p, "trailing characters after the value");
  }
  if (p.failed) {
    prof__jv_free(v);
    return NULL;
  }
  return v;
}

void prof__jv_free(prof__jv *v) {
  if (!v) return;
  jv_clear(v);
  free(v);
}

const prof__jv *prof__jv_get(const prof__jv *obj, const char *key) {
  if (!obj || obj->type != PROF_JV_OBJ) return NULL;
  for (size_t i = obj->len; i-- > 0;)
    if (obj->keys[i] && strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

const prof__jv *prof__jv_at(const prof__jv *arr, size_t i) {
  if (!arr || arr->type != PROF_JV_ARR || i >= arr->len) return NULL;
  return &arr->items[i];
}

const prof__jv *prof__jv_path(const prof__jv *v, const char *path) {
  char key[128];
  while (v && *path) {
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    if (n >= sizeof key) return NULL;
    memcpy(key, path, n);
    key[n] = 0;
    v = prof__jv_get(v, key);
    path += n + (dot ? 1 : 0);
  }
  return v;
}
