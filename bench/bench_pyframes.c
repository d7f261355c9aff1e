/* bench_pyframes.c — what Python frames cost per CPU sample.
 *
 * Embeds CPython 3.11 and, from Python code running at a given depth of
 * Python frames, calls back into C, where it times what the sampling
 * handler does per sample: the native unwind alone (a sample without
 * Python frames) against the unwind plus the read of the thread's Python
 * frame chain and their interleaving with the native frames
 * (prof__pyframes_merge), at Python depths 1, 10 and 50. The handler runs
 * the same code; the signal delivery itself is bench_sampling's part.
 * Prints `name  value  baseline  ratio` lines (ns per sample).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <time.h>

#include "cpu/pyframes.h"
#include "stack/stack.h"

#define ITERS 20000

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile int sink;

/* measure(depth) -> prints one line; called from Python `depth` frames deep */
static PyObject *measure(PyObject *self, PyObject *args) {
  (void)self;
  int depth = 0;
  if (!PyArg_ParseTuple(args, "i", &depth)) return NULL;
  uintptr_t pcs[PROF_STACK_MAX_DEPTH];
  double best_native = 1e30, best_py = 1e30;
  int merged = 0;
  for (int round = 0; round < 5; round++) { /* best of 5 rounds: the least disturbed */
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) sink += prof__stack_capture(pcs, PROF_STACK_MAX_DEPTH, 0);
    double t1 = now_ns();
    for (int i = 0; i < ITERS; i++) {
      int d = prof__stack_capture(pcs, PROF_STACK_MAX_DEPTH, 0);
      merged = prof__pyframes_merge(pcs, d, PROF_STACK_MAX_DEPTH);
    }
    double t2 = now_ns();
    if ((t1 - t0) / ITERS < best_native) best_native = (t1 - t0) / ITERS;
    if ((t2 - t1) / ITERS < best_py) best_py = (t2 - t1) / ITERS;
  }
  int tagged = 0;
  for (int i = 0; i < merged; i++) tagged += (pcs[i] >> 63) != 0;
  printf("sample_with_python_frames_depth%-3d  %8.0f ns  %8.0f ns  %5.2f   (%d Python frames in a %d-frame stack)\n",
         depth, best_py, best_native, best_py / best_native, tagged, merged);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"measure", measure, METH_VARARGS, "time one sample here"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bench", NULL, -1, methods, NULL, NULL, NULL, NULL};
static PyObject *init_bench(void) { return PyModule_Create(&module); }

int main(void) {
  PyImport_AppendInittab("_bench", init_bench);
  Py_Initialize();
  prof__stack_thread_init();
  prof__pyframes_init();
  if (!prof__pyframes_active()) {
    printf("bench_pyframes: this build or this Python has no Python frames; nothing measured\n");
    Py_Finalize();
    return 0;
  }
  printf("name                                  with      without  ratio   (ns per sample: unwind [+ Python frames])\n");
  PyRun_SimpleString("import _bench\n"
                     "def rec(n, d):\n"
                     "    return rec(n - 1, d) if n > 1 else _bench.measure(d)\n"
                     "for d in (1, 10, 50):\n"
                     "    rec(d, d)\n");
  Py_Finalize();
  return 0;
}
