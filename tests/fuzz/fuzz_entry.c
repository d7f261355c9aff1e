/* fuzz_entry.c — runs the whole analyzer over one input taken as a trace:
 * the reader, the analysis, the text/JSON/HTML reports, the Chrome,
 * folded, pprof, flame graph and TensorBoard exports, the diff (the trace
 * against itself), the multi-rank report and `mlprof info`.
 *
 * Nothing is written outside a private temporary directory: reports go to
 * memory streams, the TensorBoard export and the trace itself into the
 * directory, which is emptied after each input and removed at exit. The
 * decompression cap is lowered (MLPROF_READ_MAX_MB=64 unless set) so an
 * input cannot take more memory than the fuzzer allows.
 */
#include "fuzz_entry.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/diff/diff.h"
#include "analyze/export/export_perfetto.h"
#include "analyze/export/export_pprof_heap.h"
#include "analyze/ranks/ranks.h"
#include "analyze/sections/functions/sec_functions.h"
#include "cli.h"

extern const mlprof_cmd mlprof_cmd_info;

static char dir[PATH_MAX - 64], trace[PATH_MAX], tbdir[PATH_MAX];
static int ready;

static void empty_dir(const char *d) {
  DIR *dh = opendir(d);
  if (!dh) return;
  struct dirent *e;
  char p[PATH_MAX];
  while ((e = readdir(dh)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", d, e->d_name);
    unlink(p);
  }
  closedir(dh);
}

static void cleanup(void) {
  empty_dir(tbdir);
  rmdir(tbdir);
  empty_dir(dir);
  rmdir(dir);
}

static int init(void) {
  if (ready) return ready > 0;
  ready = -1;
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/mlprof-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mlprof fuzz: mkdtemp");
    return 0;
  }
  snprintf(trace, sizeof trace, "%s/input.mlpt", dir);
  snprintf(tbdir, sizeof tbdir, "%s/tb", dir);
  atexit(cleanup);
  setenv("MLPROF_READ_MAX_MB", "64", 0);
  setenv("MLPROF_REPORT", "0", 1);
  /* `mlprof info` prints on stdout: send it nowhere. */
  fflush(stdout);
  int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (nul >= 0) {
    dup2(nul, 1);
    close(nul);
  }
  ready = 1;
  return 1;
}

static int put_file(const uint8_t *data, size_t size) {
  int fd = open(trace, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < size) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(fd);
  return off == size ? 0 : -1;
}

/* Run one writer into a memory stream and drop what it wrote. */
typedef int (*writer_fn)(prof__an *an, const void *arg, FILE *out);

static void to_memory(writer_fn fn, prof__an *an, const void *arg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return;
  fn(an, arg, m);
  fclose(m);
  free(buf);
}

static int w_report(prof__an *an, const void *fmt, FILE *o) { return prof__report_write(an, fmt, o); }
static int w_chrome(prof__an *an, const void *opts, FILE *o) { return prof__export_chrome_opts(an, o, opts); }
static int w_folded(prof__an *an, const void *u, FILE *o) { (void)u; return prof__export_folded(an, o); }
static int w_pprof(prof__an *an, const void *u, FILE *o) { (void)u; return prof__export_pprof(an, o); }
static int w_flame(prof__an *an, const void *u, FILE *o) { (void)u; return prof__export_flamegraph(an, o); }
static int w_perfetto(prof__an *an, const void *u, FILE *o) { (void)u; return prof__export_perfetto(an, o, NULL); }
static int w_heap(prof__an *an, const void *u, FILE *o) {
  (void)u;
  return prof__pprof_heap_available(an) ? prof__export_pprof_heap(an, o) : 0;
}
static int w_diff(prof__an *an, const void *fmt, FILE *o) {
  prof__diff d;
  int rc = prof__diff_compute(&d, an, an);
  if (rc == 0) rc = prof__diff_write(&d, fmt, 0, o);
  prof__diff_free(&d);
  return rc;
}
static int w_ranks(prof__an *an, const void *u, FILE *o) {
  (void)an, (void)u;
  char *paths[1] = {trace}, err[256];
  prof__ranks *rs = NULL;
  int rc = prof__ranks_run(&rs, paths, 1, err);
  if (rc == 0) {
    prof__ranks_write(rs, "text", o);
    prof__ranks_write(rs, "json", o);
    prof__ranks_export_chrome(rs, o);
  }
  prof__ranks_free(rs);
  return rc;
}

int mlprof_fuzz_trace(const uint8_t *data, size_t size) {
  if (!init() || put_file(data, size) != 0) return 0;
  char err[256];
  prof__an *an = NULL;
  if (prof__an_run_opts(&an, trace, 1, err) != 0) return 0;
  static const char *const formats[] = {"text", "json", "html"};
  for (size_t i = 0; i < 3; i++) {
    to_memory(w_report, an, formats[i]);
    to_memory(w_diff, an, formats[i]);
  }
  prof__chrome_opts window = {.max_events = 16, .window_begin_ns = 1000, .window_end_ns = 5000000};
  to_memory(w_chrome, an, NULL);
  to_memory(w_chrome, an, &window);
  to_memory(w_folded, an, NULL);
  to_memory(w_pprof, an, NULL);
  to_memory(w_flame, an, NULL);
  to_memory(w_perfetto, an, NULL);
  to_memory(w_heap, an, NULL);
  to_memory(w_ranks, an, NULL);
  prof__export_tensorboard(an, tbdir, NULL, 0, err);
  empty_dir(tbdir);
  prof__an_free(an);
  char *argv[] = {(char *)"info", trace, NULL};
  mlprof_cmd_info.run(2, argv);
  fflush(stdout);
  return 1;
}
