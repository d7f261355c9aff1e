/* test_html_util.h — shared by the HTML report tests: write small traces by
 * hand, render a trace's HTML report into memory and pick sections out of
 * it. Include after cmocka.h. */
#ifndef TEST_HTML_UTIL_H
#define TEST_HTML_UTIL_H

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "trace/trace.h"

/* Writing small traces by hand: one event, one string, and the footer. */
static inline void put(prof__tw *w, uint32_t tid, uint64_t ts, int type, uint32_t name, uint16_t aux,
                       uint64_t a, uint64_t b) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .aux = aux, .name = name, .a = a, .b = b};
  assert_int_equal(prof__tw_events(w, tid, &e, 1), 0);
}

static inline void str(prof__tw *w, uint32_t id, const char *s) {
  assert_int_equal(prof__tw_string(w, id, s, strlen(s)), 0);
}

/* A MODULES chunk naming this test program as the one module, covering
 * every address, so stacks that point at its own functions are named. */
static inline int th_first_bias(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  *(uintptr_t *)arg = (uintptr_t)info->dlpi_addr;
  return 1; /* the first object is the program itself */
}

static inline void modules_chunk(prof__tw *w) {
  char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  assert_true(n > 0);
  exe[n] = 0;
  uintptr_t bias = 0;
  dl_iterate_phdr(th_first_bias, &bias);
  prof__buf b = {0};
  prof__buf_varint(&b, 1);
  prof__buf_str(&b, exe, (size_t)n);
  prof__buf_varint(&b, bias);
  prof__buf_varint(&b, 0);
  prof__buf_varint(&b, UINT64_MAX / 2);
  prof__buf_str(&b, "", 0);
  assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_MODULES, b.p, b.len), 0);
  prof__buf_free(&b);
}

static inline const char *close_trace(prof__tw *w, const char *path) {
  prof__kv f[] = {{"events_written", "0"}, {"events_lost", "0"}};
  assert_int_equal(prof__tw_close(w, f, 2), 0);
  return path;
}

/* The HTML report of the trace at `path` (malloc'd); its length in *len. */
__attribute__((noinline, unused)) static char *html_of_len(const char *path, size_t *len) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  assert_int_equal(prof__report_write(an, "html", f), 0);
  fclose(f);
  prof__an_free(an);
  if (len) *len = n;
  return text;
}

/* The text of section `id` (a copy), or NULL when absent. */
static inline char *html_section(const char *html, const char *id) {
  char buf[96];
  snprintf(buf, sizeof buf, "<section class=\"sec\" id=\"%s\">", id);
  const char *b = strstr(html, buf);
  if (!b) return NULL;
  const char *e = strstr(b, "</section>");
  assert_non_null(e);
  return strndup(b, (size_t)(e - b));
}

/* Fail unless `needle` occurs in `sec`. */
static inline void html_expect(const char *sec, const char *needle) {
  if (!strstr(sec, needle)) fail_msg("missing: %s", needle);
}

#endif
