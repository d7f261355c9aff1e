/* op_names.h — recognising PyTorch operators in symbolized native frames,
 * for the operator view of the "functions" section (sec_operators.c) and
 * the allocation sites of the memory section:
 *   at::_ops::addmm::call(...)                        -> aten::addmm
 *   at::_ops::add__Tensor::redispatch(...)            -> aten::add_
 *   torch::autograd::generated::AddmmBackward0::apply -> AddmmBackward0
 *   torch::autograd::AccumulateGrad::apply            -> AccumulateGrad
 *   at::native::zero_(...)                            -> aten::zero_ (a
 *     candidate only: counted where the name is a known operator)
 * Pure string work on the analysis side; nothing is recorded for it. */
#ifndef PROF_OP_NAMES_H
#define PROF_OP_NAMES_H

#include <stddef.h>

enum prof__op_kind {
  PROF_OP_NONE = 0,     /* not an operator frame */
  PROF_OP_ATEN = 1,     /* a dispatcher entry point (at::_ops::<op>) */
  PROF_OP_AUTOGRAD = 2, /* an autograd node's apply() */
  PROF_OP_NATIVE = 3,   /* at::native::<name>: an operator if <name> is one */
};

/* The operator a frame's (demangled) function name stands for: its display
 * name into out ("aten::addmm", "AddmmBackward0") and its kind; PROF_OP_NONE
 * (out empty) for any other frame. */
int prof__op_classify(const char *func, char *out, size_t n);

/* The operator's base name from the name of its at::_ops struct: the
 * overload is dropped ("add__Tensor" -> "add_", "sum_dim_IntList" -> "sum",
 * "addmm_out" -> "addmm"). Writes into out (at most n bytes). */
void prof__op_strip_overload(const char *ident, size_t len, char *out, size_t n);

/* A Python source file of the user's code rather than of an installed
 * library or the standard library (site-packages, dist-packages,
 * lib/python3.X, frozen modules, sitecustomize.py and usercustomize.py):
 * the caller line an operator or an allocation is charged to. */
int prof__py_user_file(const char *file);

#endif
