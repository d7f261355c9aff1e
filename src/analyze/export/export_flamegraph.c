/* export_flamegraph.c — an SVG flame graph of the sampled stacks, drawn by
 * mlprof: the stacks are merged into a tree (root at the bottom, callers
 * below callees), each frame a rectangle as wide as its share of the
 * samples, with a tooltip (name, samples, percentage). Frames narrower than
 * a tenth of a pixel are left out. */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/sec_functions.h"

#define WIDTH 1200.0
#define ROW 16
#define MAXF 256

typedef struct node {
  const char *name;
  uint64_t weight;
  int first_child, next;
} node;

typedef struct tree {
  node *v;
  size_t n, cap;
  int depth;
} tree;

static int new_node(tree *t, const char *name) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    node *v = realloc(t->v, cap * sizeof *v);
    if (!v) return -1;
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n] = (node){name, 0, -1, -1};
  return (int)t->n++;
}

static int child(tree *t, int parent, const char *name) {
  for (int c = t->v[parent].first_child; c >= 0; c = t->v[c].next)
    if (strcmp(t->v[c].name, name) == 0) return c;
  int c = new_node(t, name);
  if (c < 0) return -1;
  t->v[c].next = t->v[parent].first_child;
  t->v[parent].first_child = c;
  return c;
}

static void xml_text(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", out);
    else if (*s == '>') fputs("&gt;", out);
    else if (*s == '&') fputs("&amp;", out);
    else if (*s == '"') fputs("&quot;", out);
    else if ((unsigned char)*s >= 0x20) fputc(*s, out);
  }
}

static void draw(FILE *out, const tree *t, int id, double x, int level, double scale, uint64_t total) {
  const node *nd = &t->v[id];
  double w = (double)nd->weight * scale;
  if (w < 0.1) return;
  double y = (double)(t->depth - level) * ROW + 24;
  unsigned h = 0;
  for (const char *p = nd->name; *p; p++) h = h * 31u + (unsigned char)*p;
  fprintf(out, "<g><title>");
  xml_text(out, nd->name);
  fprintf(out, " (%llu samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
          (unsigned long long)nd->weight, 100.0 * (double)nd->weight / (double)total, x, y, w, ROW - 1,
          205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 50);
  size_t chars = (size_t)(w / 7);
  if (chars > 3) {
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + ROW - 4);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", nd->name);
    if (strlen(buf) > chars) strcpy(buf + (chars > 2 ? chars - 2 : 0), "..");
    xml_text(out, buf);
    fputs("</text>", out);
  }
  fputs("</g>\n", out);
  for (int c = nd->first_child; c >= 0; c = t->v[c].next) {
    draw(out, t, c, x, level + 1, scale, total);
    x += (double)t->v[c].weight * scale;
  }
}

int prof__export_flamegraph(prof__an *an, FILE *out) {
  const prof__sampled_stack *st;
  int mode = 0;
  size_t n = prof__functions_stacks(an, &st, &mode, NULL);
  tree t = {0};
  int root = new_node(&t, "all");
  for (size_t i = 0; root >= 0 && i < n; i++) {
    const char *names[MAXF];
    int d = prof__sec_stacks_func_names(an, st[i].stack, names, MAXF), cur = root;
    t.v[root].weight += st[i].weight;
    for (int k = 0; k < d && cur >= 0; k++) {
      cur = child(&t, cur, names[k]);
      if (cur >= 0) t.v[cur].weight += st[i].weight;
    }
    if (d > t.depth) t.depth = d;
  }
  if (root < 0) return PROF_ENOMEM;
  int height = (t.depth + 1) * ROW + 40;
  fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" "
               "font-family=\"monospace\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf8\"/>\n"
               "<text x=\"%d\" y=\"16\" text-anchor=\"middle\" font-size=\"14\">mlprof flame graph (%s samples: %llu)</text>\n",
          (int)WIDTH + 20, height, (int)WIDTH + 20, height, (int)WIDTH / 2, mode ? "wall-clock" : "CPU",
          (unsigned long long)t.v[root].weight);
  if (t.v[root].weight) {
    fputs("<g transform=\"translate(10,0)\">\n", out);
    draw(out, &t, root, 0, 0, WIDTH / (double)t.v[root].weight, t.v[root].weight);
    fputs("</g>\n", out);
  }
  fputs("</svg>\n", out);
  free(t.v);
  return ferror(out) ? PROF_EIO : 0;
}
