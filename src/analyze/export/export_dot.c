/* export_dot.c — `mlprof export --dot`: the model graph (sec_graph.h) as
 * Graphviz DOT, for people who render it elsewhere (`dot -Tsvg`).
 *
 * Left to right by data flow. Each node is a box labelled with its name,
 * kind, time per step (forward and backward when it has both) and share of
 * the step time, filled by its self time's share (the HTML report's scale), with every
 * figure in its tooltip. In a declared graph (PyTorch modules) a node with
 * children is a cluster holding them; range nesting edges are dashed,
 * declared data-flow edges solid.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/sections/graph/sec_graph.h"

typedef struct dot_ctx {
  prof__an *an;
  const prof__graph *g;
  FILE *out;
  double max_share;
  unsigned char *has_edge;
  size_t *first_child, *next_sibling; /* SIZE_MAX: none */
} dot_ctx;

/* A DOT double-quoted string's content. */
static void dot_esc(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    if (*s == '\n') fputs("\\n", out);
    else fputc(*s, out);
  }
}

/* The HTML report's scale: pale blue, amber, red. */
static void dot_colour(char *buf, size_t n, double t) {
  static const int a[3] = {232, 241, 250}, b[3] = {247, 210, 122}, c[3] = {225, 87, 89};
  const int *x = t < 0.5 ? a : b, *y = t < 0.5 ? b : c;
  if (!(t > 0)) t = 0; /* NaN too */
  if (t > 1) t = 1;
  double f = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  int v[3];
  for (int k = 0; k < 3; k++) v[k] = (int)(x[k] + (y[k] - x[k]) * f + 0.5);
  snprintf(buf, n, "#%02x%02x%02x", v[0], v[1], v[2]);
}

static void dot_node(dot_ctx *c, size_t i, int indent) {
  const prof__graph *g = c->g;
  const prof__gnode *n = &g->nodes[i];
  char t[32], fw[32], bw[32], col[16];
  double sh = prof__gnode_share(c->an, n);
  double self = prof__gnode_self_share(c->an, n);
  dot_colour(col, sizeof col, c->max_share > 0 ? self / c->max_share : 0);
  fprintf(c->out, "%*sn%zu [label=\"", indent, "", i);
  dot_esc(c->out, prof__gnode_name(c->an, n));
  if (n->kind) {
    fputs("\\n", c->out);
    dot_esc(c->out, prof__an_str(c->an, n->kind));
  }
  prof__an_fmt_ns(t, sizeof t, prof__gnode_total(g, n));
  if (n->bwd)
    fprintf(c->out, "\\nfwd %s, bwd %s", prof__an_fmt_ns(fw, sizeof fw, n->fwd_total / g->steps),
            prof__an_fmt_ns(bw, sizeof bw, n->bwd_total / g->steps));
  else fprintf(c->out, "\\n%s", t);
  fprintf(c->out, "\\n%.1f%%\", fillcolor=\"%s\", tooltip=\"", 100 * sh, col);
  dot_esc(c->out, prof__gnode_name(c->an, n));
  fprintf(c->out, ": total %s per step, self %s", t, prof__an_fmt_ns(fw, sizeof fw, prof__gnode_self(g, n)));
  fprintf(c->out, ", %llu calls", (unsigned long long)n->calls);
  if (n->params) fprintf(c->out, ", %llu parameters (%llu bytes)", (unsigned long long)n->params,
                         (unsigned long long)n->param_bytes);
  if (n->act_elems) fprintf(c->out, ", activations %llu bytes", (unsigned long long)prof__gnode_act_bytes(n));
  if (g->sample_total) fprintf(c->out, ", CPU samples %.1f%%", 100.0 * (double)n->samples / (double)g->sample_total);
  fputs("\"];\n", c->out);
}

/* A node and its subtree: a cluster when it has children. */
static void dot_tree(dot_ctx *c, size_t i, int indent) {
  const prof__gnode *n = &c->g->nodes[i];
  if (c->first_child[i] == SIZE_MAX) {
    dot_node(c, i, indent);
    return;
  }
  fprintf(c->out, "%*ssubgraph \"cluster_%zu\" {\n%*slabel=\"", indent, "", i, indent + 2, "");
  dot_esc(c->out, prof__gnode_name(c->an, n));
  if (n->kind) {
    fputs(" (", c->out);
    dot_esc(c->out, prof__an_str(c->an, n->kind));
    fputc(')', c->out);
  }
  fprintf(c->out, "\"; style=\"rounded\"; color=\"#999999\";\n");
  if (c->has_edge[i]) dot_node(c, i, indent + 2);
  for (size_t k = c->first_child[i]; k != SIZE_MAX; k = c->next_sibling[k]) dot_tree(c, k, indent + 2);
  fprintf(c->out, "%*s}\n", indent, "");
}

int prof__export_dot(prof__an *an, FILE *out) {
  const prof__graph *g = prof__graph_of(an);
  if (!g) return PROF_ENOENT;
  dot_ctx c = {.an = an, .g = g, .out = out};
  c.has_edge = calloc(g->nnodes, 1);
  c.first_child = malloc(g->nnodes * sizeof *c.first_child);
  c.next_sibling = malloc(g->nnodes * sizeof *c.next_sibling);
  if (!c.has_edge || !c.first_child || !c.next_sibling) {
    free(c.has_edge), free(c.first_child), free(c.next_sibling);
    return PROF_ENOMEM;
  }
  int clusters = g->source == PROF_GRAPH_DECLARED;
  for (size_t i = 0; i < g->nnodes; i++) {
    c.first_child[i] = c.next_sibling[i] = SIZE_MAX;
    double sh = prof__gnode_self_share(an, &g->nodes[i]);
    if (sh > c.max_share) c.max_share = sh;
  }
  for (size_t i = g->nnodes; clusters && i-- > 0;) { /* children in declaration order */
    long p = g->nodes[i].parent;
    if (p < 0) continue;
    c.next_sibling[i] = c.first_child[p];
    c.first_child[p] = i;
  }
  for (size_t e = 0; e < g->nedges; e++) c.has_edge[g->edges[e].from] = c.has_edge[g->edges[e].to] = 1;
  fputs("// mlprof model graph of ", out);
  fputs(an->path, out);
  fprintf(out, " (source: %s); times per step\ndigraph mlprof {\n", g->source_name);
  fputs("  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, label=\"", out);
  dot_esc(out, g->source_name);
  fprintf(out, " graph: %zu nodes, %zu edges; times per step; colour: self time\"];\n", g->nnodes,
          g->nedges);
  fputs("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [color=\"#777777\"];\n",
        out);
  for (size_t i = 0; i < g->nnodes; i++)
    if (!clusters || g->nodes[i].parent < 0) dot_tree(&c, i, 2);
  for (size_t e = 0; e < g->nedges; e++)
    fprintf(out, "  n%zu -> n%zu%s;\n", g->edges[e].from, g->edges[e].to, g->edges[e].nests ? " [style=dashed]" : "");
  fputs("}\n", out);
  free(c.has_edge), free(c.first_child), free(c.next_sibling);
  return ferror(out) ? PROF_EIO : 0;
}
