/* test_analyzer_input.c — the analyzer on hostile traces: a memory pool id
 * past the 256 known pools, a module path naming a FIFO, chunks that
 * decompress to far more than the file (the MLPROF_READ_MAX_MB cap, with
 * exit status 2 from the CLI), a chunk larger than mlprof ever writes,
 * terminal escape bytes and newlines in names (escaped in the text report,
 * `mlprof info` and `mlprof diff`, still correct in JSON), a header host
 * name that tries to lead the TensorBoard export out of its folder, and
 * 100 000 thread ids. Each trace is built by hand with the trace writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/diff/diff.h"
#include "analyze/util/termsafe.h"
#include "helpers.h"
#include "mlprof.h"
#include "trace/format.h"
#include "trace/trace.h"
#include "trace/zstd_stream.h"

#define T0 1000000000ull
#define MS 1000000ull

static prof__tw *open_trace(const char *stem, const prof__kv *hdr, size_t n, const char **path) {
  char err[256];
  *path = th_tmp_path(stem, ".mlpt");
  prof__tw *w = prof__tw_open(*path, hdr, n, err);
  assert_non_null(w);
  return w;
}

static void put(prof__tw *w, uint8_t type, uint32_t name, uint64_t ts, uint64_t a, uint64_t b, uint16_t aux) {
  prof__event e = {0};
  e.type = type;
  e.name = name;
  e.ts = ts;
  e.a = a;
  e.b = b;
  e.aux = aux;
  assert_int_equal(prof__tw_events(w, 1, &e, 1), 0);
}

static void close_trace(prof__tw *w) {
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  int rc = prof__an_run_opts(&an, path, 1, err);
  if (rc) fprintf(stderr, "analyze: %s\n", err);
  assert_int_equal(rc, 0);
  return an;
}

/* The report in `format` as a malloc'd string. */
static char *report(prof__an *an, const char *format) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_non_null(m);
  assert_int_equal(prof__report_write(an, format, m), 0);
  fclose(m);
  return buf;
}

/* ---- pool ids ----------------------------------------------------------- */

/* Full memory mode; a block of pool 300 (aux is 16 bits in the format, the
 * analyzer names 256 pools) and one of pool 7 are still allocated at exit. */
static const char *pool_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "pools"}, {"pid", "3"}, {"mem.mode", "full"}};
  prof__tw *w = open_trace("pool", hdr, 3, &path);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  put(w, PROF_EV_ALLOC, 1, T0 + MS, 0x10000, 4096, 300);
  put(w, PROF_EV_ALLOC, 2, T0 + 2 * MS, 0x20000, 1 << 20, 65535);
  put(w, PROF_EV_ALLOC, 3, T0 + 3 * MS, 0x30000, 512, 7);
  put(w, PROF_EV_STEP_END, 0, T0 + 10 * MS, 0, 0, 0);
  close_trace(w);
  return path;
}

static void pool_id_past_the_pool_table_is_named_invalid(void **state) {
  (void)state;
  prof__an *an = analyze(pool_trace());
  char *html = report(an, "html"), *json = report(an, "json"), *text = report(an, "text");
  assert_non_null(strstr(html, "(invalid pool id)"));
  assert_non_null(strstr(json, "\"(invalid pool id)\""));
  assert_non_null(text);
  free(html);
  free(json);
  free(text);
  prof__an_free(an);
}

/* ---- a FIFO named as a module ------------------------------------------- */

/* Samples whose stack points into a "module" that is a FIFO nobody writes:
 * opening it for reading would wait for a writer for ever. */
static const char *fifo_trace(const char *fifo) {
  const char *path;
  prof__kv hdr[] = {{"program", "fifo"}, {"pid", "4"}, {"cpu.sample_hz", "100"}};
  prof__tw *w = open_trace("fifo", hdr, 3, &path);
  prof__buf b = {0};
  prof__buf_varint(&b, 1);
  prof__buf_str(&b, fifo, strlen(fifo));
  prof__buf_varint(&b, 0);        /* bias */
  prof__buf_varint(&b, 0x400000); /* start */
  prof__buf_varint(&b, 0x100000); /* size */
  prof__buf_str(&b, "", 0);
  assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_MODULES, b.p, b.len), 0);
  prof__buf_free(&b);
  prof__buf_varint(&b, 1);
  prof__buf_varint(&b, 1);
  prof__buf_varint(&b, 1);
  prof__buf_svarint(&b, 0x401234);
  assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_STACKS, b.p, b.len), 0);
  prof__buf_free(&b);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  for (int i = 1; i <= 5; i++) put(w, PROF_EV_SAMPLE, 1, T0 + (uint64_t)i * MS, 0, 1000, 0);
  put(w, PROF_EV_STEP_END, 0, T0 + 10 * MS, 0, 0, 0);
  close_trace(w);
  return path;
}

static void fifo_module_is_skipped_without_blocking(void **state) {
  (void)state;
  const char *fifo = th_tmp_path("module-fifo", ".so");
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  const char *path = fifo_trace(fifo);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* A blocked open is ended by the alarm: the test then fails on the
     * signal instead of hanging the suite. */
    alarm(60);
    prof__an *an = NULL;
    char err[256];
    if (prof__an_run_opts(&an, path, 1, err) != 0) _exit(3);
    FILE *null = fopen("/dev/null", "w");
    static const char *const f[] = {"text", "json", "html"};
    for (int i = 0; i < 3; i++)
      if (prof__report_write(an, f[i], null) != 0) _exit(4);
    fclose(null);
    prof__an_free(an);
    _exit(0);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_false(WIFSIGNALED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  unlink(fifo);
}

/* ---- decompression cap -------------------------------------------------- */

/* `n` chunks of an unknown type, each `mib` MiB of zeros: a file of a few
 * KiB that decompresses to n * mib MiB. */
static const char *bomb_trace(int n, size_t mib) {
  const char *path;
  prof__kv hdr[] = {{"program", "bomb"}, {"pid", "5"}};
  prof__tw *w = open_trace("bomb", hdr, 2, &path);
  void *zeros = calloc(mib, 1u << 20);
  assert_non_null(zeros);
  for (int i = 0; i < n; i++) assert_int_equal(prof__tw_chunk(w, 200, zeros, mib << 20), 0);
  free(zeros);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  put(w, PROF_EV_STEP_END, 0, T0 + MS, 0, 0, 0);
  close_trace(w);
  return path;
}

static int analyze_rc(const char *path, char *err) {
  prof__an *an = NULL;
  int rc = prof__an_run_opts(&an, path, 1, err);
  prof__an_free(an);
  return rc;
}

static void decompression_past_the_cap_is_refused(void **state) {
  (void)state;
  const char *path = bomb_trace(3, 8); /* 24 MiB */
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(st.st_size < 64 * 1024);
  char err[256];
  setenv("MLPROF_READ_MAX_MB", "16", 1);
  assert_int_equal(analyze_rc(path, err), PROF_ENOMEM);
  assert_non_null(strstr(err, "MLPROF_READ_MAX_MB"));
  /* The CLI says the same and exits 2. */
  char cmd[1024];
  const char *out = th_tmp_path("bomb-info", ".txt");
  snprintf(cmd, sizeof cmd, "'%s/mlprof' info '%s'", MLPROF_BIN_DIR, path);
  assert_int_equal(th_run(cmd, out), 2);
  char *msg = th_read_file(out, NULL);
  assert_non_null(msg);
  assert_non_null(strstr(msg, "MLPROF_READ_MAX_MB"));
  free(msg);
  setenv("MLPROF_READ_MAX_MB", "32", 1);
  assert_int_equal(analyze_rc(path, err), 0);
  setenv("MLPROF_READ_MAX_MB", "0", 1); /* no cap */
  assert_int_equal(analyze_rc(path, err), 0);
  unsetenv("MLPROF_READ_MAX_MB");
}

static void default_cap_stops_a_gigabyte_bomb(void **state) {
  (void)state;
  unsetenv("MLPROF_READ_MAX_MB");
  const char *path = bomb_trace(136, 8); /* 1088 MiB from a few KiB */
  char err[256];
  assert_int_equal(analyze_rc(path, err), PROF_ENOMEM);
  assert_non_null(strstr(err, "1024 MiB"));
  unlink(path);
}

static void cap_grows_with_the_file_and_ignores_bad_values(void **state) {
  (void)state;
  char err[256];
  unsetenv("MLPROF_READ_MAX_MB");
  assert_int_equal(prof__reader_cap_bytes(1000, err), (uint64_t)PROF_READ_MAX_MB_DEFAULT << 20);
  assert_string_equal(err, "");
  assert_int_equal(prof__reader_cap_bytes(1ull << 30, err), (uint64_t)PROF_READ_RATIO << 30);
  setenv("MLPROF_READ_MAX_MB", "lots", 1);
  assert_int_equal(prof__reader_cap_bytes(1000, err), (uint64_t)PROF_READ_MAX_MB_DEFAULT << 20);
  assert_non_null(strstr(err, "MLPROF_READ_MAX_MB"));
  setenv("MLPROF_READ_MAX_MB", "-5", 1);
  prof__reader_cap_bytes(1000, err);
  assert_non_null(strstr(err, "MLPROF_READ_MAX_MB"));
  setenv("MLPROF_READ_MAX_MB", "0", 1);
  assert_int_equal(prof__reader_cap_bytes(1000, err), 0);
  unsetenv("MLPROF_READ_MAX_MB");
}

/* ---- a chunk larger than the writer writes -------------------------------- */

/* Append a chunk (payload stored as given) to the file at `path`. */
static void append_chunk(const char *path, int type, int codec, uint32_t raw, const void *stored, uint32_t n) {
  unsigned char h[PROF_CHUNK_HDR];
  prof__le32(h, PROF_CHUNK_MAGIC);
  h[4] = (unsigned char)type;
  h[5] = (unsigned char)codec;
  h[6] = h[7] = 0;
  prof__le32(h + 8, raw);
  prof__le32(h + 12, n);
  prof__le32(h + 16, prof__crc32c(prof__crc32c(0, h + 4, 12), stored, n));
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  assert_int_equal(fwrite(h, 1, sizeof h, f), sizeof h);
  assert_int_equal(fwrite(stored, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

/* One step, then a zstd chunk of an unknown type that decodes to 9 MiB of
 * zeros (a few hundred bytes in the file), then a footer. */
static const char *oversize_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "oversize"}, {"pid", "8"}};
  prof__tw *w = open_trace("oversize", hdr, 2, &path);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  put(w, PROF_EV_STEP_END, 0, T0 + MS, 0, 0, 0);
  assert_int_equal(prof__tw_flush(w), 0);
  prof__tw_abort(w);
  size_t raw = PROF_CHUNK_RAW_MAX + (1u << 20), cap = 0;
  uint8_t *zeros = calloc(raw, 1), *z = NULL;
  prof__zc *zc = prof__zc_new(1);
  assert_true(zeros && zc);
  size_t n = prof__zc_compress(zc, zeros, raw, &z, &cap);
  assert_true(n > 0 && n < 4096);
  append_chunk(path, 200, PROF_CODEC_ZSTD, (uint32_t)raw, z, (uint32_t)n);
  static const uint8_t footer[] = {0}; /* no pairs */
  append_chunk(path, PROF_CHUNK_FOOTER, PROF_CODEC_RAW, 1, footer, 1);
  prof__zc_free(zc);
  free(z);
  free(zeros);
  return path;
}

static void chunk_larger_than_mlprof_writes_is_refused(void **state) {
  (void)state;
  unsetenv("MLPROF_READ_MAX_MB");
  const char *path = oversize_trace();
  char err[256];
  assert_int_equal(analyze_rc(path, err), PROF_ENOMEM);
  assert_non_null(strstr(err, "more than the 8 MiB mlprof writes in one chunk"));
  assert_non_null(strstr(err, "MLPROF_READ_MAX_MB=0"));
  /* The CLI says the same and exits 2. */
  char cmd[1024];
  const char *out = th_tmp_path("oversize-info", ".txt");
  snprintf(cmd, sizeof cmd, "'%s/mlprof' info '%s'", MLPROF_BIN_DIR, path);
  assert_int_equal(th_run(cmd, out), 2);
  char *msg = th_read_file(out, NULL);
  assert_non_null(msg);
  assert_non_null(strstr(msg, "8 MiB mlprof writes in one chunk"));
  free(msg);
  /* Read anyway when asked to. */
  setenv("MLPROF_READ_MAX_MB", "0", 1);
  assert_int_equal(analyze_rc(path, err), 0);
  unsetenv("MLPROF_READ_MAX_MB");
  unlink(path);
}

/* ---- terminal escapes --------------------------------------------------- */

#define EVIL "fwd\x1b]0;owned\x07\x1b[2J"

static const char *escape_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "esc\x1b[31m"}, {"pid", "6"}};
  prof__tw *w = open_trace("esc", hdr, 2, &path);
  assert_int_equal(prof__tw_string(w, 1, EVIL, strlen(EVIL)), 0);
  assert_int_equal(prof__tw_thread(w, 1, "thr\x1b[1A\x9b", 0, 0), 0);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  put(w, PROF_EV_RANGE_BEGIN, 1, T0 + MS, 0, 0, 0);
  put(w, PROF_EV_RANGE_END, 1, T0 + 9 * MS, 0, 0, 0);
  put(w, PROF_EV_STEP_END, 0, T0 + 10 * MS, 0, 0, 0);
  close_trace(w);
  return path;
}

static void text_report_escapes_control_bytes_of_names(void **state) {
  (void)state;
  prof__an *an = analyze(escape_trace());
  char *text = report(an, "text");
  assert_null(strchr(text, 0x1b));
  assert_null(strchr(text, 0x07));
  assert_non_null(strstr(text, "fwd\\x1b]0;owned\\x07\\x1b[2J"));
  char *json = report(an, "json");
  assert_non_null(strstr(json, "fwd\\u001b]0;owned\\u0007\\u001b[2J"));
  assert_null(strchr(json, 0x1b));
  free(text);
  free(json);
  prof__an_free(an);
}

static void info_escapes_header_and_thread_names(void **state) {
  (void)state;
  const char *path = escape_trace();
  const char *out = th_tmp_path("esc-info", ".txt");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s/mlprof' info '%s'", MLPROF_BIN_DIR, path);
  assert_int_equal(th_run(cmd, out), 0);
  char *s = th_read_file(out, NULL);
  assert_non_null(s);
  assert_null(strchr(s, 0x1b));
  assert_non_null(strstr(s, "esc\\x1b[31m"));
  assert_non_null(strstr(s, "thr\\x1b[1A\\x9b"));
  free(s);
}

/* ---- newlines in names ---------------------------------------------------- */

#define NL_RANGE "fwd\nFAKE range"

/* A range whose name holds a newline makes every fifth of 30 steps slow, so
 * that a finding names it too; the header, a thread and a mark carry
 * newlines as well. */
static const char *newline_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "nl\nFAKE program"}, {"pid", "9"}, {"hostname", "h\nFAKE host"}};
  prof__tw *w = open_trace("newline", hdr, 3, &path);
  assert_int_equal(prof__tw_string(w, 1, NL_RANGE, strlen(NL_RANGE)), 0);
  assert_int_equal(prof__tw_string(w, 2, "mark\nFAKE mark", 15), 0);
  assert_int_equal(prof__tw_thread(w, 1, "thr\nFAKE thread", 0, 0), 0);
  uint64_t ts = T0;
  for (uint64_t k = 0; k < 30; k++) {
    put(w, PROF_EV_STEP_BEGIN, 0, ts, k, 0, 0);
    put(w, PROF_EV_RANGE_BEGIN, 1, ts + MS, 0, 0, 0);
    put(w, PROF_EV_MARK, 2, ts + MS + 1, 0, 0, 0);
    ts += (k % 5 == 4 ? 20 : 5) * MS;
    put(w, PROF_EV_RANGE_END, 1, ts, 0, 0, 0);
    ts += MS;
    put(w, PROF_EV_STEP_END, 0, ts, k, 0, 0);
  }
  close_trace(w);
  return path;
}

/* No line of `text` begins with the injected "FAKE". */
static void no_injected_line(const char *text) {
  assert_non_null(text);
  assert_null(strstr(text, "\nFAKE"));
}

static void newlines_in_names_are_escaped_in_text_output(void **state) {
  (void)state;
  const char *path = newline_trace();
  prof__an *an = analyze(path);
  char *text = report(an, "text");
  no_injected_line(text);
  assert_non_null(strstr(text, "fwd\\x0aFAKE range"));   /* the range table */
  assert_non_null(strstr(text, "nl\\x0aFAKE program"));  /* the header */
  assert_non_null(strstr(text, "mark\\x0aFAKE mark"));   /* the marks section */
  int named = 0; /* a finding names the range in its title or measurement */
  for (size_t i = 0; i < an->nfindings; i++)
    named |= strstr(an->findings[i].title, NL_RANGE) || strstr(an->findings[i].measured, NL_RANGE);
  assert_true(named);
  char *json = report(an, "json");
  assert_non_null(strstr(json, "\"fwd\\nFAKE range\""));
  /* The diff and `mlprof info` print names too. */
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  prof__diff d;
  assert_int_equal(prof__diff_compute(&d, an, an), 0);
  assert_int_equal(prof__diff_write(&d, "text", 0, m), 0);
  prof__diff_free(&d);
  fclose(m);
  no_injected_line(buf);
  assert_non_null(strstr(buf, "fwd\\x0aFAKE range"));
  char cmd[1024];
  const char *out = th_tmp_path("newline-info", ".txt");
  snprintf(cmd, sizeof cmd, "'%s/mlprof' info '%s'", MLPROF_BIN_DIR, path);
  assert_int_equal(th_run(cmd, out), 0);
  char *info = th_read_file(out, NULL);
  no_injected_line(info);
  assert_non_null(strstr(info, "thr\\x0aFAKE thread"));
  free(info);
  free(buf);
  free(text);
  free(json);
  prof__an_free(an);
}

/* The filter itself: what passes, what is escaped, split writes. */
static char *through_filter(const char *in, size_t n, size_t piece) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  FILE *t = prof__term_open(m);
  assert_non_null(t);
  for (size_t i = 0; i < n; i += piece) {
    fwrite(in + i, 1, n - i < piece ? n - i : piece, t);
    fflush(t);
  }
  assert_int_equal(prof__term_close(t), 0);
  fclose(m);
  return buf;
}

static void filter_keeps_utf8_and_escapes_controls(void **state) {
  (void)state;
  static const char in[] = "a\tb\nc\r\x7f \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \xc2\x9b[1m \xff \xe6\x97 x \xed\xa0\x80";
  static const char want[] = "a\tb\nc\\x0d\\x7f \xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \\xc2\\x9b[1m \\xff \\xe6\\x97 x "
                             "\\xed\\xa0\\x80";
  for (size_t piece = 1; piece <= sizeof in; piece++) {
    char *out = through_filter(in, sizeof in - 1, piece);
    assert_string_equal(out, want);
    free(out);
  }
  char *out = through_filter("\xe6\x97", 2, 2); /* cut short at the end */
  assert_string_equal(out, "\\xe6\\x97");
  free(out);
}

/* ---- 100 000 thread ids ---------------------------------------------------- */

#define NTHREADS 100000u
#define TID0 1000u

/* Thread 1 runs 10 steps with "work" inside. Each of NTHREADS other threads
 * runs "work" around "inner" and reads a cpuctr counter, its blocks
 * interleaved with every other thread's (all begins, then all inner ranges,
 * then all ends), so a section that mixed up two threads' state would get
 * the nesting wrong. Thread t's "work" lasts (t % 7 + 2) us, "inner" 1 us.
 * Step 10 begins on thread 1 and ends on the last thread; every other
 * thread ends a step number that was never begun. */
static const char *threads_trace(void) {
  const char *path;
  prof__kv hdr[] = {{"program", "threads"}, {"pid", "10"}};
  prof__tw *w = open_trace("threads", hdr, 2, &path);
  assert_int_equal(prof__tw_string(w, 1, "work", 4), 0);
  assert_int_equal(prof__tw_string(w, 2, "inner", 5), 0);
  assert_int_equal(prof__tw_string(w, 3, "cpuctr/cpu_ns", 13), 0);
  for (uint64_t k = 0; k < 10; k++) {
    put(w, PROF_EV_STEP_BEGIN, 0, T0 + k * 10 * MS, k, 0, 0);
    put(w, PROF_EV_RANGE_BEGIN, 1, T0 + k * 10 * MS + MS, 0, 0, 0);
    put(w, PROF_EV_RANGE_END, 1, T0 + k * 10 * MS + 8 * MS, 0, 0, 0);
    put(w, PROF_EV_STEP_END, 0, T0 + k * 10 * MS + 9 * MS, k, 0, 0);
  }
  put(w, PROF_EV_STEP_BEGIN, 0, T0 + 200 * MS, 10, 0, 0);
  const uint64_t t1 = T0 + 100 * MS;
  for (uint32_t t = TID0; t < TID0 + NTHREADS; t++) {
    prof__event e = {.ts = t1, .type = PROF_EV_RANGE_BEGIN, .name = 1, .cat = PROF_CAT_DATA};
    assert_int_equal(prof__tw_events(w, t, &e, 1), 0);
  }
  for (uint32_t t = TID0; t < TID0 + NTHREADS; t++) {
    prof__event e[3] = {{.ts = t1 + 500, .type = PROF_EV_RANGE_BEGIN, .name = 2},
                        {.ts = t1 + 1000, .type = PROF_EV_COUNTER, .name = 3, .a = prof__f64_bits(t)},
                        {.ts = t1 + 1500, .type = PROF_EV_RANGE_END, .name = 2}};
    assert_int_equal(prof__tw_events(w, t, e, 3), 0);
  }
  for (uint32_t t = TID0; t < TID0 + NTHREADS; t++) {
    prof__event e[2] = {{.ts = t1 + (t % 7 + 2) * 1000, .type = PROF_EV_RANGE_END, .name = 1},
                        {.ts = T0 + 300 * MS, .type = PROF_EV_STEP_END, .a = t + 1 == TID0 + NTHREADS ? 10 : 1000000 + t}};
    assert_int_equal(prof__tw_events(w, t, e, 2), 0);
    char name[24];
    snprintf(name, sizeof name, "worker-%u", t);
    assert_int_equal(prof__tw_thread(w, t, name, 0, 0), 0);
  }
  close_trace(w);
  return path;
}

static const prof__range_stat *range_named(const prof__an *an, const char *name) {
  for (size_t i = 0; i < an->nranges; i++)
    if (strcmp(prof__an_str(an, an->ranges[i].name), name) == 0) return &an->ranges[i];
  return NULL;
}

static void many_thread_ids_are_analyzed_per_thread(void **state) {
  (void)state;
  prof__an *an = analyze(threads_trace());
  assert_int_equal(an->nthreads, NTHREADS + 1);
  uint64_t work_ns = 0;
  for (uint32_t t = TID0; t < TID0 + NTHREADS; t++) {
    size_t ti = prof__an_thread_index(an, t);
    assert_true(ti < an->nthreads);
    const prof__thread_info *th = &an->threads[ti];
    assert_int_equal(th->tid, t);
    assert_int_equal(th->events, 6);
    char name[24];
    snprintf(name, sizeof name, "worker-%u", t);
    assert_string_equal(th->name, name);
    assert_int_equal(th->steps, 0);
    work_ns += (t % 7 + 2) * 1000;
  }
  assert_int_equal(prof__an_thread_index(an, TID0 + NTHREADS), SIZE_MAX);
  assert_int_equal(an->threads[prof__an_thread_index(an, 1)].steps, 11); /* it began all of them */
  const prof__range_stat *work = NULL, *inner = range_named(an, "inner");
  for (size_t i = 0; i < an->nranges; i++) /* the workers' "work" is data, thread 1's compute */
    if (an->ranges[i].cat == PROF_CAT_DATA) work = &an->ranges[i];
  assert_true(work && inner);
  assert_int_equal(work->count, NTHREADS);
  assert_int_equal(work->total_ns, work_ns);
  assert_int_equal(work->self_ns, work_ns - NTHREADS * 1000ull);
  assert_int_equal(inner->count, NTHREADS);
  assert_int_equal(inner->total_ns, NTHREADS * 1000ull);
  /* Step 10 ended on another thread; the other ends matched nothing. */
  assert_int_equal(an->nsteps, 11);
  assert_int_equal(an->steps[10].number, 10);
  assert_int_equal(an->steps[10].end_ns, T0 + 300 * MS);
  assert_int_equal(an->unmatched_step_ends, NTHREADS - 1);
  /* The graph section nested "inner" in "work" on every thread. */
  char *json = report(an, "json");
  assert_non_null(strstr(json, "\"name\": \"inner\""));
  free(json);
  char *text = report(an, "text");
  assert_non_null(strstr(text, "in:  work"));
  free(text);
  prof__an_free(an);
}

/* ---- TensorBoard file name ---------------------------------------------- */

static void tensorboard_file_stays_in_its_folder(void **state) {
  (void)state;
  const char *path;
  prof__kv hdr[] = {{"program", "tb"}, {"pid", "../../x"}, {"hostname", "../../../escaped"}};
  prof__tw *w = open_trace("tbname", hdr, 3, &path);
  put(w, PROF_EV_STEP_BEGIN, 0, T0, 0, 0, 0);
  put(w, PROF_EV_STEP_END, 0, T0 + MS, 0, 0, 0);
  close_trace(w);
  prof__an *an = analyze(path);
  const char *dir = th_tmp_path("tbdir", "");
  char out[1024], err[256];
  assert_int_equal(prof__export_tensorboard(an, dir, out, sizeof out, err), 0);
  prof__an_free(an);
  size_t n = strlen(dir);
  assert_memory_equal(out, dir, n);
  assert_int_equal(out[n], '/');
  assert_null(strchr(out + n + 1, '/'));
  assert_true(th_exists(out));
  unlink(out);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pool_id_past_the_pool_table_is_named_invalid),
      cmocka_unit_test(fifo_module_is_skipped_without_blocking),
      cmocka_unit_test(decompression_past_the_cap_is_refused),
      cmocka_unit_test(default_cap_stops_a_gigabyte_bomb),
      cmocka_unit_test(chunk_larger_than_mlprof_writes_is_refused),
      cmocka_unit_test(cap_grows_with_the_file_and_ignores_bad_values),
      cmocka_unit_test(text_report_escapes_control_bytes_of_names),
      cmocka_unit_test(info_escapes_header_and_thread_names),
      cmocka_unit_test(newlines_in_names_are_escaped_in_text_output),
      cmocka_unit_test(filter_keeps_utf8_and_escapes_controls),
      cmocka_unit_test(tensorboard_file_stays_in_its_folder),
      cmocka_unit_test(many_thread_ids_are_analyzed_per_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
