/* json.h — a small streaming JSON writer for reports and exporters.
 *
 * Tracks nesting so commas are placed automatically; escapes strings;
 * writes non-finite numbers as null. No allocation.
 */
#ifndef PROF_JSON_H
#define PROF_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct prof__json {
  FILE *out;
  int depth;
  int pretty;
  unsigned char first[64]; /* per depth: no element written yet */
  int after_key;
} prof__json;

void prof__json_init(prof__json *j, FILE *out, int pretty);
void prof__json_obj_begin(prof__json *j);
void prof__json_obj_end(prof__json *j);
void prof__json_arr_begin(prof__json *j);
void prof__json_arr_end(prof__json *j);
void prof__json_key(prof__json *j, const char *key);
void prof__json_str(prof__json *j, const char *s);
void prof__json_strn(prof__json *j, const char *s, size_t n);
void prof__json_num(prof__json *j, double v);
void prof__json_int(prof__json *j, int64_t v);
void prof__json_uint(prof__json *j, uint64_t v);
void prof__json_bool(prof__json *j, int v);
void prof__json_null(prof__json *j);
/* Write raw text where a value goes (already valid JSON). */
void prof__json_raw(prof__json *j, const char *s);

/* key + value shorthands */
void prof__json_kstr(prof__json *j, const char *k, const char *s);
void prof__json_knum(prof__json *j, const char *k, double v);
void prof__json_kint(prof__json *j, const char *k, int64_t v);
void prof__json_kuint(prof__json *j, const char *k, uint64_t v);
void prof__json_kbool(prof__json *j, const char *k, int v);

#endif
