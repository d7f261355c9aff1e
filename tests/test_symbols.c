/* test_symbols.c — symbolized stacks as every writer shows them, from
 * hand-made traces whose stacks hold addresses of this very program (the
 * module map is the real one, written by the stack module): names are
 * demangled (C++ through a libstdc++ found at run time, Rust legacy hashes
 * dropped); mlprof's own frames are charged alike by the report, the folded
 * export and pprof; stacks that read the same are one folded line; Python
 * frames recorded as tagged addresses resolve from the trace's table into
 * "file.py:LINE function" frames and the Python view; JIT code is named
 * from a perf map; a module file truncated while it is read (fstat is
 * mocked to truncate it) leaves its frames unnamed, never a SIGBUS. */
// wrap: fstat
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/sections/stacks/symbols.h"
#include "stack/stack.h"
#include "test_analyze_tb.h"
#include "trace/rec_stacks.h"

/* Functions whose addresses the stacks hold: long enough that +5 stays inside. */
volatile int sink;
__attribute__((noinline)) void sym_leaf(void) {
  for (int i = 0; i < 8; i++) sink += i;
}
__attribute__((noinline)) void sym_caller(void) {
  sym_leaf();
  for (int i = 0; i < 8; i++) sink += i;
}
__attribute__((noinline)) void sym_outer(void) {
  sym_caller();
  for (int i = 0; i < 8; i++) sink += i;
}

static void sample(tb *t, uint64_t ts, uint32_t stack, uint64_t weight) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = PROF_EV_SAMPLE;
  e.name = stack;
  e.b = weight;
  if (prof__tw_events(t->w, 1, &e, 1)) abort();
}

static uint32_t intern(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d) {
  uintptr_t pcs[4] = {a, b, c, d};
  int n = d ? 4 : c ? 3 : 2;
  uint32_t id = prof__stack_intern(pcs, n);
  assert_true(id > 0);
  return id;
}

static char *capture(prof__an *an, int (*fn)(prof__an *, FILE *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(fn(an, f), 0);
  fclose(f);
  return buf;
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  return an;
}

static const prof__fn_func *func_named(prof__an *an, const char *name) {
  const prof__fn_st *s = prof__an_section(an, "functions");
  for (size_t i = 0; s && i < s->nf; i++)
    if (strcmp(s->f[i].name, name) == 0) return &s->f[i];
  return NULL;
}

static void cxx_and_rust_names_are_demangled(void **state) {
  (void)state;
  char *a = prof__demangle("_ZN2ns5Klass6methodIdEET_S2_");
  assert_non_null(a); /* this C program does not link libstdc++: found at run time */
  assert_string_equal(a, "double ns::Klass::method<double>(double)");
  free(a);
  char *r = prof__demangle("_ZN4core3fmt5write17h0123456789abcdefE");
  assert_non_null(r);
  assert_string_equal(r, "core::fmt::write");
  free(r);
  r = prof__demangle("_ZN5alloc3vec12Vec$LT$T$GT$4push17h00112233445566aaE");
  assert_non_null(r);
  assert_string_equal(r, "alloc::vec::Vec<T>::push");
  free(r);
  assert_null(prof__demangle("plain_c_function"));
  assert_null(prof__demangle("_Zbogus"));
}

static void put_str(prof__buf *b, const char *s) { prof__buf_str(b, s, strlen(s)); }

#define PY_FWD ((uintptr_t)(PROF_PYFRAME_TAG | (6ull << 47) | 0x7f0000001000ull))
#define PY_MOD ((uintptr_t)(PROF_PYFRAME_TAG | (3ull << 47) | 0x7f0000002000ull))
#define PY_GONE ((uintptr_t)(PROF_PYFRAME_TAG | (1ull << 47) | 0x7f0000003000ull))

static prof__an *an;
static char *folded;

/* One trace for every case (the module map is written once per process):
 *  - mlprof's own frames innermost (3 periods) beside the user's (5);
 *  - two stacks in the same functions at different addresses (3 + 4);
 *  - Python frames (table written here) over native code (6), as the
 *    innermost frames (2), and one whose code the writer never named (1);
 *  - JIT code at an address outside every module, in a perf map (2). */
static int setup(void **state) {
  (void)state;
  const char *dir = th_tmp_path("perfmap", "");
  char cmd[600], path[600];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  if (th_run(cmd, NULL) != 0) return -1;
  snprintf(path, sizeof path, "%s/perf-4242.map", dir); /* 4242: the pid in tb_open's header */
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("100000 40 other_stub\n100040 1c0 _ZN3jit6kernelEv\n", f);
  fclose(f);
  setenv("MLPROF_PERF_MAP_DIR", dir, 1);

  prof__kv mem_mode[] = {{"mem.mode", "full"}};
  tb t = tb_open_with("symbols", mem_mode, 1);
  uint32_t prof = intern((uintptr_t)prof_range_push + 1, (uintptr_t)sym_caller + 5, (uintptr_t)sym_outer + 5, 0);
  uint32_t user = intern((uintptr_t)sym_leaf + 1, (uintptr_t)sym_caller + 5, (uintptr_t)sym_outer + 5, 0);
  uint32_t a = intern((uintptr_t)sym_leaf + 1, (uintptr_t)sym_caller + 5, 0, 0);
  uint32_t b = intern((uintptr_t)sym_leaf + 2, (uintptr_t)sym_caller + 6, 0, 0);
  uint32_t native = intern((uintptr_t)sym_leaf + 1, PY_FWD, PY_MOD, (uintptr_t)sym_outer + 5);
  uint32_t inpy = intern(PY_FWD, PY_MOD, (uintptr_t)sym_outer + 5, 0);
  uint32_t lost = intern(PY_GONE, (uintptr_t)sym_outer + 5, 0, 0);
  uint32_t jit = intern(0x100100, (uintptr_t)sym_outer + 5, 0, 0);
  if (prof__stack_emit(t.w) != 0 || a == b) return -1;
  prof__buf pb = {0};
  prof__buf_varint(&pb, 2);
  prof__buf_varint(&pb, PY_FWD);
  put_str(&pb, "/work/train.py");
  put_str(&pb, "Net.forward");
  prof__buf_svarint(&pb, 42);
  prof__buf_varint(&pb, PY_MOD);
  put_str(&pb, "/work/train.py");
  put_str(&pb, "<module>");
  prof__buf_svarint(&pb, 7);
  if (prof__tw_chunk(t.w, PROF_CHUNK_PYFRAMES, pb.p, pb.len) != 0) return -1;
  prof__buf_free(&pb);
  sample(&t, 1000, prof, 3);
  sample(&t, 2000, user, 5);
  sample(&t, 3000, a, 3);
  sample(&t, 4000, b, 4);
  sample(&t, 5000, native, 6);
  sample(&t, 6000, inpy, 2);
  sample(&t, 7000, lost, 1);
  sample(&t, 8000, jit, 2);
  for (int i = 0; i < 5; i++) { /* allocations from the two same-reading stacks: 3 x 100 B and 2 x 200 B */
    prof__event e;
    memset(&e, 0, sizeof e);
    e.ts = 9000 + (uint64_t)i;
    e.type = PROF_EV_ALLOC;
    e.name = i < 3 ? a : b;
    e.a = 0x10000 + 0x100 * (uint64_t)i;
    e.b = i < 3 ? 100 : 200;
    if (prof__tw_events(t.w, 1, &e, 1)) return -1;
  }
  an = analyze(tb_close(&t, "0"));
  folded = capture(an, prof__export_folded);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  prof__an_free(an);
  free(folded);
  unsetenv("MLPROF_PERF_MAP_DIR");
  return 0;
}

/* A sample whose innermost frames are mlprof's: one "[mlprof]" frame with
 * the self time in the folded export and pprof, and the same weight on the
 * report's own "profiler" line (never a function row); its caller gets no
 * self time but keeps it in its total, everywhere alike. */
static void profiler_frames_are_charged_alike_everywhere(void **state) {
  (void)state;
  const prof__fn_func *m = func_named(an, "[mlprof]"), *c = func_named(an, "sym_caller");
  assert_null(m);
  assert_non_null(c);
  const prof__fn_st *fs = prof__an_section(an, "functions");
  assert_non_null(fs);
  assert_int_equal(fs->own_w, 3);
  assert_int_equal(c->self, 0);
  assert_int_equal(c->total, 15);
  assert_non_null(strstr(folded, "sym_outer;sym_caller;[mlprof] 3\n"));
  assert_non_null(strstr(folded, "sym_outer;sym_caller;sym_leaf 5\n"));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_pprof(an, f), 0);
  fclose(f);
  assert_non_null(memmem(buf, len, "[mlprof]", 8)); /* its own location, as in the report */
  assert_null(memmem(buf, len, "prof_range_push", 15));
  free(buf);
}

/* Different return addresses in the same functions read the same: one line. */
static void same_reading_stacks_are_one_folded_line(void **state) {
  (void)state;
  const char *line = strstr(folded, "sym_caller;sym_leaf 7\n");
  assert_non_null(line);
  assert_true(line == folded || line[-1] == '\n'); /* a whole line, the heaviest */
  assert_null(strstr(folded, "\nsym_caller;sym_leaf 3\n"));
  assert_null(strstr(folded, "\nsym_caller;sym_leaf 4\n"));
}

/* Memory sites that read the same are one site, in the top sites and the leaks. */
static void same_reading_memory_sites_are_one_site(void **state) {
  (void)state;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", out), 0);
  fclose(out);
  const char *sites = strstr(text, "top sites by bytes allocated:");
  assert_non_null(sites);
  assert_non_null(strstr(sites, "700 B          5 calls  sym_leaf < sym_caller\n"));
  assert_null(strstr(sites, "300 B"));
  free(text);
}

/* Python frames: tagged addresses in the stack, named by the trace's table. */
static void python_frames_resolve_from_the_trace(void **state) {
  (void)state;
  assert_non_null(strstr(folded, "sym_outer;train.py:7_<module>;train.py:42_Net.forward;sym_leaf 6\n"));
  assert_non_null(strstr(folded, "sym_outer;train.py:7_<module>;train.py:42_Net.forward 2\n"));
  assert_non_null(strstr(folded, "sym_outer;?:0_<python> 1\n"));
  const prof__fn_func *f = func_named(an, "Net.forward");
  assert_non_null(f);
  assert_true(f->python);
  assert_int_equal(f->line, 42);
  assert_string_equal(f->module, "train.py");
  assert_int_equal(f->self, 2);
  assert_int_equal(f->total, 8);
  /* the Python view: the line, and that 6 of its 8 periods were in native code */
  const prof__fn_st *s = prof__an_section(an, "functions");
  assert_int_equal(s->py_total, 9);
  uint64_t key = (uint64_t)(f - s->f) << 32 | 42;
  assert_int_equal(prof__u64map_get(&s->pylines, key), 8);
  assert_int_equal(prof__u64map_get(&s->pynative, key), 6);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "text", out), 0);
  fclose(out);
  assert_non_null(strstr(text, "train.py:42 Net.forward  (native 75%: test_symbols 75%)"));
  assert_non_null(strstr(text, "Net.forward (train.py)"));
  free(text);
  out = open_memstream(&text, &len);
  assert_int_equal(prof__report_write(an, "html", out), 0);
  fclose(out);
  const char *py = strstr(text, "<h3>Python</h3>");
  assert_non_null(py);
  assert_non_null(strstr(py, "train.py:42"));
  free(text);
}

/* An address outside every module: named from the JIT's perf map. */
static void jit_code_is_named_from_the_perf_map(void **state) {
  (void)state;
  assert_non_null(strstr(folded, "sym_outer;jit::kernel() 2\n"));
}

/* ---- a module file truncated under the analysis -------------------------------- */

static struct {
  const char *path; /* truncated to 4 KiB right after the analysis's fstat of it */
  dev_t dev;
  ino_t ino;
} victim;

int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st) {
  int rc = __real_fstat(fd, st);
  if (rc == 0 && victim.path && st->st_dev == victim.dev && st->st_ino == victim.ino) {
    if (truncate(victim.path, 4096) != 0) abort();
    victim.path = NULL; /* the size fstat gave is now stale */
  }
  return rc;
}

/* A copy of this test program as a module of a hand-made trace. */
static const char *module_copy(void) {
  const char *path = th_tmp_path("module", ".so");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp /proc/%d/exe '%s'", (int)getpid(), path);
  assert_int_equal(th_run(cmd, NULL), 0);
  return path;
}

#define MOD_START 0x10000000u

static const char *trace_with_module(const char *module) {
  tb t = tb_open("truncated-module");
  prof__rec_list l = {{0}, 0};
  prof__rec_module m = {.path = module, .path_len = strlen(module), .bias = MOD_START, .start = MOD_START,
                        .size = 0x1000000};
  prof__rec_modules_put(&l, &m);
  prof__buf out = {0};
  assert_int_equal(prof__rec_list_end(&l, &out), 0);
  assert_int_equal(prof__tw_chunk(t.w, PROF_CHUNK_MODULES, out.p, out.len), 0);
  prof__buf_free(&out);
  prof__rec_list_free(&l);
  return tb_close(&t, "0");
}

static void truncated_module_file_is_no_crash(void **state) {
  (void)state;
  const char *module = module_copy();
  const char *trace = trace_with_module(module);
  struct stat st;
  assert_int_equal(stat(module, &st), 0);
  assert_true(st.st_size > 65536); /* its section headers lie far past 4 KiB */
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGBUS, SIG_DFL); /* not cmocka's: the child dies of it */
    victim.path = module;
    victim.dev = st.st_dev;
    victim.ino = st.st_ino;
    prof__an *a = analyze(trace);
    const prof__frame *f = prof__an_frame(a, MOD_START + 0x1000);
    int rc = victim.path != NULL ? 3 : f && f->func ? 0 : 2;
    prof__an_free(a);
    _exit(rc);
  }
  int rc = 0;
  assert_int_equal(waitpid(pid, &rc, 0), pid);
  if (WIFSIGNALED(rc)) fail_msg("the analysis died of signal %d (%s)", WTERMSIG(rc), strsignal(WTERMSIG(rc)));
  if (WEXITSTATUS(rc) == 3) fail_msg("the module was never opened: the test did not truncate it");
  assert_int_equal(WEXITSTATUS(rc), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cxx_and_rust_names_are_demangled),
      cmocka_unit_test(profiler_frames_are_charged_alike_everywhere),
      cmocka_unit_test(same_reading_stacks_are_one_folded_line),
      cmocka_unit_test(same_reading_memory_sites_are_one_site),
      cmocka_unit_test(python_frames_resolve_from_the_trace),
      cmocka_unit_test(jit_code_is_named_from_the_perf_map),
      cmocka_unit_test(truncated_module_file_is_no_crash),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
