/* op_names.c — PyTorch operator names from symbolized native frames (see
 * op_names.h): the dispatcher's at::_ops::<op> structs, autograd nodes'
 * apply(), and at::native::<op> implementations, with the overload part of
 * an at::_ops struct name dropped the way torch.profiler shows operators. */
#include "analyze/sections/functions/op_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Overload names that are not capitalised ("sum.dim_IntList", "addmm.out",
 * "empty.memory_format"): dropped from the end of a struct name after the
 * capitalised part ("_Tensor", "_Scalar", "_IntList") is cut. */
static const char *const lower_overloads[] = {
    "_out", "_dim", "_int", "_self", "_using_ints", "_names", "_dimname", "_memory_format", "_dtype_layout",
    "_dtype", "_device", "_other",
};

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

void prof__op_strip_overload(const char *ident, size_t len, char *out, size_t n) {
  if (!n) return;
  /* the first "_X" with X a capital letter begins the overload ("add__Tensor": "add_") */
  for (size_t i = 1; i + 1 < len; i++)
    if (ident[i] == '_' && isupper((unsigned char)ident[i + 1])) {
      len = i;
      break;
    }
  for (int again = 1; again;) {
    again = 0;
    for (size_t k = 0; k < sizeof lower_overloads / sizeof *lower_overloads; k++) {
      size_t sl = strlen(lower_overloads[k]);
      if (len > sl && memcmp(ident + len - sl, lower_overloads[k], sl) == 0) {
        len -= sl;
        again = 1;
      }
    }
  }
  if (len >= n) len = n - 1;
  memcpy(out, ident, len);
  out[len] = 0;
}

/* Length of the identifier at p (0 when there is none). */
static size_t ident_len(const char *p) {
  size_t k = 0;
  while (ident_char(p[k])) k++;
  return k;
}

static int aten_op(const char *p, char *out, size_t n) {
  size_t k = ident_len(p);
  if (!k || strncmp(p + k, "::", 2) != 0) return PROF_OP_NONE;
  const char *m = p + k + 2;
  if (strncmp(m, "call(", 5) != 0 && strncmp(m, "redispatch(", 11) != 0) return PROF_OP_NONE;
  char base[128];
  prof__op_strip_overload(p, k, base, sizeof base);
  snprintf(out, n, "aten::%s", base);
  return PROF_OP_ATEN;
}

/* "X::apply(" with X a plain identifier: an autograd node. */
static int autograd_node(const char *p, char *out, size_t n) {
  size_t k = ident_len(p);
  if (!k || strncmp(p + k, "::apply(", 8) != 0) return PROF_OP_NONE;
  snprintf(out, n, "%.*s", (int)k, p);
  return PROF_OP_AUTOGRAD;
}

int prof__op_classify(const char *func, char *out, size_t n) {
  if (n) out[0] = 0;
  if (!func || !n) return PROF_OP_NONE;
  if (strncmp(func, "at::_ops::", 10) == 0) return aten_op(func + 10, out, n);
  if (strncmp(func, "torch::autograd::generated::", 28) == 0) return autograd_node(func + 28, out, n);
  if (strncmp(func, "torch::autograd::", 17) == 0) return autograd_node(func + 17, out, n);
  if (strncmp(func, "at::native::", 12) == 0) {
    const char *p = func + 12;
    size_t k = ident_len(p);
    if (!k || p[k] != '(') return PROF_OP_NONE;
    snprintf(out, n, "aten::%.*s", (int)k, p);
    return PROF_OP_NATIVE;
  }
  return PROF_OP_NONE;
}

int prof__py_user_file(const char *file) {
  if (!file || !*file || file[0] == '<') return 0;
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  if (strcmp(base, "sitecustomize.py") == 0 || strcmp(base, "usercustomize.py") == 0) return 0; /* start-up hooks */
  if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/")) return 0;
  const char *l = strstr(file, "/lib/python");
  if (l && isdigit((unsigned char)l[11])) return 0; /* the standard library: /usr/lib/python3.11/... */
  return 1;
}
