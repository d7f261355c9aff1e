/* test_graph.c — the model graph: the range graph of a C program (nesting
 * edges, parents, self and total time per step, declared data-flow edges),
 * a declared module graph mapped onto its forward and backward ranges with
 * parameters, activation bytes and CPU-sample shares (hand-built traces, so
 * every figure is known), its DOT export and HTML panel, and the public
 * calls prof_graph_edge()/prof_graph_node() in a live session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_analyze_tb.h"
#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"
#include "analyze/sections/graph/sec_graph.h"
#include "trace/rec_hist.h"

/* ---- helpers --------------------------------------------------------------- */

static void tb_graph(tb *t, uint32_t tid, uint64_t ts, uint16_t aux, uint32_t name, uint64_t a, uint64_t b) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = PROF_EV_GRAPH;
  e.aux = aux;
  e.name = name;
  e.a = a;
  e.b = b;
  if (prof__tw_events(t->w, tid, &e, 1)) abort();
}

static void tb_sample(tb *t, uint32_t tid, uint64_t ts, uint32_t range, uint64_t weight) {
  prof__event e;
  memset(&e, 0, sizeof e);
  e.ts = ts;
  e.type = PROF_EV_SAMPLE;
  e.a = range;
  e.b = weight;
  if (prof__tw_events(t->w, tid, &e, 1)) abort();
}

static prof__an *analyze(const char *path) {
  prof__an *an = NULL;
  char err[256];
  int rc = prof__an_run_opts(&an, path, 1, err);
  if (rc) fail_msg("analysis failed (%d): %s", rc, err);
  return an;
}

/* A report (or export) into a malloc'd string. */
static char *report(prof__an *an, const char *format) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  if (strcmp(format, "dot") == 0) assert_int_equal(prof__export_dot(an, f), 0);
  else assert_int_equal(prof__report_write(an, format, f), 0);
  fclose(f);
  return buf;
}

static prof__jv *json_report(prof__an *an) {
  char *s = report(an, "json"), err[128];
  prof__jv *v = prof__jv_parse(s, strlen(s), err);
  if (!v) fail_msg("bad JSON: %s", err);
  free(s);
  return v;
}

static double num(const prof__jv *o, const char *key) {
  const prof__jv *v = prof__jv_get(o, key);
  if (!v || v->type != PROF_JV_NUM) fail_msg("no number '%s'", key);
  return v->num;
}

static double num2(const prof__jv *o, const char *obj, const char *key) {
  const prof__jv *v = prof__jv_get(o, obj);
  if (!v) fail_msg("no object '%s'", obj);
  return num(v, key);
}

static const char *str(const prof__jv *o, const char *key) {
  const prof__jv *v = prof__jv_get(o, key);
  return v && v->type == PROF_JV_STR ? v->str : NULL;
}

static const prof__jv *node(const prof__jv *g, const char *name) {
  const prof__jv *nodes = prof__jv_get(g, "nodes");
  for (size_t i = 0; nodes && i < nodes->len; i++) {
    const char *n = str(&nodes->items[i], "name");
    if (n && strcmp(n, name) == 0) return &nodes->items[i];
  }
  fail_msg("no node '%s'", name);
  return NULL;
}

/* The kind of edge from -> to ("nests", "flow"), or NULL. */
static const char *edge(const prof__jv *g, const char *from, const char *to) {
  double f = num(node(g, from), "id"), t = num(node(g, to), "id");
  const prof__jv *edges = prof__jv_get(g, "edges");
  for (size_t i = 0; edges && i < edges->len; i++)
    if (num(&edges->items[i], "from") == f && num(&edges->items[i], "to") == t) return str(&edges->items[i], "kind");
  return NULL;
}

/* ---- a C program's range graph ---------------------------------------------- */

enum { R_TRAIN = 1, R_FWD, R_MATMUL, R_RELU, R_BWD, R_LOSS };

/* Two steps of 1000 ns on thread 1: train [0, 900) holds forward [100, 500)
 * (matmul [150, 350), relu [350, 450)) and backward [500, 850). The
 * program declares matmul -> relu -> loss; loss is no range. */
static const char *c_trace(void) {
  tb t = tb_open("graph-c");
  const char *names[] = {"", "train", "forward", "matmul", "relu", "backward", "loss"};
  for (uint32_t i = 1; i <= R_LOSS; i++) tb_str(&t, i, names[i]);
  tb_graph(&t, 1, 0, 0, R_MATMUL, R_RELU, 0);
  tb_graph(&t, 1, 0, 0, R_RELU, R_LOSS, 0);
  tb_graph(&t, 1, 0, 0, R_MATMUL, R_RELU, 0); /* declared twice: one edge */
  for (uint64_t s = 0; s < 2; s++) {
    uint64_t o = s * 1000;
    tb_sb(&t, 1, o, s);
    tb_b(&t, 1, o + 0, R_TRAIN, PROF_CAT_COMPUTE);
    tb_b(&t, 1, o + 100, R_FWD, PROF_CAT_COMPUTE);
    tb_b(&t, 1, o + 150, R_MATMUL, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 350, R_MATMUL);
    tb_b(&t, 1, o + 350, R_RELU, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 450, R_RELU);
    tb_e(&t, 1, o + 500, R_FWD);
    tb_b(&t, 1, o + 500, R_BWD, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 850, R_BWD);
    tb_e(&t, 1, o + 900, R_TRAIN);
    tb_se(&t, 1, o + 1000, s);
  }
  return tb_close(&t, "0");
}

static void c_program_shows_its_range_graph(void **state) {
  (void)state;
  prof__an *an = analyze(c_trace());
  prof__jv *v = json_report(an);
  const prof__jv *g = prof__jv_get(v, "graph");
  assert_non_null(g);
  assert_string_equal(str(g, "source"), "ranges");
  const prof__jv *fwd = node(g, "forward"), *mm = node(g, "matmul");
  /* per step: forward 400 ns total, 100 ns self (less matmul 200, relu 100) */
  assert_int_equal((int)num(fwd, "calls"), 2);
  assert_int_equal((int)num(fwd, "total_ns"), 400);
  assert_int_equal((int)num(fwd, "self_ns"), 100);
  assert_true(num(fwd, "share") > 0.399 && num(fwd, "share") < 0.401);
  assert_int_equal((int)num(mm, "total_ns"), 200);
  assert_int_equal((int)num(mm, "depth"), 3);
  assert_int_equal((int)num(mm, "parent"), (int)num(fwd, "id"));
  assert_int_equal((int)num(node(g, "train"), "depth"), 1);
  /* the step node encloses the top-level ranges: all of the step, its untracked time as self */
  const prof__jv *step = node(g, "step");
  assert_string_equal(str(step, "kind"), "step");
  assert_int_equal((int)num(step, "depth"), 0);
  assert_int_equal((int)num(step, "calls"), 2);
  assert_int_equal((int)num(step, "total_ns"), 1000);
  assert_int_equal((int)num(step, "self_ns"), 100);
  assert_true(num(step, "share") > 0.999);
  assert_string_equal(edge(g, "step", "train"), "nests");
  /* nesting edges step by step, declared edges as flow */
  assert_string_equal(edge(g, "train", "forward"), "nests");
  assert_string_equal(edge(g, "forward", "matmul"), "nests");
  assert_string_equal(edge(g, "train", "backward"), "nests");
  assert_string_equal(edge(g, "matmul", "relu"), "flow");
  assert_string_equal(edge(g, "relu", "loss"), "flow");
  assert_null(edge(g, "train", "matmul"));
  assert_int_equal((int)prof__jv_get(g, "edges")->len, 7); /* 5 nesting + 2 declared */
  /* loss: a declared node without a range has no times */
  assert_int_equal((int)num(node(g, "loss"), "total_ns"), 0);
  prof__jv_free(v);
  /* the text report names the top nodes with inputs and outputs */
  char *text = report(an, "text");
  assert_non_null(strstr(text, "Model graph (ranges: 7 nodes, 7 edges"));
  assert_non_null(strstr(text, "in:  train"));
  assert_non_null(strstr(text, "out: forward, backward"));
  free(text);
  prof__an_free(an);
}

/* x begins once inside a and twice inside b: both nesting edges with their
 * counts, and b, where it begins most often, is its parent. */
static void name_under_two_parents_keeps_both_edges(void **state) {
  (void)state;
  tb t = tb_open("graph-two-parents");
  tb_str(&t, 1, "a");
  tb_str(&t, 2, "b");
  tb_str(&t, 3, "x");
  tb_sb(&t, 1, 0, 0);
  uint64_t ts = 0;
  const uint32_t outer[] = {1, 2, 2};
  for (int k = 0; k < 3; k++) {
    tb_b(&t, 1, ts + 10, outer[k], PROF_CAT_COMPUTE);
    tb_b(&t, 1, ts + 20, 3, PROF_CAT_COMPUTE);
    tb_e(&t, 1, ts + 30, 3);
    tb_e(&t, 1, ts + 40, outer[k]);
    ts += 50;
  }
  tb_se(&t, 1, ts, 0);
  prof__an *an = analyze(tb_close(&t, "0"));
  prof__jv *v = json_report(an);
  const prof__jv *g = prof__jv_get(v, "graph");
  assert_string_equal(edge(g, "a", "x"), "nests");
  assert_string_equal(edge(g, "b", "x"), "nests");
  const prof__jv *edges = prof__jv_get(g, "edges");
  double x = num(node(g, "x"), "id");
  for (size_t i = 0; i < edges->len; i++)
    if (num(&edges->items[i], "to") == x)
      assert_int_equal((int)num(&edges->items[i], "count"), num(&edges->items[i], "from") == num(node(g, "a"), "id") ? 1 : 2);
  assert_int_equal((int)num(node(g, "x"), "parent"), (int)num(node(g, "b"), "id"));
  assert_int_equal((int)num(node(g, "x"), "depth"), 2);
  assert_int_equal((int)num(node(g, "x"), "calls"), 3);
  prof__jv_free(v);
  prof__an_free(an);
}

static void dot_of_the_range_graph_has_dashed_nesting(void **state) {
  (void)state;
  prof__an *an = analyze(c_trace());
  char *dot = report(an, "dot");
  assert_non_null(strstr(dot, "digraph mlprof {"));
  assert_non_null(strstr(dot, "rankdir=LR"));
  /* node ids: the step 0, then ranges in first-seen order: train 1, forward 2, matmul 3, relu 4 */
  assert_non_null(strstr(dot, "n0 [label=\"step\\n1.00 us\\n100.0%"));
  assert_non_null(strstr(dot, "n1 [label=\"train\\n"));
  assert_non_null(strstr(dot, "n0 -> n1 [style=dashed];"));
  assert_non_null(strstr(dot, "n1 -> n2 [style=dashed];"));
  assert_non_null(strstr(dot, "n3 -> n4;"));
  assert_null(strstr(dot, "cluster_"));
  free(dot);
  prof__an_free(an);
}

/* ---- a declared module graph ------------------------------------------------- */

enum {
  M_ROOT = 1, M_FCA, M_FCB, M_RELU, M_HEAD, M_LINEAR, M_RELUK, M_NET,
  M_FCA_BWD, M_HEAD_FWD, M_HEAD_BWD, M_ACT, M_EVIL
};

/* TwoBranch: head(relu(fc_a(x) + fc_b(x))) for two steps of 10 us. The
 * module ranges use both naming styles the analyzer accepts: "fc_a" with
 * "fc_a.backward", and "head (Linear)" with "head (Linear).backward". */
static const char *module_trace(void) {
  tb t = tb_open("graph-mod");
  const char *names[] = {"",     "TwoBranch", "fc_a",          "fc_b",          "relu",
                         "head", "Linear",    "ReLU",          "net",           "fc_a.backward",
                         "head (Linear)",     "head (Linear).backward", "fc_a.act", "</script><b>x\"\\"};
  for (uint32_t i = 1; i <= M_EVIL; i++) tb_str(&t, i, names[i]);
  prof__kv meta[] = {{"graph.source", "torch"}};
  assert_int_equal(prof__tw_meta(t.w, meta, 1), 0);
  tb_graph(&t, 1, 0, 1, M_ROOT, M_NET, 0);
  tb_graph(&t, 1, 0, 2, M_ROOT, 90, 360);
  tb_graph(&t, 1, 0, 1, M_FCA, M_LINEAR, M_ROOT);
  tb_graph(&t, 1, 0, 2, M_FCA, 40, 160);
  tb_graph(&t, 1, 0, 1, M_FCB, M_LINEAR, M_ROOT);
  tb_graph(&t, 1, 0, 2, M_FCB, 40, 160);
  tb_graph(&t, 1, 0, 1, M_RELU, M_RELUK, M_ROOT);
  tb_graph(&t, 1, 0, 1, M_HEAD, M_LINEAR, M_ROOT);
  tb_graph(&t, 1, 0, 2, M_HEAD, 10, 40);
  tb_graph(&t, 1, 0, 1, M_EVIL, 0, M_ROOT);
  tb_graph(&t, 1, 0, 0, M_FCA, M_RELU, 0);
  tb_graph(&t, 1, 0, 0, M_FCB, M_RELU, 0);
  tb_graph(&t, 1, 0, 0, M_RELU, M_HEAD, 0);
  for (uint64_t s = 0; s < 2; s++) {
    uint64_t o = s * 10000;
    tb_sb(&t, 1, o, s);
    tb_b(&t, 1, o + 0, M_ROOT, PROF_CAT_COMPUTE);
    tb_b(&t, 1, o + 100, M_FCA, PROF_CAT_COMPUTE);
    tb_sample(&t, 1, o + 200, M_FCA, 3);
    tb_e(&t, 1, o + 1100, M_FCA);
    tb_b(&t, 1, o + 1100, M_FCB, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 1600, M_FCB);
    tb_b(&t, 1, o + 1600, M_RELU, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 1700, M_RELU);
    tb_b(&t, 1, o + 1700, M_HEAD_FWD, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 2700, M_HEAD_FWD);
    tb_e(&t, 1, o + 3000, M_ROOT);
    tb_b(&t, 1, o + 4000, M_HEAD_BWD, PROF_CAT_COMPUTE);
    tb_sample(&t, 1, o + 4100, M_HEAD_BWD, 1);
    tb_e(&t, 1, o + 6000, M_HEAD_BWD);
    tb_b(&t, 1, o + 6000, M_FCA_BWD, PROF_CAT_COMPUTE);
    tb_e(&t, 1, o + 9000, M_FCA_BWD);
    tb_se(&t, 1, o + 10000, s);
  }
  /* an activation histogram of fc_a's 64 outputs */
  prof__buf b = {0};
  prof__buf_u8(&b, PROF_HIST_FORMAT);
  prof__hrec h;
  memset(&h, 0, sizeof h);
  h.ts_ns = 500;
  h.step1 = 1;
  h.tid = 1;
  h.tag = M_ACT;
  h.kind = PROF_HIST_ACTIVATION;
  h.sum.count = 64;
  prof__rec_hist_encode(&b, &h);
  assert_int_equal(prof__tw_chunk(t.w, PROF_CHUNK_HIST, b.p, b.len), 0);
  prof__buf_free(&b);
  return tb_close(&t, "0");
}

static void module_graph_maps_modules_to_their_ranges(void **state) {
  (void)state;
  prof__an *an = analyze(module_trace());
  prof__jv *v = json_report(an);
  const prof__jv *g = prof__jv_get(v, "graph");
  assert_non_null(g);
  assert_string_equal(str(g, "source"), "torch");
  assert_int_equal((int)prof__jv_get(g, "nodes")->len, 6);
  const prof__jv *a = node(g, "fc_a"), *h = node(g, "head"), *root = node(g, "TwoBranch");
  assert_string_equal(str(a, "kind"), "Linear");
  assert_int_equal((int)num(a, "parent"), (int)num(root, "id"));
  assert_int_equal((int)num(a, "depth"), 1);
  assert_int_equal((int)num2(a, "forward", "total_ns"), 1000);
  assert_int_equal((int)num2(a, "backward", "total_ns"), 3000);
  assert_int_equal((int)num(a, "total_ns"), 4000);
  assert_int_equal((int)num(a, "calls"), 2);
  assert_int_equal((int)num(a, "params"), 40);
  assert_int_equal((int)num(a, "param_bytes"), 160);
  assert_int_equal((int)num(a, "activation_bytes"), 256);
  assert_true(num(a, "cpu_sample_share") > 0.74 && num(a, "cpu_sample_share") < 0.76);
  assert_string_equal(str(h, "range"), "head (Linear)");
  assert_string_equal(str(h, "backward_range"), "head (Linear).backward");
  assert_int_equal((int)num2(h, "forward", "total_ns"), 1000);
  assert_int_equal((int)num2(h, "backward", "total_ns"), 2000);
  assert_true(num(h, "share") > 0.299 && num(h, "share") < 0.301);
  assert_int_equal((int)num2(root, "forward", "self_ns"), 3000 - 2700 + 100);
  assert_int_equal(prof__jv_get(node(g, "fc_b"), "activation_bytes")->type, PROF_JV_NULL);
  /* data flow only: both branches feed relu, relu feeds head, in order */
  assert_string_equal(edge(g, "fc_a", "relu"), "flow");
  assert_string_equal(edge(g, "fc_b", "relu"), "flow");
  assert_string_equal(edge(g, "relu", "head"), "flow");
  assert_int_equal((int)prof__jv_get(g, "edges")->len, 3);
  assert_int_equal((int)num(prof__jv_at(prof__jv_get(g, "edges"), 2), "from"), (int)num(node(g, "relu"), "id"));
  prof__jv_free(v);
  prof__an_free(an);
}

static void dot_of_a_module_graph_clusters_the_tree(void **state) {
  (void)state;
  prof__an *an = analyze(module_trace());
  char *dot = report(an, "dot");
  assert_non_null(strstr(dot, "subgraph \"cluster_0\""));
  assert_non_null(strstr(dot, "label=\"TwoBranch (net)\""));
  assert_non_null(strstr(dot, "n1 [label=\"fc_a\\nLinear\\nfwd 1.00 us, bwd 3.00 us\\n40.0%"));
  assert_non_null(strstr(dot, "n1 -> n3;"));
  assert_non_null(strstr(dot, "n2 -> n3;"));
  assert_non_null(strstr(dot, "n3 -> n4;"));
  assert_non_null(strstr(dot, "n5 [label=\"</script><b>x\\\"\\\\\\n")); /* quote and backslash escaped */
  if (th_exists("/usr/bin/dot")) { /* Graphviz reads it */
    const char *path = th_tmp_path("graph-mod", ".dot");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(dot, f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/dot -Tsvg '%s' -o '%s.svg'", path, path);
    assert_int_equal(th_run(cmd, NULL), 0);
  }
  free(dot);
  prof__an_free(an);
}

static void html_panel_carries_the_graph_safely(void **state) {
  (void)state;
  prof__an *an = analyze(module_trace());
  char *html = report(an, "html");
  assert_non_null(strstr(html, "<section class=\"sec\" id=\"graph\">"));
  assert_non_null(strstr(html, "<a href=\"#graph\">Model graph</a>"));
  assert_non_null(strstr(html, "id=\"graph-data\""));
  assert_non_null(strstr(html, "data-range=\"fc_a\""));
  /* a node name cannot close the script element that holds the data */
  assert_non_null(strstr(html, "\\u003c/script>\\u003cb>x"));
  const char *data = strstr(html, "id=\"graph-data\">");
  const char *end = strstr(data, "</script>");
  assert_null(memmem(data, (size_t)(end - data), "<b>", 3));
  free(html);
  prof__an_free(an);
}

static void trace_without_ranges_or_nodes_has_no_graph(void **state) {
  (void)state;
  tb t = tb_open("graph-none");
  tb_sb(&t, 1, 0, 0);
  tb_se(&t, 1, 100, 0);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_null(prof__graph_of(an));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_dot(an, f), PROF_ENOENT);
  fclose(f);
  assert_int_equal(len, 0);
  free(buf);
  char *json = report(an, "json");
  assert_null(strstr(json, "\"graph\""));
  free(json);
  prof__an_free(an);
}

/* Ranges all directly under the step: the text report leaves the graph out
 * (every node would read "in: step, out: -", the ranges table again); the
 * JSON keeps it. */
static void flat_range_graph_is_left_out_of_the_text(void **state) {
  (void)state;
  tb t = tb_open("graph-flat");
  tb_str(&t, 1, "load");
  tb_str(&t, 2, "train");
  for (uint64_t k = 0; k < 3; k++) {
    uint64_t b = 1000 + k * 1000;
    tb_sb(&t, 1, b, k);
    tb_b(&t, 1, b + 10, 1, 0);
    tb_e(&t, 1, b + 100, 1);
    tb_b(&t, 1, b + 110, 2, 0);
    tb_e(&t, 1, b + 900, 2);
    tb_se(&t, 1, b + 950, k);
  }
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_non_null(prof__graph_of(an));
  char *text = report(an, "text"), *json = report(an, "json");
  assert_null(strstr(text, "Model graph"));
  assert_non_null(strstr(json, "\"graph\""));
  free(text);
  free(json);
  prof__an_free(an);
}

static size_t count(const char *h, const char *end, const char *what) {
  size_t n = 0;
  for (const char *p = strstr(h, what); p && p < end; p = strstr(p + 1, what)) n++;
  return n;
}

/* 2000 top-level ranges in one step: the JSON report has them all, the page
 * draws the 1500 with the most self time (and the step that holds them). */
static void big_graph_is_cut_for_the_page(void **state) {
  (void)state;
  tb t = tb_open("graph-big");
  char name[32];
  for (uint32_t i = 1; i <= 2000; i++) {
    snprintf(name, sizeof name, "r%u", i);
    tb_str(&t, i, name);
  }
  tb_sb(&t, 1, 0, 0);
  uint64_t ts = 10;
  for (uint32_t i = 1; i <= 2000; i++) {
    tb_b(&t, 1, ts, i, PROF_CAT_COMPUTE);
    ts += 10 + i; /* r2000 is the longest */
    tb_e(&t, 1, ts, i);
  }
  tb_se(&t, 1, ts + 10, 0);
  prof__an *an = analyze(tb_close(&t, "0"));
  assert_int_equal(prof__graph_of(an)->nnodes, 2001);
  char *html = report(an, "html");
  const char *data = strstr(html, "id=\"graph-data\">"), *end = strstr(data, "</script>");
  assert_int_equal(count(data, end, "{\"n\":"), 1501);
  assert_int_equal(count(data, end, "{\"n\":\"r500\""), 0);
  assert_int_equal(count(data, end, "{\"n\":\"r501\""), 1);
  assert_int_equal(count(data, end, "{\"n\":\"step\""), 1);
  assert_non_null(strstr(html, "The drawing holds the 1501 nodes with the most self time"));
  free(html);
  prof__an_free(an);
}

/* ---- the public calls in a live session -------------------------------------- */

static void public_calls_reach_the_trace(void **state) {
  (void)state;
  prof_graph_edge("early", "ignored"); /* before prof_init: ignored */
  const char *path = th_tmp_path("graph-live", ".mlpt");
  prof_config cfg = prof_config_default();
  cfg.output = path;
  cfg.report = 0;
  assert_int_equal(prof_init(&cfg), 0);
  prof_graph_node("Net", "Sequential", NULL, 30, 120);
  prof_graph_node("0", "Linear", "Net", 20, 80);
  prof_graph_node("1", "Linear", "Net", 10, 40);
  prof_graph_node(NULL, "Linear", "Net", 1, 1); /* ignored, counted */
  prof_graph_edge("0", "1");
  prof_graph_edge(NULL, "1");                   /* ignored, counted */
  prof_graph_edge_id(prof_name_id("0"), 999999); /* unknown id: ignored, counted */
  prof_graph_node_id(prof_name_id("1"), prof_name_id("Linear"), prof_name_id("Net"), 10, 40);
  for (int s = 0; s < 3; s++) {
    assert_int_equal(prof_start(), 0);
    prof_range_push("0");
    prof_range_pop();
    prof_range_push("1");
    prof_range_pop();
    assert_int_equal(prof_stop(), 0);
  }
  assert_int_equal(prof_shutdown(), 0);
  prof__an *an = analyze(path);
  const prof__graph *g = prof__graph_of(an);
  assert_non_null(g);
  assert_int_equal(g->source, PROF_GRAPH_DECLARED);
  assert_string_equal(g->source_name, "declared");
  assert_int_equal(g->nnodes, 3);
  assert_int_equal(g->nedges, 1);
  assert_string_equal(prof__an_str(an, g->nodes[g->edges[0].from].name), "0");
  assert_string_equal(prof__an_str(an, g->nodes[g->edges[0].to].name), "1");
  const prof__gnode *one = &g->nodes[g->edges[0].to];
  assert_int_equal(one->calls, 3);
  assert_int_equal(one->parent, 0);
  assert_int_equal(one->params, 10);
  assert_int_equal(one->param_bytes, 40);
  assert_int_equal(g->nodes[0].nchildren, 2);
  const char *v = prof__an_footer(an, "misuse.null_name");
  assert_non_null(v);
  assert_true(atoi(v) >= 2);
  v = prof__an_footer(an, "misuse.bad_name_id");
  assert_non_null(v);
  assert_true(atoi(v) >= 1);
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(c_program_shows_its_range_graph),
      cmocka_unit_test(name_under_two_parents_keeps_both_edges),
      cmocka_unit_test(dot_of_the_range_graph_has_dashed_nesting),
      cmocka_unit_test(module_graph_maps_modules_to_their_ranges),
      cmocka_unit_test(dot_of_a_module_graph_clusters_the_tree),
      cmocka_unit_test(html_panel_carries_the_graph_safely),
      cmocka_unit_test(trace_without_ranges_or_nodes_has_no_graph),
      cmocka_unit_test(flat_range_graph_is_left_out_of_the_text),
      cmocka_unit_test(big_graph_is_cut_for_the_page),
      cmocka_unit_test(public_calls_reach_the_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
