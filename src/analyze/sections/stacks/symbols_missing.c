/* symbols_missing.c — what the report says about code without symbols.
 *
 * A stripped program or a library without its debug symbols leaves its
 * functions unnamed: symbols.c names each after its start from .eh_frame
 * ("module+0xSTART"), which keeps the hot lists right, but a reader still
 * has to learn which code that is and how to get the names. The "stacks"
 * section lists every module whose unnamed code the CPU samples pass
 * through (at least MISS_MIN_PCT of them), with how to get its symbols: the
 * distribution's debug package (or debuginfod) for a system library, -g
 * and no stripping for the program's own code.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html.h"
#include "analyze/sections/functions/sec_functions.h"
#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/util/json.h"

#define MISS_MAX 8          /* modules listed */
#define MISS_MIN_PCT 1.0    /* a module's unnamed code below this share of the samples is not listed */
#define MISS_DEPTH 256      /* frames of a stack looked at */

typedef struct miss_mod {
  const char *module; /* basename, as frames name it */
  const char *path;   /* as recorded */
  uint64_t w;         /* weight of the samples that pass through its unnamed code */
} miss_mod;

static const char HINT_SYSTEM[] =
    "install its debug symbols (Debian, Ubuntu: its -dbgsym or -dbg package; Fedora: debuginfo-install), or set "
    "DEBUGINFOD_URLS so that libdw fetches them by build id";
static const char HINT_OWN[] = "build it with -g and do not strip it (or keep its symbols in a separate debug file "
                               "that its build id or .gnu_debuglink names)";

static const char *path_of(const prof__stacks_st *s, const char *module) {
  for (size_t i = 0; i < s->nmods; i++) {
    const char *slash = strrchr(s->mods[i].path, '/');
    if (strcmp(slash ? slash + 1 : s->mods[i].path, module) == 0) return s->mods[i].path;
  }
  return module;
}

static const char *hint_of(const char *path) {
  return strncmp(path, "/usr/", 5) == 0 || strncmp(path, "/lib", 4) == 0 ? HINT_SYSTEM : HINT_OWN;
}

/* Adds w to the module's entry unless this stack counted it already. */
static void add(miss_mod *m, size_t *n, const char **seen, int *nseen, const char *module, uint64_t w) {
  for (int k = 0; k < *nseen; k++)
    if (strcmp(seen[k], module) == 0) return;
  if (*nseen < MISS_MAX * 2) seen[(*nseen)++] = module;
  for (size_t k = 0; k < *n; k++)
    if (strcmp(m[k].module, module) == 0) {
      m[k].w += w;
      return;
    }
  if (*n < MISS_MAX * 4) m[(*n)++] = (miss_mod){module, NULL, w};
}

static int cmp_w(const void *a, const void *b) {
  const miss_mod *x = a, *y = b;
  return x->w > y->w ? -1 : x->w < y->w ? 1 : strcmp(x->module, y->module);
}

/* The modules to list, heaviest first; *total: the weight of all samples. */
static size_t missing(prof__an *an, prof__stacks_st *s, miss_mod *out, uint64_t *total) {
  const prof__sampled_stack *st;
  size_t nst = prof__functions_stacks(an, &st, NULL, NULL), n = 0;
  *total = 0;
  miss_mod m[MISS_MAX * 4];
  const prof__frame *fr[MISS_DEPTH];
  for (size_t i = 0; i < nst; i++) {
    *total += st[i].weight;
    const char *seen[MISS_MAX * 2];
    int nseen = 0, d = prof__an_stack_frames(an, st[i].stack, fr, MISS_DEPTH, 1);
    for (int k = 0; k < d; k++)
      if (fr[k]->nosym && fr[k]->module) add(m, &n, seen, &nseen, fr[k]->module, st[i].weight);
  }
  qsort(m, n, sizeof *m, cmp_w);
  size_t k = 0;
  for (size_t i = 0; i < n && k < MISS_MAX; i++) {
    if (!*total || 100.0 * (double)m[i].w / (double)*total < MISS_MIN_PCT) break;
    out[k] = m[i];
    out[k++].path = path_of(s, m[i].module);
  }
  return k;
}

void prof__symbols_missing_text(prof__an *an, prof__stacks_st *s, FILE *out) {
  miss_mod m[MISS_MAX];
  uint64_t total;
  size_t n = missing(an, s, m, &total);
  if (!n) return;
  fprintf(out, "\nMissing symbols (functions named module+0xSTART, their start from .eh_frame)\n");
  int sys = 0, own = 0;
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "  %5.1f%% of the samples pass through unnamed code of %s (%s)\n",
            100.0 * (double)m[i].w / (double)total, m[i].module, m[i].path);
    if (hint_of(m[i].path) == HINT_SYSTEM) sys = 1;
    else own = 1;
  }
  if (sys) fprintf(out, "  A system library: %s.\n", HINT_SYSTEM);
  if (own) fprintf(out, "  Your own code: %s.\n", HINT_OWN);
}

void prof__symbols_missing_json(prof__an *an, prof__stacks_st *s, prof__json *j) {
  miss_mod m[MISS_MAX];
  uint64_t total;
  size_t n = missing(an, s, m, &total);
  prof__json_key(j, "unsymbolized");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < n; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "module", m[i].module);
    prof__json_kstr(j, "path", m[i].path);
    prof__json_knum(j, "pct", 100.0 * (double)m[i].w / (double)total);
    prof__json_kstr(j, "how_to_name", hint_of(m[i].path));
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

void prof__symbols_missing_html(prof__an *an, prof__stacks_st *s, FILE *out) {
  miss_mod m[MISS_MAX];
  uint64_t total;
  size_t n = missing(an, s, m, &total);
  if (!n) return;
  prof__html_section_begin(out, "symbols", "Missing symbols");
  fputs("<p>Code without symbols: its functions are named <code>module+0xSTART</code>, their start from "
        "<code>.eh_frame</code>.</p>\n",
        out);
  static const char *const heads[] = {"module", "samples through its unnamed code", "file", "how to name it"};
  prof__html_table_begin(out, heads, 4);
  for (size_t i = 0; i < n; i++) {
    char pct[32];
    double v = 100.0 * (double)m[i].w / (double)total;
    snprintf(pct, sizeof pct, "%.1f%%", v);
    fputs("<tr>", out);
    prof__html_td(out, m[i].module);
    prof__html_td_num(out, v, pct);
    prof__html_td(out, m[i].path);
    fputs("<td>", out);
    prof__html_esc(out, hint_of(m[i].path));
    fputs("</td></tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
}
