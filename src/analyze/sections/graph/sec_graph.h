/* sec_graph.h — the model graph of one trace, shared by the "graph"
 * section's writers: text and JSON (sec_graph.c), the HTML panel
 * (sec_graph_html.c) and the Graphviz export (export_dot.c).
 *
 * Two kinds of graph (docs/graph.md):
 *  - declared: nodes and data-flow edges a binding declared with
 *    prof_graph_node()/prof_graph_edge() (mlprof.torch.instrument records a
 *    model's module tree and the flow between its modules); each node's
 *    figures come from its forward and backward ranges;
 *  - ranges: one node per range name, an edge from each range to the ranges
 *    it encloses, plus any edges the program declared.
 * All times are whole-trace sums; writers divide by `steps` for the per-step
 * figures.
 */
#ifndef PROF_SEC_GRAPH_H
#define PROF_SEC_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"

enum { PROF_GRAPH_NONE = 0, PROF_GRAPH_RANGES = 1, PROF_GRAPH_DECLARED = 2 };

/* The name id of the "step" node of a range graph: it encloses the ranges
 * that begin outside any other range during a step, on the step's thread. */
#define PROF_GRAPH_STEP_ID UINT32_MAX

typedef struct prof__gnode {
  uint32_t name, kind;       /* string ids; kind 0: none */
  uint32_t fwd, bwd;         /* name ids of its forward and backward ranges (0: none) */
  long parent;               /* index of the containing node, -1 at the top */
  int depth;                 /* 0 at the top */
  int declared;              /* described by prof_graph_node() */
  size_t nchildren;
  uint64_t params, param_bytes;
  uint64_t calls, bwd_calls; /* range calls */
  uint64_t fwd_total, fwd_self, bwd_total, bwd_self; /* ns over the whole trace */
  uint64_t act_elems;        /* values of its largest activation histogram (0: none) */
  uint64_t samples;          /* sample weight whose innermost range is fwd or bwd */
} prof__gnode;

typedef struct prof__gedge {
  size_t from, to;           /* node indexes */
  uint64_t count;            /* nesting: times `to` began inside `from`; declared: 1 */
  int nests;                 /* 1: range nesting, 0: declared data flow */
} prof__gedge;

typedef struct prof__graph {
  int source;                /* PROF_GRAPH_* */
  char source_name[32];      /* "ranges", "torch" (META graph.source), "declared" */
  prof__gnode *nodes;
  size_t nnodes;
  prof__gedge *edges;        /* in declaration / first-seen order */
  size_t nedges;
  uint64_t steps;            /* per-step divisor: the step count, 1 without steps */
  uint64_t sample_total;     /* all sample weight of the mode used */
} prof__graph;

/* The graph of an analysed trace, or NULL when it has no nodes. */
const prof__graph *prof__graph_of(const prof__an *an);

/* A node's name ("step" for the step node). */
const char *prof__gnode_name(const prof__an *an, const prof__gnode *n);

/* Per-step forward + backward time of a node, total and self. */
static inline uint64_t prof__gnode_total(const prof__graph *g, const prof__gnode *n) {
  return (n->fwd_total + n->bwd_total) / g->steps;
}
static inline uint64_t prof__gnode_self(const prof__graph *g, const prof__gnode *n) {
  return (n->fwd_self + n->bwd_self) / g->steps;
}
/* Share of the step time spent in the node (total time; 0 without steps),
 * at most 1. */
double prof__gnode_share(const prof__an *an, const prof__gnode *n);
/* Share of the step time in the node itself (self time), at most 1. */
double prof__gnode_self_share(const prof__an *an, const prof__gnode *n);
/* Activation bytes: the values of its activation histogram as float32. */
static inline uint64_t prof__gnode_act_bytes(const prof__gnode *n) { return n->act_elems * 4; }

/* Node indexes ranked by self time, then total time, then declaration
 * order (malloc'd, g->nnodes entries; NULL without memory). */
size_t *prof__graph_ranked(const prof__graph *g);

/* The HTML panel (sec_graph_html.c), its style sheet and script
 * (sec_graph_js.c). */
void prof__graph_html(prof__an *an, void *st, FILE *out);
extern const char prof__graph_css[];
extern const char prof__graph_js[];

/* Graphviz DOT of the graph (export_dot.c). Returns 0, PROF_ENOENT when
 * the trace has no graph (nothing is written), or PROF_EIO when writing
 * failed. */
int prof__export_dot(prof__an *an, FILE *out);

#endif
