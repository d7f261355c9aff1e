/* sec_graph.c — the "graph" report section: the model's computation as a
 * graph with its measured costs on every node (docs/graph.md).
 *
 * Pass 1 collects what the trace says about structure: nodes and edges
 * declared with prof_graph_node()/prof_graph_edge() (PROF_EV_GRAPH), which
 * range began inside which (a stack per thread), the CPU samples per
 * innermost range and the size of activation histograms. `finish` builds
 * the graph (sec_graph.h): a declared graph when the trace describes nodes
 * (the PyTorch binding does, with META graph.source = "torch"), else the
 * range graph. Then each node gets its figures from the core model's range
 * table. The text report lists the top nodes with their inputs and outputs;
 * the JSON report has every node and edge; the HTML panel and the DOT export
 * live in sec_graph_html.c and export_dot.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/analyze.h"
#include "analyze/util/array.h"
#include "analyze/util/termsafe.h"
#include "trace/rec_hist.h"
#include "analyze/sections/functions/sec_functions.h"
#include "analyze/sections/graph/sec_graph.h"
#include "trace/ev_graph.h"
#include "trace/ev_sample.h"

#define GR_STACK_MAX 512  /* range nesting whose edges are kept */
#define GR_TEXT_TOP 8     /* nodes in the text report */
#define GR_TEXT_LINKS 3   /* inputs / outputs named per node in the text report */


typedef struct decl_node {
  uint32_t name, kind, parent;
  uint64_t params, bytes;
} decl_node;

/* Per range name id below GR_DENSE: what most names need, without a hash
 * lookup per range begin. Other enclosing names go to the maps. */
#define GR_DENSE (1u << 20)
typedef struct name_info {
  uint32_t parent;           /* the first enclosing name seen */
  uint32_t min_depth1;       /* shallowest depth it began at + 1 (0: never) */
  uint64_t count;            /* begins inside `parent` (0: none yet) */
} name_info;

typedef struct gr_st {
  prof__graph g;             /* first: the result */
  /* pass 1 */
  decl_node *dn;
  size_t ndn, dn_cap;
  prof__u64map dn_map;       /* name id -> index + 1 */
  uint64_t *de;              /* declared edges from << 32 | to, first-seen order */
  size_t nde, de_cap;
  prof__u64map de_map;       /* edge key -> 1 */
  uint64_t *ne;              /* nesting edges parent << 32 | child, first-seen order */
  size_t nne, ne_cap;
  prof__u64map ne_map;       /* edge key -> count, beyond a name's first parent */
  prof__u64map min_depth;    /* range name >= GR_DENSE -> shallowest depth it began at + 1 */
  name_info *ni;             /* by name id, below GR_DENSE */
  size_t ni_cap;
  prof__u64map samples[2];   /* innermost range id -> weight, cpu / wall */
  uint64_t sample_total[2];
  prof__u64map act;          /* activation tag id -> largest value count */
  int oom;
} gr_st;

/* ---- small helpers ------------------------------------------------------- */

static void map_set(gr_st *s, prof__u64map *m, uint64_t key, uint64_t v) {
  uint64_t *p = prof__u64map_at(m, key);
  if (p) *p = v;
  else s->oom = 1;
}

static uint64_t text_hash(const char *p) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h >> 1; /* keys + 1 must not wrap */
}

static name_info *info_of(gr_st *s, uint32_t name) {
  if (name >= GR_DENSE) return NULL;
  if (name >= s->ni_cap) {
    size_t old = s->ni_cap;
    if (prof__arr_grow((void **)&s->ni, &s->ni_cap, (size_t)name + 1, sizeof *s->ni)) {
      s->oom = 1;
      return NULL;
    }
    memset(s->ni + old, 0, (s->ni_cap - old) * sizeof *s->ni);
  }
  return &s->ni[name];
}

static uint64_t min_depth_of(const gr_st *s, uint32_t name) {
  return name < s->ni_cap ? s->ni[name].min_depth1 : prof__u64map_get(&s->min_depth, name);
}

/* How often `key` (parent << 32 | child) was seen. */
static uint64_t nest_count(const gr_st *s, uint64_t key) {
  uint32_t c = (uint32_t)key;
  if (c < s->ni_cap && s->ni[c].count && s->ni[c].parent == (uint32_t)(key >> 32)) return s->ni[c].count;
  return prof__u64map_get(&s->ne_map, key);
}

static void nest_new(gr_st *s, uint64_t key) {
  if (prof__arr_grow((void **)&s->ne, &s->ne_cap, s->nne + 1, sizeof *s->ne)) s->oom = 1;
  else s->ne[s->nne++] = key;
}

/* A range begun: its nesting under the range that encloses it on its
 * thread (or under the step, at the top of a step), from the engine's
 * context (prof__an_ctx), which has it open already. */
static void range_begin(prof__an *an, gr_st *s, uint32_t name) {
  const prof__ctx *c = prof__an_ctx(an);
  if (!c->depth || c->range != name) return; /* deeper than the model keeps */
  uint32_t d = c->depth - 1;
  name_info *ni = info_of(s, name);
  if (ni) {
    if (!ni->min_depth1 || d + 1 < ni->min_depth1) ni->min_depth1 = d + 1;
  } else {
    uint64_t md = prof__u64map_get(&s->min_depth, name);
    if (md == 0 || d + 1 < md) map_set(s, &s->min_depth, name, (uint64_t)d + 1);
  }
  if ((d > 0 && d <= GR_STACK_MAX) || (d == 0 && c->in_step)) {
    uint32_t parent = d ? prof__an_ctx_range_at(an, d - 1) : PROF_GRAPH_STEP_ID;
    uint64_t key = (uint64_t)parent << 32 | name;
    if (ni && ni->count && ni->parent == parent) {
      ni->count++;
    } else if (ni && !ni->count) {
      ni->parent = parent;
      ni->count = 1;
      nest_new(s, key);
    } else {
      uint64_t *n = prof__u64map_at(&s->ne_map, key);
      if (!n) s->oom = 1;
      else if ((*n)++ == 0) nest_new(s, key);
    }
  }
}

static void graph_event(gr_st *s, const prof__event *ev) {
  if (ev->aux == PROF_GRAPH_EDGE) {
    uint64_t key = (uint64_t)ev->name << 32 | (uint32_t)ev->a;
    if (prof__u64map_get(&s->de_map, key)) return;
    if (prof__arr_grow((void **)&s->de, &s->de_cap, s->nde + 1, sizeof *s->de) || prof__u64map_add(&s->de_map, key, 1)) {
      s->oom = 1;
      return;
    }
    s->de[s->nde++] = key;
    return;
  }
  if (ev->aux != PROF_GRAPH_NODE && ev->aux != PROF_GRAPH_NODE_SIZE) return;
  uint64_t at = prof__u64map_get(&s->dn_map, ev->name);
  if (at == 0) {
    if (prof__arr_grow((void **)&s->dn, &s->dn_cap, s->ndn + 1, sizeof *s->dn) ||
        prof__u64map_add(&s->dn_map, ev->name, s->ndn + 1)) {
      s->oom = 1;
      return;
    }
    s->dn[s->ndn] = (decl_node){.name = ev->name};
    at = ++s->ndn;
  }
  decl_node *d = &s->dn[at - 1];
  if (ev->aux == PROF_GRAPH_NODE) {
    d->kind = (uint32_t)ev->a;
    d->parent = (uint32_t)ev->b;
  } else {
    d->params = ev->a;
    d->bytes = ev->b;
  }
}

static void hist_chunk(gr_st *s, const prof__rec *rec) {
  prof__cur c = {rec->data, rec->data + rec->len, 0};
  if (rec->len < 1 || prof__cur_u8(&c) != PROF_HIST_FORMAT) return;
  prof__hrec r;
  while (prof__rec_hist_decode(&c, &r) == 1)
    if (r.kind == PROF_HIST_ACTIVATION && r.sum.count > prof__u64map_get(&s->act, r.tag))
      map_set(s, &s->act, r.tag, r.sum.count);
}

static void graph_record(prof__an *an, void *st, const prof__rec *rec) {
  gr_st *s = st;
  if (rec->kind == PROF_REC_CHUNK) {
    if (rec->chunk_type == PROF_CHUNK_HIST) hist_chunk(s, rec);
    return;
  }
  if (rec->kind != PROF_REC_EVENT) return;
  const prof__event *ev = &rec->ev;
  switch (ev->type) {
  case PROF_EV_RANGE_BEGIN:
    range_begin(an, s, ev->name);
    break;
  case PROF_EV_SAMPLE: {
    int mode = prof__ev_sample_mode(ev);
    if (prof__u64map_add(&s->samples[mode], prof__ev_sample_range(ev), ev->b)) s->oom = 1;
    s->sample_total[mode] += ev->b;
    break;
  }
  case PROF_EV_GRAPH:
    graph_event(s, ev);
    break;
  default:
    break;
  }
}

/* ---- finish: building the graph ----------------------------------------- */

typedef struct range_agg {
  uint64_t count, total, self;
} range_agg;

typedef struct builder {
  prof__an *an;
  gr_st *s;
  prof__u64map by_name;   /* node name id -> index + 1 */
  prof__u64map by_text;   /* hash of a range name's text -> name id + 1 */
  prof__u64map agg_at;    /* range name id -> index into agg + 1 */
  range_agg *agg;
  size_t nagg, agg_cap;
  size_t node_cap, edge_cap;
} builder;

static long node_add(builder *b, uint32_t name) {
  prof__graph *g = &b->s->g;
  uint64_t at = prof__u64map_get(&b->by_name, name);
  if (at) return (long)at - 1;
  if (prof__arr_grow((void **)&g->nodes, &b->node_cap, g->nnodes + 1, sizeof *g->nodes) ||
      prof__u64map_add(&b->by_name, name, g->nnodes + 1)) {
    b->s->oom = 1;
    return -1;
  }
  g->nodes[g->nnodes] = (prof__gnode){.name = name, .parent = -1};
  return (long)g->nnodes++;
}

static void edge_add(builder *b, long from, long to, uint64_t count, int nests) {
  prof__graph *g = &b->s->g;
  if (from < 0 || to < 0) return;
  if (prof__arr_grow((void **)&g->edges, &b->edge_cap, g->nedges + 1, sizeof *g->edges)) {
    b->s->oom = 1;
    return;
  }
  g->edges[g->nedges++] = (prof__gedge){(size_t)from, (size_t)to, count, nests};
}

/* Range figures summed over categories, by name id. */
static void build_aggregates(builder *b) {
  prof__an *an = b->an;
  for (size_t i = 0; i < an->nranges; i++) {
    const prof__range_stat *r = &an->ranges[i];
    uint64_t at = prof__u64map_get(&b->agg_at, r->name);
    if (!at) {
      if (prof__arr_grow((void **)&b->agg, &b->agg_cap, b->nagg + 1, sizeof *b->agg) ||
          prof__u64map_add(&b->agg_at, r->name, b->nagg + 1) ||
          prof__u64map_add(&b->by_text, text_hash(prof__an_str(an, r->name)), (uint64_t)r->name + 1)) {
        b->s->oom = 1;
        return;
      }
      b->agg[b->nagg] = (range_agg){0};
      at = ++b->nagg;
    }
    range_agg *a = &b->agg[at - 1];
    a->count += r->count;
    a->total += r->total_ns;
    a->self += r->self_ns;
  }
}

static const range_agg *agg_of(const builder *b, uint32_t name) {
  uint64_t at = name ? prof__u64map_get(&b->agg_at, name) : 0;
  return at ? &b->agg[at - 1] : NULL;
}

/* The id of the range whose name is exactly `text`, or 0. */
static uint32_t range_named(const builder *b, const char *text) {
  uint64_t id1 = prof__u64map_get(&b->by_text, text_hash(text));
  if (!id1) return 0;
  uint32_t id = (uint32_t)(id1 - 1);
  return strcmp(prof__an_str(b->an, id), text) == 0 ? id : 0;
}

/* A declared node's ranges: forward "NAME" or "NAME (KIND)"; backward
 * "<forward>.backward", "NAME.backward" or "NAME.backward (KIND)". */
static void match_ranges(builder *b, prof__gnode *n) {
  const char *name = prof__an_str(b->an, n->name);
  const char *kind = n->kind ? prof__an_str(b->an, n->kind) : NULL;
  size_t len = strlen(name) + (kind ? strlen(kind) : 0) + 32;
  char *t = malloc(len);
  if (!t) {
    b->s->oom = 1;
    return;
  }
  n->fwd = range_named(b, name);
  if (!n->fwd && kind) {
    snprintf(t, len, "%s (%s)", name, kind);
    n->fwd = range_named(b, t);
  }
  if (n->fwd) {
    snprintf(t, len, "%s.backward", prof__an_str(b->an, n->fwd));
    n->bwd = range_named(b, t);
  }
  if (!n->bwd) {
    snprintf(t, len, "%s.backward", name);
    n->bwd = range_named(b, t);
  }
  if (!n->bwd && kind) {
    snprintf(t, len, "%s.backward (%s)", name, kind);
    n->bwd = range_named(b, t);
  }
  free(t);
}

static void build_declared(builder *b) {
  gr_st *s = b->s;
  for (size_t i = 0; i < s->ndn; i++) {
    long at = node_add(b, s->dn[i].name);
    if (at < 0) return;
    prof__gnode *n = &s->g.nodes[at];
    n->declared = 1;
    n->kind = s->dn[i].kind;
    n->params = s->dn[i].params;
    n->param_bytes = s->dn[i].bytes;
  }
  for (size_t i = 0; i < s->ndn; i++)
    if (s->dn[i].parent) {
      long p = node_add(b, s->dn[i].parent);
      long c = node_add(b, s->dn[i].name);
      if (p >= 0 && c >= 0 && p != c) s->g.nodes[c].parent = p;
    }
  for (size_t i = 0; i < s->nde; i++)
    edge_add(b, node_add(b, (uint32_t)(s->de[i] >> 32)), node_add(b, (uint32_t)s->de[i]), 1, 0);
  for (size_t i = 0; i < s->g.nnodes; i++) match_ranges(b, &s->g.nodes[i]);
}

static void build_ranges(builder *b) {
  gr_st *s = b->s;
  prof__an *an = b->an;
  if (an->nsteps) { /* the step node: every step, its untracked time as self */
    long at = node_add(b, PROF_GRAPH_STEP_ID);
    if (at < 0) return;
    prof__gnode *n = &s->g.nodes[at];
    n->calls = an->nsteps;
    n->fwd_total = prof__an_step_total_ns(an);
    for (size_t i = 0; i < an->nsteps; i++) n->fwd_self += an->steps[i].bd_ns[PROF_BD_UNTRACKED];
  }
  for (size_t i = 0; i < an->nranges; i++) {
    long at = node_add(b, an->ranges[i].name);
    if (at >= 0) s->g.nodes[at].fwd = an->ranges[i].name;
  }
  for (size_t i = 0; i < s->ndn; i++) { /* described ranges or extra nodes */
    long at = node_add(b, s->dn[i].name);
    if (at < 0) return;
    prof__gnode *n = &s->g.nodes[at];
    n->declared = 1;
    n->kind = s->dn[i].kind;
    n->params = s->dn[i].params;
    n->param_bytes = s->dn[i].bytes;
  }
  /* Nesting edges, and each node's parent: the enclosing range it began in
   * most often among those that begin shallower (so the tree has no cycle). */
  size_t nbest = s->g.nnodes;
  uint64_t *best = calloc(nbest ? nbest : 1, sizeof *best);
  if (!best) {
    s->oom = 1;
    return;
  }
  for (size_t i = 0; i < s->nne; i++) {
    uint32_t pn = (uint32_t)(s->ne[i] >> 32), cn = (uint32_t)s->ne[i];
    uint64_t count = nest_count(s, s->ne[i]);
    long p = node_add(b, pn), c = node_add(b, cn);
    if (p < 0 || c < 0) break;
    edge_add(b, p, c, count, 1);
    if (p == c || (size_t)c >= nbest) continue;
    uint64_t dp = pn == PROF_GRAPH_STEP_ID ? 0 : min_depth_of(s, pn);
    uint64_t dc = min_depth_of(s, cn);
    if ((dp || pn == PROF_GRAPH_STEP_ID) && dc && dp < dc && count > best[c]) {
      best[c] = count;
      s->g.nodes[c].parent = p;
    }
  }
  free(best);
  for (size_t i = 0; i < s->nde; i++)
    edge_add(b, node_add(b, (uint32_t)(s->de[i] >> 32)), node_add(b, (uint32_t)s->de[i]), 1, 0);
}

/* Depths and child counts; a parent chain that loops (declared by
 * mistake) is cut where it closes. */
static void build_tree(prof__graph *g) {
  for (size_t i = 0; i < g->nnodes; i++) {
    int d = 0;
    long p = g->nodes[i].parent;
    while (p >= 0 && (size_t)d <= g->nnodes) {
      p = g->nodes[p].parent;
      d++;
    }
    if (p >= 0) { /* a loop: cut it here */
      g->nodes[i].parent = -1;
      d = 0;
    }
    g->nodes[i].depth = d;
  }
  for (size_t i = 0; i < g->nnodes; i++)
    if (g->nodes[i].parent >= 0) g->nodes[g->nodes[i].parent].nchildren++;
}

static void build_figures(builder *b) {
  gr_st *s = b->s;
  prof__graph *g = &s->g;
  int mode = s->sample_total[0] ? 0 : 1;
  g->sample_total = s->sample_total[mode];
  for (size_t i = 0; i < g->nnodes; i++) {
    prof__gnode *n = &g->nodes[i];
    const range_agg *f = agg_of(b, n->fwd), *w = agg_of(b, n->bwd);
    if (f) n->calls = f->count, n->fwd_total = f->total, n->fwd_self = f->self;
    if (w) n->bwd_calls = w->count, n->bwd_total = w->total, n->bwd_self = w->self;
    if (n->fwd) n->samples += prof__u64map_get(&s->samples[mode], n->fwd);
    if (n->bwd) n->samples += prof__u64map_get(&s->samples[mode], n->bwd);
  }
  /* Activation histograms: tag "<node or forward range>.act". */
  prof__u64map by_text = {0};
  for (size_t i = 0; i < g->nnodes; i++) {
    prof__u64map_add(&by_text, text_hash(prof__gnode_name(b->an, &g->nodes[i])), i + 1);
    if (g->nodes[i].fwd && g->nodes[i].fwd != g->nodes[i].name)
      prof__u64map_add(&by_text, text_hash(prof__an_str(b->an, g->nodes[i].fwd)), i + 1);
  }
  for (size_t k = 0; k < s->act.cap; k++) {
    if (!s->act.k[k]) continue;
    const char *tag = prof__an_str(b->an, (uint32_t)(s->act.k[k] - 1));
    size_t len = strlen(tag);
    if (len < 5 || strcmp(tag + len - 4, ".act") != 0) continue;
    char *base = strndup(tag, len - 4);
    if (!base) break;
    uint64_t at = prof__u64map_get(&by_text, text_hash(base));
    if (at) {
      prof__gnode *n = &g->nodes[at - 1];
      const char *nm = prof__gnode_name(b->an, n), *fw = n->fwd ? prof__an_str(b->an, n->fwd) : "";
      if ((strcmp(nm, base) == 0 || strcmp(fw, base) == 0) && s->act.v[k] > n->act_elems)
        n->act_elems = s->act.v[k];
    }
    free(base);
  }
  prof__u64map_free(&by_text);
}

static void graph_finish(prof__an *an, void *st) {
  gr_st *s = st;
  prof__graph *g = &s->g;
  builder b = {.an = an, .s = s};
  g->steps = an->nsteps ? an->nsteps : 1;
  build_aggregates(&b);
  if (s->ndn) {
    const char *src = prof__an_meta(an, "graph.source");
    g->source = PROF_GRAPH_DECLARED;
    snprintf(g->source_name, sizeof g->source_name, "%s", src && *src ? src : "declared");
    build_declared(&b);
  } else if (an->nranges || s->nde) {
    g->source = PROF_GRAPH_RANGES;
    snprintf(g->source_name, sizeof g->source_name, "ranges");
    build_ranges(&b);
  }
  build_tree(g);
  build_figures(&b);
  prof__u64map_free(&b.by_name);
  prof__u64map_free(&b.by_text);
  prof__u64map_free(&b.agg_at);
  free(b.agg);
  if (s->oom) {
    /* A partial graph would mislead: report none. */
    g->nnodes = 0;
    g->nedges = 0;
  }
}

/* ---- accessors ----------------------------------------------------------- */

const prof__graph *prof__graph_of(const prof__an *an) {
  const gr_st *s = prof__an_section(an, "graph");
  return s && s->g.nnodes ? &s->g : NULL;
}

const char *prof__gnode_name(const prof__an *an, const prof__gnode *n) {
  return n->name == PROF_GRAPH_STEP_ID ? "step" : prof__an_str(an, n->name);
}

double prof__gnode_self_share(const prof__an *an, const prof__gnode *n) {
  double sh = prof__an_share(an, n->fwd_self + n->bwd_self);
  return sh > 1 ? 1 : sh;
}

double prof__gnode_share(const prof__an *an, const prof__gnode *n) {
  double sh = prof__an_share(an, n->fwd_total + n->bwd_total);
  return sh > 1 ? 1 : sh;
}

/* ---- text ---------------------------------------------------------------- */

static const prof__graph *graph_st(void *st) {
  gr_st *s = st;
  return s->g.nnodes ? &s->g : NULL;
}

/* Nodes ranked by self time (ties: total, then declaration order). */
typedef struct rank_key {
  uint64_t self, total;
  size_t i;
} rank_key;

static int cmp_rank(const void *a, const void *b) {
  const rank_key *x = a, *y = b;
  if (x->self != y->self) return x->self > y->self ? -1 : 1;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

size_t *prof__graph_ranked(const prof__graph *g) {
  rank_key *k = malloc((g->nnodes ? g->nnodes : 1) * sizeof *k);
  size_t *idx = malloc((g->nnodes ? g->nnodes : 1) * sizeof *idx);
  if (!k || !idx) {
    free(k);
    free(idx);
    return NULL;
  }
  for (size_t i = 0; i < g->nnodes; i++) {
    const prof__gnode *n = &g->nodes[i];
    k[i] = (rank_key){n->fwd_self + n->bwd_self, n->fwd_total + n->bwd_total, i};
  }
  qsort(k, g->nnodes, sizeof *k, cmp_rank);
  for (size_t i = 0; i < g->nnodes; i++) idx[i] = k[i].i;
  free(k);
  return idx;
}

static void text_links(prof__an *an, const prof__graph *g, FILE *out, size_t node, int inputs) {
  size_t shown = 0, total = 0;
  fputs(inputs ? "      in:  " : "      out: ", out);
  for (size_t e = 0; e < g->nedges; e++) {
    const prof__gedge *ed = &g->edges[e];
    if ((inputs ? ed->to : ed->from) != node) continue;
    char nm[PROF_TERM_NAME];
    if (total++ < GR_TEXT_LINKS)
      fprintf(out, "%s%s", shown++ ? ", " : "",
              prof__term_name(nm, sizeof nm, prof__gnode_name(an, &g->nodes[inputs ? ed->from : ed->to])));
  }
  if (total > shown) fprintf(out, " and %zu more", total - shown);
  fputs(total ? "\n" : "-\n", out);
}

/* A graph built from ranges only, all of them directly under the step: it
 * says nothing the ranges table does not (every node "in: step, out: -"). */
static int flat_ranges(const prof__graph *g) {
  if (g->source != PROF_GRAPH_RANGES) return 0;
  for (size_t i = 0; i < g->nedges; i++)
    if (g->nodes[g->edges[i].from].name != PROF_GRAPH_STEP_ID) return 0;
  return 1;
}

static void graph_text(prof__an *an, void *st, FILE *out) {
  const prof__graph *g = graph_st(st);
  if (!g || flat_ranges(g)) return; /* JSON, HTML and the DOT export keep it */
  size_t *idx = prof__graph_ranked(g);
  if (!idx) return;
  char nm[PROF_TERM_NAME], kd[PROF_TERM_NAME];
  fprintf(out, "\nModel graph (%s: %zu nodes, %zu edges; times per step; top nodes by self time)\n",
          prof__term_name(nm, sizeof nm, g->source_name), g->nnodes, g->nedges);
  for (size_t k = 0; k < g->nnodes && k < GR_TEXT_TOP; k++) {
    const prof__gnode *n = &g->nodes[idx[k]];
    char t[32], sf[32], fw[32], bw[32];
    fprintf(out, "  %-28s %-14s total %10s  self %10s  %5.1f%%", prof__term_name(nm, sizeof nm, prof__gnode_name(an, n)),
            prof__term_name(kd, sizeof kd, n->kind ? prof__an_str(an, n->kind) : ""),
            prof__an_fmt_ns(t, sizeof t, prof__gnode_total(g, n)),
            prof__an_fmt_ns(sf, sizeof sf, prof__gnode_self(g, n)), 100 * prof__gnode_share(an, n));
    if (n->bwd)
      fprintf(out, "  (fwd %s, bwd %s)", prof__an_fmt_ns(fw, sizeof fw, n->fwd_total / g->steps),
              prof__an_fmt_ns(bw, sizeof bw, n->bwd_total / g->steps));
    fputc('\n', out);
    text_links(an, g, out, idx[k], 1);
    text_links(an, g, out, idx[k], 0);
  }
  if (g->nnodes > GR_TEXT_TOP) fprintf(out, "  %zu more nodes are in the JSON report.\n", g->nnodes - GR_TEXT_TOP);
  free(idx);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_time(prof__json *j, const char *key, uint64_t total, uint64_t self, uint64_t steps) {
  prof__json_key(j, key);
  prof__json_obj_begin(j);
  prof__json_kuint(j, "total_ns", total / steps);
  prof__json_kuint(j, "self_ns", self / steps);
  prof__json_obj_end(j);
}

static void graph_json(prof__an *an, void *st, prof__json *j) {
  const prof__graph *g = graph_st(st);
  if (!g) return;
  prof__json_key(j, "graph");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "source", g->source_name);
  prof__json_kuint(j, "steps", an->nsteps);
  prof__json_key(j, "nodes");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < g->nnodes; i++) {
    const prof__gnode *n = &g->nodes[i];
    prof__json_obj_begin(j);
    prof__json_kuint(j, "id", i);
    prof__json_kstr(j, "name", prof__gnode_name(an, n));
    prof__json_key(j, "kind");
    if (n->kind) prof__json_str(j, prof__an_str(an, n->kind));
    else if (n->name == PROF_GRAPH_STEP_ID) prof__json_str(j, "step");
    else if (g->source == PROF_GRAPH_RANGES && n->fwd) prof__json_str(j, "range");
    else prof__json_null(j);
    prof__json_key(j, "parent");
    if (n->parent >= 0) prof__json_int(j, n->parent);
    else prof__json_null(j);
    prof__json_kint(j, "depth", n->depth);
    prof__json_key(j, "range");
    if (n->fwd) prof__json_str(j, prof__an_str(an, n->fwd));
    else prof__json_null(j);
    prof__json_key(j, "backward_range");
    if (n->bwd) prof__json_str(j, prof__an_str(an, n->bwd));
    else prof__json_null(j);
    prof__json_kuint(j, "calls", n->calls);
    prof__json_kuint(j, "total_ns", prof__gnode_total(g, n));
    prof__json_kuint(j, "self_ns", prof__gnode_self(g, n));
    json_time(j, "forward", n->fwd_total, n->fwd_self, g->steps);
    json_time(j, "backward", n->bwd_total, n->bwd_self, g->steps);
    prof__json_knum(j, "share", prof__gnode_share(an, n));
    prof__json_kuint(j, "params", n->params);
    prof__json_kuint(j, "param_bytes", n->param_bytes);
    prof__json_key(j, "activation_bytes");
    if (n->act_elems) prof__json_uint(j, prof__gnode_act_bytes(n));
    else prof__json_null(j);
    prof__json_key(j, "cpu_sample_share");
    if (g->sample_total) prof__json_num(j, (double)n->samples / (double)g->sample_total);
    else prof__json_null(j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_key(j, "edges");
  prof__json_arr_begin(j);
  for (size_t e = 0; e < g->nedges; e++) {
    prof__json_obj_begin(j);
    prof__json_kuint(j, "from", g->edges[e].from);
    prof__json_kuint(j, "to", g->edges[e].to);
    prof__json_kstr(j, "kind", g->edges[e].nests ? "nests" : "flow");
    prof__json_kuint(j, "count", g->edges[e].count);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void graph_destroy(prof__an *an, void *st) {
  (void)an;
  gr_st *s = st;
  free(s->g.nodes);
  free(s->g.edges);
  free(s->dn);
  free(s->de);
  free(s->ne);
  prof__u64map_free(&s->dn_map);
  prof__u64map_free(&s->de_map);
  prof__u64map_free(&s->ne_map);
  prof__u64map_free(&s->min_depth);
  free(s->ni);
  prof__u64map_free(&s->samples[0]);
  prof__u64map_free(&s->samples[1]);
  prof__u64map_free(&s->act);
}

const prof__section prof__sec_graph = {
    .name = "graph",
    .state_size = sizeof(gr_st),
    .record = graph_record,
    .finish = graph_finish,
    .text = graph_text,
    .json = graph_json,
    .html = prof__graph_html,
    .destroy = graph_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_RANGE_BEGIN) | PROF_EVMASK(PROF_EV_SAMPLE) | PROF_EVMASK(PROF_EV_GRAPH),
};
