/* sec_graph_html.c — the HTML panel of the "graph" section: the model graph
 * drawn as an inline SVG by a small script of its own (no library, nothing
 * from the network), and a table of every node that reads without script.
 *
 * The page carries the graph as JSON (nodes with their figures and hot
 * functions, edges). The script folds subtrees below a depth chosen so that
 * about GR_VISIBLE nodes show (a folded node stands for its subtree; edges
 * of hidden nodes are drawn from it), lays the visible nodes out left to
 * right by data flow — cycles broken by a depth-first search, longest-path
 * layers, dummy nodes on long edges, barycentric ordering sweeps — and
 * colours each node by its share of the step time. Hovering a node shows its
 * figures; clicking it unfolds it (when folded) and shows its figures, its
 * row of the ranges table and its hot functions. `#graph:NAME` in the
 * address opens the graph at that node.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/report/html.h"
#include "analyze/report/html_series.h"
#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/sections/graph/sec_graph.h"

#define GR_TABLE_MAX 500 /* rows of the node table */
#define GR_DRAW_MAX 1500 /* nodes given to the drawing (the most self time, with their ancestors) */
#define GR_HOT 3         /* hot functions per range */

/* Copy a memory stream to out, writing '<' as \u003c so the JSON cannot end
 * the <script> element that holds it. */
static void put_script_json(FILE *out, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '<') fputs("\\u003c", out);
    else fputc(p[i], out);
  }
}

static void hot_functions(prof__an *an, prof__json *j, uint32_t range, const char *label) {
  const prof__fn_st *fs = prof__an_section(an, "functions");
  if (!fs || !range || !fs->f) return;
  uint64_t all = prof__u64map_get(&fs->rangetot, range);
  prof__kv64 top[GR_HOT];
  size_t n = prof__fn_range_top(fs, range, top, GR_HOT);
  for (size_t i = 0; i < n && all; i++) {
    if (top[i].k >= fs->nf) continue;
    prof__json_arr_begin(j);
    prof__json_str(j, label);
    prof__json_str(j, fs->f[top[i].k].name ? fs->f[top[i].k].name : "?");
    prof__json_num(j, (double)top[i].v / (double)all);
    prof__json_arr_end(j);
  }
}

/* The nodes the page draws: all of them, or the GR_DRAW_MAX with the most
 * self time and their ancestors. map[i] is node i's index in the page, -1
 * when left out. Returns the count kept, or 0 without memory. */
static size_t draw_set(const prof__graph *g, long *map) {
  if (g->nnodes <= GR_DRAW_MAX) {
    for (size_t i = 0; i < g->nnodes; i++) map[i] = (long)i;
    return g->nnodes;
  }
  size_t *idx = prof__graph_ranked(g);
  if (!idx) return 0;
  for (size_t i = 0; i < g->nnodes; i++) map[i] = -1;
  for (size_t k = 0; k < GR_DRAW_MAX; k++)
    for (long p = (long)idx[k]; p >= 0 && map[p] < 0; p = g->nodes[p].parent) map[p] = 0;
  free(idx);
  size_t n = 0;
  for (size_t i = 0; i < g->nnodes; i++)
    if (map[i] >= 0) map[i] = (long)n++;
  return n;
}

static void data_json(prof__an *an, const prof__graph *g, const long *map, FILE *f) {
  prof__json j;
  prof__json_init(&j, f, 0);
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "source", g->source_name);
  prof__json_key(&j, "nodes");
  prof__json_arr_begin(&j);
  for (size_t i = 0; i < g->nnodes; i++) {
    const prof__gnode *n = &g->nodes[i];
    if (map[i] < 0) continue;
    prof__json_obj_begin(&j);
    prof__json_kstr(&j, "n", prof__gnode_name(an, n));
    prof__json_kstr(&j, "k", n->kind ? prof__an_str(an, n->kind) : n->name == PROF_GRAPH_STEP_ID ? "step" : "");
    prof__json_kint(&j, "p", n->parent >= 0 ? map[n->parent] : -1);
    prof__json_kint(&j, "d", n->depth);
    prof__json_kstr(&j, "r", n->fwd ? prof__an_str(an, n->fwd) : "");
    prof__json_kstr(&j, "b", n->bwd ? prof__an_str(an, n->bwd) : "");
    prof__json_kuint(&j, "c", n->calls);
    prof__json_kuint(&j, "t", prof__gnode_total(g, n));
    prof__json_kuint(&j, "s", prof__gnode_self(g, n));
    prof__json_kuint(&j, "ft", n->fwd_total / g->steps);
    prof__json_kuint(&j, "fs", n->fwd_self / g->steps);
    prof__json_kuint(&j, "bt", n->bwd_total / g->steps);
    prof__json_kuint(&j, "bs", n->bwd_self / g->steps);
    prof__json_knum(&j, "sh", prof__gnode_share(an, n));
    prof__json_knum(&j, "ss", prof__gnode_self_share(an, n));
    prof__json_kuint(&j, "pa", n->params);
    prof__json_kuint(&j, "pb", n->param_bytes);
    prof__json_kuint(&j, "ab", prof__gnode_act_bytes(n));
    prof__json_knum(&j, "cs", g->sample_total ? (double)n->samples / (double)g->sample_total : -1);
    prof__json_key(&j, "hot");
    prof__json_arr_begin(&j);
    hot_functions(an, &j, n->fwd, n->bwd ? "forward" : "");
    hot_functions(an, &j, n->bwd, "backward");
    prof__json_arr_end(&j);
    prof__json_obj_end(&j);
  }
  prof__json_arr_end(&j);
  prof__json_key(&j, "edges");
  prof__json_arr_begin(&j);
  for (size_t e = 0; e < g->nedges; e++) {
    if (map[g->edges[e].from] < 0 || map[g->edges[e].to] < 0) continue;
    prof__json_arr_begin(&j);
    prof__json_int(&j, map[g->edges[e].from]);
    prof__json_int(&j, map[g->edges[e].to]);
    prof__json_uint(&j, (uint64_t)g->edges[e].nests);
    prof__json_arr_end(&j);
  }
  prof__json_arr_end(&j);
  prof__json_obj_end(&j);
}

static void node_table(prof__an *an, const prof__graph *g, FILE *out) {
  fprintf(out, "<details><summary>All %zu nodes as a table</summary>\n", g->nnodes);
  static const char *const h[] = {"node",           "kind",        "parent",     "calls",       "total / step",
                                  "self / step",    "forward",     "backward",   "% of step",   "parameters",
                                  "parameter bytes", "activation bytes", "inputs"};
  prof__html_table_begin(out, h, 13);
  for (size_t i = 0; i < g->nnodes && i < GR_TABLE_MAX; i++) {
    const prof__gnode *n = &g->nodes[i];
    char b[64];
    fputs("<tr>", out);
    prof__html_td(out, prof__gnode_name(an, n));
    prof__html_td(out, n->kind ? prof__an_str(an, n->kind) : "");
    prof__html_td(out, n->parent >= 0 ? prof__gnode_name(an, &g->nodes[n->parent]) : "");
    prof__html_td_count(out, (double)n->calls);
    prof__html_td_ns(out, prof__gnode_total(g, n));
    prof__html_td_ns(out, prof__gnode_self(g, n));
    prof__html_td_ns(out, n->fwd_total / g->steps);
    prof__html_td_ns(out, n->bwd_total / g->steps);
    prof__html_td_pct(out, prof__gnode_share(an, n));
    prof__html_td_count(out, (double)n->params);
    prof__html_td_bytes(out, (double)n->param_bytes);
    prof__html_td_bytes(out, (double)prof__gnode_act_bytes(n));
    fputs("<td>", out);
    size_t shown = 0;
    for (size_t e = 0; e < g->nedges && shown < 6; e++)
      if (g->edges[e].to == i) {
        fputs(shown++ ? ", " : "", out);
        prof__html_esc(out, prof__gnode_name(an, &g->nodes[g->edges[e].from]));
      }
    snprintf(b, sizeof b, "%s", shown == 6 ? ", ..." : "");
    fputs(b, out);
    fputs("</td></tr>\n", out);
  }
  prof__html_table_end(out);
  if (g->nnodes > GR_TABLE_MAX)
    fprintf(out, "<p class=\"note\">%zu more nodes are in the JSON report.</p>\n", g->nnodes - GR_TABLE_MAX);
  fputs("</details>\n", out);
}

void prof__graph_html(prof__an *an, void *st, FILE *out) {
  (void)st;
  const prof__graph *g = prof__graph_of(an);
  if (!g) return;
  long *map = malloc(g->nnodes * sizeof *map);
  size_t drawn = map ? draw_set(g, map) : 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = drawn ? open_memstream(&buf, &len) : NULL;
  if (!mem) {
    free(map);
    return;
  }
  data_json(an, g, map, mem);
  free(map);
  if (fclose(mem) != 0 || !buf) {
    free(buf);
    return;
  }
  prof__html_section_begin(out, "graph", "Model graph");
  fprintf(out, "<style>%s</style>\n", prof__graph_css);
  fprintf(out,
          "<p class=\"note\">%s graph: %zu nodes, %zu edges, times per step. Colour: the node's own (self) "
          "time as a share of the step time; a folded node's: its whole subtree's. "
          "Hover a node for its figures; click it for its row of the ranges table and its hot functions; a "
          "node marked <b>+n</b> stands for n folded nodes: click it to unfold.</p>\n",
          g->source == PROF_GRAPH_RANGES ? "Range" : "Module", g->nnodes, g->nedges);
  if (drawn < g->nnodes)
    fprintf(out, "<p class=\"note\">The drawing holds the %zu nodes with the most self time and their "
                 "containers; all %zu are in the JSON report.</p>\n", drawn, g->nnodes);
  fputs("<div class=\"gctl\">fold below depth <select id=\"graph-depth\"></select> "
        "<button type=\"button\" id=\"graph-unfold\">unfold all</button> <span id=\"graph-legend\"></span></div>\n"
        "<div id=\"graph-view\"><svg id=\"graph-svg\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
        "aria-label=\"model graph\"></svg></div>\n<div id=\"graph-info\"></div>\n"
        "<script type=\"application/json\" id=\"graph-data\">",
        out);
  put_script_json(out, buf, len);
  fputs("</script>\n", out);
  free(buf);
  node_table(an, g, out);
  fprintf(out, "<script>%s</script>\n", prof__graph_js);
  prof__html_section_end(out);
}
