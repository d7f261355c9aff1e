/* export_folded.c — sampled stacks as "folded" text: one line per stack,
 * frames outermost first separated by ';', a space, and the weight
 * (sampling periods). Read by flamegraph.pl, speedscope and inferno. */
#include <string.h>

#include "analyze/sections/functions/sec_functions.h"

#define MAXF 256

/* A frame name without the separators of the format. */
static void put_name(FILE *out, const char *s) {
  for (; *s; s++) fputc(*s == ';' ? ':' : (*s == ' ' || *s == '\n' || *s == '\t') ? '_' : *s, out);
}

int prof__export_folded(prof__an *an, FILE *out) {
  const prof__sampled_stack *st;
  size_t n = prof__functions_stacks(an, &st, NULL, NULL);
  for (size_t i = 0; i < n; i++) {
    const char *names[MAXF];
    int d = prof__sec_stacks_func_names(an, st[i].stack, names, MAXF);
    if (d == 0) {
      names[0] = "[unknown]";
      d = 1;
    }
    for (int k = 0; k < d; k++) {
      if (k) fputc(';', out);
      put_name(out, names[k]);
    }
    fprintf(out, " %llu\n", (unsigned long long)st[i].weight);
  }
  return ferror(out) ? PROF_EIO : 0;
}
