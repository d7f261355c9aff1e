/* ev_graph.h — the model-graph family of the event contract: GRAPH events
 * written by prof_graph_node()/prof_graph_edge() (src/core/api.c) and read by
 * the graph section (docs/graph.md). Values are part of the format.
 *
 *   GRAPH aux PROF_GRAPH_EDGE:      name = from node id, a = to node id
 *         aux PROF_GRAPH_NODE:      name = node id, a = kind id, b = parent id (0: none)
 *         aux PROF_GRAPH_NODE_SIZE: name = node id, a = parameters, b = parameter bytes
 */
#ifndef PROF_EV_GRAPH_H
#define PROF_EV_GRAPH_H

enum { PROF_GRAPH_EDGE = 0, PROF_GRAPH_NODE = 1, PROF_GRAPH_NODE_SIZE = 2 };

#endif /* PROF_EV_GRAPH_H */
