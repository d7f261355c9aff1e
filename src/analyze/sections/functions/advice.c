/* advice.c — the recommendation of the hot_function finding, from what was
 * measured: the hot function's name and the module it ran in. Reference
 * BLAS, OpenMP spin-waiting, the Python interpreter, the allocator and
 * memory copies, and clock reads each get advice of their own; anything else
 * gets the generic advice naming the hottest line. docs/report-schema.md
 * lists the rules: keep the two in step.
 */
#include "analyze/sections/functions/advice.h"

#include <stdio.h>
#include <string.h>

static const char *base_of(const char *path) {
  const char *s = path ? strrchr(path, '/') : NULL;
  return s ? s + 1 : path ? path : "";
}

static int starts(const char *s, const char *pre) { return strncmp(s, pre, strlen(pre)) == 0; }

static int any_prefix(const char *s, const char *const *list) {
  for (; *list; list++)
    if (starts(s, *list)) return 1;
  return 0;
}

/* A BLAS routine name of the Fortran interface: [sdcz] + a known kernel + "_". */
static int blas_routine(const char *f) {
  static const char *const k[] = {"gemm_", "gemv_", "symm_", "syrk_", "syr2k_", "trsm_", "trmm_", "hemm_",
                                  "herk_", "axpy_", "dot_", "scal_", "ger_", "symv_", "trsv_", "trmv_", NULL};
  if (!strchr("sdcz", f[0]) || !f[0]) return 0;
  for (int i = 0; k[i]; i++)
    if (strcmp(f + 1, k[i]) == 0) return 1;
  return 0;
}

/* Netlib's reference BLAS: libblas.so* (Debian installs it under blas/),
 * not an optimised library that took the same name through alternatives. */
static int reference_blas_module(const char *module) {
  if (!module || !starts(base_of(module), "libblas.so")) return 0;
  static const char *const opt[] = {"openblas", "blis", "mkl", "atlas", "accelerate", NULL};
  for (int i = 0; opt[i]; i++)
    if (strstr(module, opt[i])) return 0;
  return 1;
}

/* A matrix product written in the program itself (darknet's gemm_nt,
 * llm.c's matmul_forward, a BLAS routine outside the reference library):
 * the advice "move the loop to a GEMM kernel" would be absurd for it. */
static int matrix_kernel(const char *f, const char *module) {
  static const char *const lib[] = {"blas", "blis", "mkl", "dnnl", "mkldnn", "torch", "atlas", "eigen", NULL};
  for (int i = 0; module && lib[i]; i++)
    if (strstr(module, lib[i])) return 0; /* an optimised library's own kernel */
  if (blas_routine(f) || starts(f, "cblas_")) return 0;
  static const char *const k[] = {"gemm", "matmul", "GEMM", "MatMul", NULL};
  for (int i = 0; k[i]; i++)
    if (strstr(f, k[i])) return 1;
  return 0;
}

int prof__advice_kind(const char *func, const char *module) {
  const char *f = func ? func : "", *m = base_of(module);
  if (blas_routine(f) && reference_blas_module(module)) return PROF_ADV_REFERENCE_BLAS;
  if (starts(m, "libgomp") || starts(m, "libomp") || starts(m, "libiomp") || starts(f, "gomp_") ||
      starts(f, "__kmp_"))
    return PROF_ADV_OPENMP_SPIN;
  static const char *const py[] = {"_PyEval_", "PyEval_", "_PyObject_", "PyObject_", "_PyFunction_", NULL};
  if (starts(m, "libpython") || starts(m, "python3") || any_prefix(f, py)) return PROF_ADV_PYTHON;
  static const char *const mem[] = {"malloc", "free", "calloc", "realloc", "cfree", "_int_malloc", "_int_free",
                                    "_int_realloc", "malloc_consolidate", "__libc_malloc", "__libc_free",
                                    "__libc_calloc", "__libc_realloc", "memcpy", "memmove", "__memcpy",
                                    "__memmove", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "tcache_", NULL};
  if (any_prefix(f, mem)) return PROF_ADV_MEMORY;
  if (strcmp(m, "[vdso]") == 0 || starts(m, "linux-vdso") || starts(f, "__vdso_") ||
      strcmp(f, "clock_gettime") == 0 || strcmp(f, "gettimeofday") == 0)
    return PROF_ADV_CLOCK;
  if (matrix_kernel(f, module)) return PROF_ADV_MATMUL;
  return PROF_ADV_GENERIC;
}

const char *prof__advice_name(int kind) {
  static const char *const names[] = {
#define PROF__ADV_NAME(e, s) s,
      PROF_ADVICE_KINDS(PROF__ADV_NAME)
#undef PROF__ADV_NAME
  };
  return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "generic";
}

/* "x86_64-linux-gnu" from a path under /usr/lib/<triplet>/, else a placeholder. */
static void triplet_of(const char *module, char *buf, size_t n) {
  const char *p = module ? strstr(module, "-linux-gnu") : NULL;
  if (p) {
    const char *b = p;
    while (b > module && b[-1] != '/') b--;
    snprintf(buf, n, "%.*s", (int)(p + strlen("-linux-gnu") - b), b);
  } else {
    snprintf(buf, n, "<arch>-linux-gnu");
  }
}

const char *prof__advice_text(const char *func, const char *module, const char *file, int line, char *buf,
                              size_t n) {
  const char *f = func ? func : "?";
  char tr[64];
  switch (prof__advice_kind(func, module)) {
  case PROF_ADV_REFERENCE_BLAS:
    triplet_of(module, tr, sizeof tr);
    snprintf(buf, n,
             "%s runs in the reference BLAS (%s: Netlib's unoptimised code, no blocking or SIMD kernels). An "
             "optimised BLAS is often 10x or more faster on matrix products: install OpenBLAS, BLIS or MKL "
             "(Debian/Ubuntu: apt install libopenblas0-pthread, or libblis4) and select it with "
             "`sudo update-alternatives --config libblas.so.3-%s` (and liblapack.so.3-%s); for one run, put its "
             "libblas.so.3 first with LD_LIBRARY_PATH. `ldd` on the program or library shows which one loads.",
             f, base_of(module), tr, tr);
    break;
  case PROF_ADV_OPENMP_SPIN:
    snprintf(buf, n,
             "%s is OpenMP threads waiting at barriers or locks (%s): more threads than free cores "
             "(oversubscription: several processes or a data loader each starting a full thread team) or work "
             "split unevenly (load imbalance). Set OMP_NUM_THREADS to the cores each process should use (cores / "
             "processes), OMP_WAIT_POLICY=PASSIVE so idle threads sleep instead of spinning, and balance the "
             "work (schedule(dynamic) or equal chunks).",
             f, base_of(module));
    break;
  case PROF_ADV_PYTHON:
    snprintf(buf, n,
             "The Python interpreter itself is hot (%s): per-element Python loops. Vectorise: express the loop "
             "as tensor / array operations (NumPy, PyTorch) over whole batches, move what remains into compiled "
             "code (torch.compile, Numba, Cython), and keep per-step Python work out of the inner loop.",
             f);
    break;
  case PROF_ADV_MEMORY:
    snprintf(buf, n,
             "%s is allocating, freeing or copying memory. Reuse buffers across steps (allocate once, keep a "
             "pool, preallocated output tensors, out= arguments), avoid allocation inside inner loops, and avoid "
             "copies (in-place operations, views instead of copies, no needless .contiguous()/.clone()/.cpu() "
             "round trips); with many small allocations a pooling allocator (jemalloc, tcmalloc) helps.",
             f);
    break;
  case PROF_ADV_CLOCK:
    snprintf(buf, n,
             "%s is reading the clock (%s): the timing calls themselves are hot. Read the time once per batch or "
             "step rather than per element or per call.",
             f, base_of(module));
    break;
  case PROF_ADV_MATMUL:
    snprintf(buf, n,
             "%s is a matrix product (%s) computed by the program's own loops. An optimised library does the "
             "same work several times faster: call cblas_sgemm from OpenBLAS, BLIS or MKL (or oneDNN), or "
             "let the framework's matmul do it; if it must stay hand-written, block it for the cache (tiles of "
             "the output that fit L1/L2), make the inner loop contiguous and vectorised (-O3 -march=native), "
             "and spread the outer loop over threads.",
             f, base_of(module));
    break;
  default:
    if (file && *file && line > 0)
      snprintf(buf, n,
               "Make %s cheaper, starting at its hottest line %s:%d: vectorise its inner loop (contiguous data, "
               "no branches in the loop, -O3 -march=native), move the loop nest to a BLAS-style kernel (GEMM, "
               "batched operations), and avoid recomputing values that could be cached between steps.",
               f, file, line);
    else
      snprintf(buf, n,
               "Make %s cheaper (build with debug info, -g, to see its hottest lines): vectorise its inner loop "
               "(contiguous data, no branches in the loop, -O3 -march=native), move the loop nest to a BLAS-style "
               "kernel (GEMM, batched operations), and avoid recomputing values that could be cached between "
               "steps.",
               f);
  }
  return buf;
}
