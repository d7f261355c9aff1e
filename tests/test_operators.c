/* test_operators.c — the operator view of the "functions" section
 * (sec_operators.c, op_names.c). Operator names from frame names (the
 * at::_ops dispatcher structs with their overloads dropped, autograd nodes,
 * at::native candidates); then a real sampled run of C functions linked
 * under PyTorch's mangled names (at::_ops::addmm::call, an autograd node
 * AddmmBackward0 calling at::_ops::mm::call, at::native helpers): the
 * report's functions.operators[] gives each operator its self and total
 * share, nests the node's mm under it, and keeps helpers out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/sections/functions/op_names.h"
#include "analyze/util/jsonparse.h"
#include "helpers.h"
#include "mlprof.h"

/* ---- names ------------------------------------------------------------------ */

static void name_is(const char *func, int kind, const char *want) {
  char out[128];
  int k = prof__op_classify(func, out, sizeof out);
  if (k != kind || strcmp(out, want) != 0) fail_msg("%s: kind %d name '%s', want %d '%s'", func, k, out, kind, want);
}

static void operator_names_from_frames(void **state) {
  (void)state;
  name_is("at::_ops::addmm::call(at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, "
          "c10::Scalar const&)",
          PROF_OP_ATEN, "aten::addmm");
  name_is("at::_ops::mm::redispatch(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)", PROF_OP_ATEN,
          "aten::mm");
  name_is("at::_ops::add__Tensor::call(at::Tensor&, at::Tensor const&, c10::Scalar const&)", PROF_OP_ATEN,
          "aten::add_");
  name_is("at::_ops::fill__Scalar::call(at::Tensor&, c10::Scalar const&)", PROF_OP_ATEN, "aten::fill_");
  name_is("at::_ops::sum_dim_IntList::call(at::Tensor const&)", PROF_OP_ATEN, "aten::sum");
  name_is("at::_ops::addmm_out::call(at::Tensor const&)", PROF_OP_ATEN, "aten::addmm");
  name_is("at::_ops::_log_softmax::call(at::Tensor const&, long, bool)", PROF_OP_ATEN, "aten::_log_softmax");
  name_is("at::_ops::threshold_backward::call(at::Tensor const&)", PROF_OP_ATEN, "aten::threshold_backward");
  name_is("torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
          PROF_OP_AUTOGRAD, "AddmmBackward0");
  name_is("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)",
          PROF_OP_AUTOGRAD, "AccumulateGrad");
  name_is("at::native::zero_(at::Tensor&)", PROF_OP_NATIVE, "aten::zero_");
  /* not operators */
  name_is("at::_ops::addmm::name", PROF_OP_NONE, "");
  name_is("at::native::structured_addmm_out_cpu::impl(at::Tensor const&)", PROF_OP_NONE, "");
  name_is("at::native::cpublas::gemm(char, char, long)", PROF_OP_NONE, "");
  name_is("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", PROF_OP_NONE, "");
  name_is("torch::autograd::generated::details::mm_mat1_backward(at::Tensor const&)", PROF_OP_NONE, "");
  name_is("sgemm_", PROF_OP_NONE, "");
  name_is(NULL, PROF_OP_NONE, "");
}

static void user_python_files(void **state) {
  (void)state;
  assert_true(prof__py_user_file("/home/me/train.py"));
  assert_true(prof__py_user_file("train.py"));
  assert_false(prof__py_user_file("/usr/lib/python3/dist-packages/torch/nn/modules/linear.py"));
  assert_false(prof__py_user_file("/venv/lib/python3.11/site-packages/torch/_tensor.py"));
  assert_false(prof__py_user_file("/usr/lib/python3.11/threading.py"));
  assert_false(prof__py_user_file("<frozen importlib._bootstrap>"));
  assert_false(prof__py_user_file(NULL));
}

/* ---- a sampled run ------------------------------------------------------------ */

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

volatile double sink;
__attribute__((noinline)) void kernel_leaf(double seconds) {
  double x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < seconds)
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

/* C functions linked under the names of torch's C++ functions. */
void op_addmm(double s) __asm__("_ZN2at4_ops5addmm4callEd");      /* at::_ops::addmm::call(double) */
void op_mm(double s) __asm__("_ZN2at4_ops2mm4callEd");            /* at::_ops::mm::call(double) */
void node_addmm_bw(void) __asm__("_ZN5torch8autograd9generated14AddmmBackward05applyEv");
void native_helper(double s) __asm__("_ZN2at6native14addmm_impl_cpuEd"); /* at::native::addmm_impl_cpu(double) */
void native_mm(double s) __asm__("_ZN2at6native2mmEd");           /* at::native::mm(double) */

#define KEEP_FRAME() __asm__ volatile("" ::: "memory") /* no tail call: the caller's frame stays */

__attribute__((noinline)) void native_helper(double s) {
  kernel_leaf(s);
  KEEP_FRAME();
}
__attribute__((noinline)) void op_addmm(double s) {
  native_helper(s);
  KEEP_FRAME();
}
__attribute__((noinline)) void op_mm(double s) {
  kernel_leaf(s);
  KEEP_FRAME();
}
__attribute__((noinline)) void native_mm(double s) {
  kernel_leaf(s);
  KEEP_FRAME();
}
/* The node: mm through the dispatcher, mm called directly, its own work. */
__attribute__((noinline)) void node_addmm_bw(void) {
  op_mm(0.2);
  native_mm(0.1);
  kernel_leaf(0.1);
  KEEP_FRAME();
}

static void run_child(const char *path) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    prof_config c = prof_config_default();
    c.output = path;
    c.report = 0;
    if (prof_init(&c) != 0) _exit(3);
    op_addmm(0.3);
    node_addmm_bw();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static char *report(prof__an *an, const char *format) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__report_write(an, format, f), 0);
  fclose(f);
  return buf;
}

static const prof__jv *find_op(const prof__jv *ops, const char *name) {
  for (size_t i = 0; ops && i < ops->len; i++)
    if (strcmp(prof__jv_get(&ops->items[i], "name")->str, name) == 0) return &ops->items[i];
  return NULL;
}

static double num(const prof__jv *o, const char *k) { return prof__jv_get(o, k)->num; }

static void operators_from_samples(void **state) {
  (void)state;
  const char *path = th_tmp_path("operators", ".mlpt");
  run_child(path);
  char err[256];
  prof__an *an;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *json = report(an, "json"), *text = report(an, "text"), *html = report(an, "html");
  prof__an_free(an);
  prof__jv *r = prof__jv_parse(json, strlen(json), err);
  assert_non_null(r);
  const prof__jv *fn = prof__jv_get(r, "functions"), *ops = prof__jv_get(fn, "operators");
  assert_non_null(ops);
  for (size_t i = 0; i < ops->len; i++)
    print_message("%-20s self %5.1f %% total %5.1f %%\n", prof__jv_get(&ops->items[i], "name")->str,
                  num(&ops->items[i], "self_pct"), num(&ops->items[i], "total_pct"));
  const prof__jv *addmm = find_op(ops, "aten::addmm"), *mm = find_op(ops, "aten::mm");
  const prof__jv *node = find_op(ops, "AddmmBackward0");
  assert_true(addmm && mm && node);
  /* 0.3 s in addmm, 0.3 s in mm (0.2 s dispatched, 0.1 s at::native::mm
   * called directly), 0.1 s in the node itself, of ~0.7 s sampled */
  assert_true(num(addmm, "self_pct") > 30 && num(addmm, "self_pct") < 60);
  assert_true(num(mm, "self_pct") > 30 && num(mm, "self_pct") < 60);
  assert_true(num(node, "self_pct") > 5 && num(node, "self_pct") < 25);
  assert_true(num(node, "total_pct") > num(mm, "self_pct") + 5); /* mm ran inside the node */
  assert_true(num(addmm, "total_pct") - num(addmm, "self_pct") < 1);
  assert_string_equal(prof__jv_get(node, "kind")->str, "autograd");
  assert_string_equal(prof__jv_get(addmm, "kind")->str, "aten");
  assert_null(find_op(ops, "aten::addmm_impl_cpu")); /* a helper, not an operator */
  assert_true(num(fn, "operators_pct") > 80);
  assert_non_null(strstr(text, "Operators (PyTorch"));
  assert_non_null(strstr(text, "aten::addmm"));
  assert_non_null(strstr(html, "<h3>Operators</h3>"));
  assert_non_null(strstr(html, "AddmmBackward0"));
  prof__jv_free(r);
  free(json);
  free(text);
  free(html);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(operator_names_from_frames),
      cmocka_unit_test(user_python_files),
      cmocka_unit_test(operators_from_samples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
