/* export_folded.c — sampled stacks as "folded" text: one line per stack,
 * frames outermost first separated by ';', a space, and the weight
 * (sampling periods). Read by flamegraph.pl, speedscope and inferno.
 * Stacks whose frames read the same (different return addresses in the
 * same functions) are one line; lines are ordered by weight, heaviest
 * first. Inlined frames end in "_[inlined]", Python frames read
 * "file.py:LINE_function". */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/sec_functions.h"

#define MAXF 256

typedef struct fline {
  char *text;
  uint64_t weight;
} fline;

/* Append a frame name without the separators of the format. */
static void put_name(prof__buf *b, const char *s) {
  for (; *s; s++) {
    char c = *s == ';' ? ':' : (*s == ' ' || *s == '\n' || *s == '\t') ? '_' : *s;
    prof__buf_put(b, &c, 1);
  }
}

static int by_text(const void *a, const void *b) { return strcmp(((const fline *)a)->text, ((const fline *)b)->text); }
static int by_weight(const void *a, const void *b) {
  const fline *x = a, *y = b;
  if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
  return strcmp(x->text, y->text);
}

int prof__export_folded(prof__an *an, FILE *out) {
  const prof__sampled_stack *st;
  size_t n = prof__functions_stacks(an, &st, NULL, NULL), m = 0;
  fline *v = calloc(n ? n : 1, sizeof *v);
  if (!v) return PROF_ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const char *names[MAXF];
    int d = prof__sec_stacks_func_names(an, st[i].stack, names, MAXF);
    if (d == 0) {
      names[0] = "[unknown]";
      d = 1;
    }
    prof__buf b = {0};
    for (int k = 0; k < d; k++) {
      if (k) prof__buf_put(&b, ";", 1);
      put_name(&b, names[k]);
    }
    prof__buf_put(&b, "", 1);
    if (b.oom) {
      prof__buf_free(&b);
      rc = PROF_ENOMEM;
      break;
    }
    v[m++] = (fline){(char *)b.p, st[i].weight}; /* the buffer's bytes are ours now */
  }
  if (!rc && m) {
    qsort(v, m, sizeof *v, by_text);
    size_t w = 0;
    for (size_t i = 0; i < m; i++) {
      if (w && strcmp(v[w - 1].text, v[i].text) == 0) {
        v[w - 1].weight += v[i].weight;
        free(v[i].text);
      } else {
        v[w++] = v[i];
      }
    }
    m = w;
    qsort(v, m, sizeof *v, by_weight);
    for (size_t i = 0; i < m; i++) fprintf(out, "%s %llu\n", v[i].text, (unsigned long long)v[i].weight);
  }
  for (size_t i = 0; i < m; i++) free(v[i].text);
  free(v);
  if (rc) return rc;
  return ferror(out) ? PROF_EIO : 0;
}
