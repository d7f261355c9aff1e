/* test_advice.c — the hot_function advice follows what was measured: the
 * classification of planted function/module pairs (reference BLAS, OpenMP
 * spin, the Python interpreter, the allocator and copies, the vDSO, generic
 * with the hottest line), and a real run of reference BLAS (Debian's
 * libblas3) whose report advises an optimised BLAS and update-alternatives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/sections/functions/advice.h"
#include "analyze/analyze.h"
#include "helpers.h"
#include "mlprof.h"

static void kind_is(const char *func, const char *module, const char *want) {
  const char *got = prof__advice_name(prof__advice_kind(func, module));
  if (strcmp(got, want) != 0) fail_msg("%s in %s: advice %s, want %s", func, module ? module : "-", got, want);
}

static void advice_follows_the_function_and_module(void **state) {
  (void)state;
  kind_is("sgemm_", "libblas.so.3", "reference_blas");
  kind_is("dgemm_", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0", "reference_blas");
  kind_is("sgemm_", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", "generic");
  kind_is("sgemm_kernel_HASWELL", "libopenblas.so.0", "generic");
  kind_is("gomp_barrier_wait_end", "libgomp.so.1", "openmp_spin");
  kind_is("do_spin", "libgomp.so.1", "openmp_spin");
  kind_is("_PyEval_EvalFrameDefault", "python3.11", "python_interpreter");
  kind_is("PyObject_GetAttr", "libpython3.11.so.1.0", "python_interpreter");
  kind_is("_int_malloc", "libc.so.6", "allocation_copies");
  kind_is("__memmove_avx_unaligned_erms", "libc.so.6", "allocation_copies");
  kind_is("free", "libc.so.6", "allocation_copies");
  kind_is("__vdso_clock_gettime", "[vdso]", "clock_reads");
  kind_is("dot_avx", "train", "generic");
  kind_is("accessor", NULL, "generic");
  /* a matrix product written in the program is not told to "move the loop
   * to a GEMM kernel": it is one */
  kind_is("gemm_nt", "darknet", "matrix_kernel");
  kind_is("matmul_forward", "train_gpt2", "matrix_kernel");
}

static void advice_text_names_what_to_do(void **state) {
  (void)state;
  char b[1024];
  prof__advice_text("sgemm_", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", NULL, 0, b, sizeof b);
  assert_non_null(strstr(b, "OpenBLAS"));
  assert_non_null(strstr(b, "update-alternatives --config libblas.so.3-x86_64-linux-gnu"));
  prof__advice_text("gomp_barrier_wait_end", "libgomp.so.1", NULL, 0, b, sizeof b);
  assert_non_null(strstr(b, "OMP_NUM_THREADS"));
  assert_non_null(strstr(b, "OMP_WAIT_POLICY"));
  prof__advice_text("_PyEval_EvalFrameDefault", "python3.11", NULL, 0, b, sizeof b);
  assert_non_null(strstr(b, "Vectorise"));
  prof__advice_text("malloc", "libc.so.6", NULL, 0, b, sizeof b);
  assert_non_null(strstr(b, "pool"));
  prof__advice_text("gemm_nt", "darknet", NULL, 0, b, sizeof b);
  assert_non_null(strstr(b, "cblas_sgemm"));
  assert_null(strstr(b, "BLAS-style kernel"));
  prof__advice_text("dot_avx", "train", "train.c", 42, b, sizeof b);
  assert_non_null(strstr(b, "train.c:42"));
}

/* ---- a real run of reference BLAS ------------------------------------------- */

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *, const float *,
                         const float *, const int *, const float *, const int *, const float *, float *,
                         const int *);

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int blas_scenario(const char *path, sgemm_fn gemm) {
  setenv("MLPROF_SAMPLE_HZ", "1000", 1);
  prof_config c = prof_config_default();
  c.output = path;
  c.report = 0;
  if (prof_init(&c) != 0) return 3;
  enum { N = 160 };
  static float a[N * N], b[N * N], r[N * N];
  for (int i = 0; i < N * N; i++) a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.2f;
  const int n = N;
  const float one = 1, zero = 0;
  double end = cpu_now() + 1.0;
  while (cpu_now() < end) {
    prof_start();
    for (int k = 0; k < 4; k++) gemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, r, &n);
    prof_stop();
  }
  return prof_shutdown() == 0 ? 0 : 4;
}

static void reference_blas_run_advises_an_optimised_blas(void **state) {
  (void)state;
  void *h = dlopen("libblas.so.3", RTLD_NOW);
  sgemm_fn gemm = h ? (sgemm_fn)dlsym(h, "sgemm_") : NULL;
  Dl_info di;
  if (!gemm || !dladdr((void *)gemm, &di) || !di.dli_fname) skip();
  char real[4096];
  if (!realpath(di.dli_fname, real) || !strstr(real, "/blas/")) skip(); /* an optimised BLAS took the name */
  const char *path = th_tmp_path("advice-blas", ".mlpt");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(blas_scenario(path, gemm));
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  prof__an *an;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  const prof__finding *f = NULL;
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, "hot_function") == 0) f = &an->findings[i];
  if (!f) fail_msg("no hot_function finding");
  assert_non_null(strstr(f->title, "sgemm_"));
  assert_non_null(strstr(f->recommendation, "update-alternatives"));
  int kind = 0;
  for (int i = 0; i < f->nkeys; i++)
    if (strcmp(f->keys[i].key, "advice") == 0) kind = strcmp(f->keys[i].str, "reference_blas") == 0;
  assert_true(kind);
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(advice_follows_the_function_and_module),
      cmocka_unit_test(advice_text_names_what_to_do),
      cmocka_unit_test(reference_blas_run_advises_an_optimised_blas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
