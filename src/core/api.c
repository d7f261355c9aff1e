/* api.c — the annotation calls: ranges, marks, counters.
 *
 * Each call is a few instructions behind one flag: the calling thread's
 * state from initial-exec TLS, a pointer-cache lookup for the name, one
 * clock read and one ring store. Everything rare (first call on a thread,
 * first use of a name, misuse) is out of line.
 *
 * A call made by a signal handler while the same thread is inside a call
 * records nothing and is counted as a lost event (prof__call_enter); the
 * calls safe in handlers are listed in mlprof.h. Nesting deeper than
 * PROF_MAX_DEPTH is misuse (range_too_deep): those ranges are not recorded,
 * and nothing is counted as lost for them.
 *
 * Range pairs are whole in every trace: a recorded begin holds back ring
 * room for its end (ring.h), so its end is always recorded; a begin the
 * ring cannot hold together with the ends of all open ranges is dropped,
 * and its end is dropped with it. Both count as lost events.
 */
#include "session.h"
#include "trace/ev_graph.h"

uint64_t prof__reentry_lost_total;

static inline prof__thread *self_or_slow(void) {
  prof__thread *t = prof__self;
  if (PROF_LIKELY(t != NULL) && PROF_LIKELY(__atomic_load_n(&prof__enabled, __ATOMIC_RELAXED)))
    return t;
  return t ? (prof__misuse_count(PROF_MU_NOT_RUNNING), (prof__thread *)0) : prof__thread_get_slow();
}

static inline int clamp_cat(int cat) {
  return (unsigned)cat < PROF_CAT_COUNT ? cat : PROF_CAT_OTHER;
}

/* Record a range begin, with room held back for its end. Beyond the
 * tracked depth neither end is recorded: the push is counted as misuse
 * (range_too_deep), not as a lost event. */
static inline void push_id(prof__thread *t, uint32_t id, int cat) {
  uint32_t d = t->depth++;
  if (PROF_UNLIKELY(d >= PROF_MAX_DEPTH)) {
    prof__misuse_count(PROF_MU_TOO_DEEP);
    return;
  }
  int ok = prof__ring_put_begin(&t->ring, (uint8_t)clamp_cat(cat), id, prof__ticks());
  t->stack[d] = ok ? id : (id | PROF_DROPPED_BIT);
}

/* The name's id for the calling thread, or 0 (a NULL name is counted). */
static inline uint32_t name_of(prof__thread *t, const char *name) {
  if (PROF_UNLIKELY(!name)) {
    prof__misuse_count(PROF_MU_NULL_NAME);
    return 0;
  }
  return prof__name_id(t, name);
}

/* Is this an id prof_name_id() gave out? (A bad one is counted.) */
static inline int id_ok(uint32_t id) {
  if (PROF_LIKELY(id != 0 && id <= prof__intern_count())) return 1;
  prof__misuse_count(PROF_MU_BAD_ID);
  return 0;
}

/* The calling thread's state with its call guard taken, or NULL. */
static inline prof__thread *enter(void) {
  prof__thread *t = self_or_slow();
  return PROF_LIKELY(t != NULL) && PROF_LIKELY(prof__call_enter(t)) ? t : (prof__thread *)0;
}

PROF_API void prof_range_push_cat(const char *name, int category) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  uint32_t id = name_of(t, name);
  if (PROF_LIKELY(id != 0)) push_id(t, id, category);
  prof__call_leave(t);
}

PROF_API void prof_range_push(const char *name) { prof_range_push_cat(name, PROF_CAT_COMPUTE); }

PROF_API void prof_range_push_id(uint32_t name_id, int category) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  if (id_ok(name_id)) push_id(t, name_id, category);
  prof__call_leave(t);
}

static inline void pop(prof__thread *t) {
  if (PROF_UNLIKELY(t->depth == 0)) {
    prof__misuse_count(PROF_MU_POP_EMPTY);
    return;
  }
  uint32_t d = --t->depth;
  if (PROF_UNLIKELY(d >= PROF_MAX_DEPTH)) return; /* its push was counted as too deep */
  uint32_t id = t->stack[d];
  if (PROF_UNLIKELY(id & PROF_DROPPED_BIT)) {
    prof__ring_drop(&t->ring); /* its begin was lost: drop the end too */
    return;
  }
  prof__ring_put_end(&t->ring, id, prof__ticks()); /* into the room its begin held back */
}

PROF_API void prof_range_pop(void) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  pop(t);
  prof__call_leave(t);
}

static void mark_id(prof__thread *t, uint32_t id) {
  prof__ring_put(&t->ring, PROF_EV_MARK, 0, id, prof__ticks(), 0, 0);
}

static void counter_id(prof__thread *t, uint32_t id, double v) {
  prof__ring_put(&t->ring, PROF_EV_COUNTER, 0, id, prof__ticks(), prof__f64_bits(v), 0);
}

PROF_API void prof_mark(const char *name) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  uint32_t id = name_of(t, name);
  if (id) mark_id(t, id);
  prof__call_leave(t);
}

PROF_API void prof_counter(const char *name, double value) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  uint32_t id = name_of(t, name);
  if (id) counter_id(t, id, value);
  prof__call_leave(t);
}

PROF_API void prof_mark_id(uint32_t name_id) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  if (id_ok(name_id)) mark_id(t, name_id);
  prof__call_leave(t);
}

PROF_API void prof_counter_id(uint32_t name_id, double value) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  if (id_ok(name_id)) counter_id(t, name_id, value);
  prof__call_leave(t);
}

PROF_API uint32_t prof_name_id(const char *name) {
  if (!name) {
    prof__misuse_count(PROF_MU_NULL_NAME);
    return 0;
  }
  if (!__atomic_load_n(&prof__enabled, __ATOMIC_ACQUIRE)) return 0;
  return prof__intern(name);
}

/* ---- model graph (docs/graph.md) ---------------------------------------- */

static void graph_put(prof__thread *t, uint16_t aux, uint32_t name, uint64_t a, uint64_t b) {
  prof__ring_put_aux(&t->ring, PROF_EV_GRAPH, 0, aux, name, prof__ticks(), a, b);
}

/* An optional name (NULL: 0, not misuse). */
static inline uint32_t opt_name_of(prof__thread *t, const char *name) {
  return name ? prof__name_id(t, name) : 0;
}

/* An optional id: 0 is fine, anything else must be a known id. */
static inline int opt_id_ok(uint32_t id) { return id == 0 || id_ok(id); }

PROF_API void prof_graph_edge(const char *from, const char *to) {
  prof__thread *t = self_or_slow();
  if (PROF_UNLIKELY(!t)) return;
  uint32_t f = name_of(t, from);
  uint32_t d = f ? name_of(t, to) : 0;
  if (PROF_LIKELY(f && d)) graph_put(t, PROF_GRAPH_EDGE, f, d, 0);
}

PROF_API void prof_graph_edge_id(uint32_t from_id, uint32_t to_id) {
  prof__thread *t = self_or_slow();
  if (t && id_ok(from_id) && id_ok(to_id)) graph_put(t, PROF_GRAPH_EDGE, from_id, to_id, 0);
}

static void graph_node(prof__thread *t, uint32_t name, uint32_t kind, uint32_t parent, uint64_t params,
                       uint64_t bytes) {
  graph_put(t, PROF_GRAPH_NODE, name, kind, parent);
  if (params || bytes) graph_put(t, PROF_GRAPH_NODE_SIZE, name, params, bytes);
}

PROF_API void prof_graph_node(const char *name, const char *kind, const char *parent, uint64_t params,
                              uint64_t param_bytes) {
  prof__thread *t = self_or_slow();
  if (PROF_UNLIKELY(!t)) return;
  uint32_t n = name_of(t, name);
  if (n) graph_node(t, n, opt_name_of(t, kind), opt_name_of(t, parent), params, param_bytes);
}

PROF_API void prof_graph_node_id(uint32_t name_id, uint32_t kind_id, uint32_t parent_id, uint64_t params,
                                 uint64_t param_bytes) {
  prof__thread *t = self_or_slow();
  if (t && id_ok(name_id) && opt_id_ok(kind_id) && opt_id_ok(parent_id))
    graph_node(t, name_id, kind_id, parent_id, params, param_bytes);
}

void prof__emit(uint8_t type, uint8_t cat, uint32_t name, uint64_t a, uint64_t b) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return;
  prof__ring_put(&t->ring, type, cat, name, prof__ticks(), a, b);
  prof__call_leave(t);
}

int prof__emit_aux(uint8_t type, uint8_t cat, uint16_t aux, uint32_t name, uint64_t a, uint64_t b) {
  prof__thread *t = enter();
  if (PROF_UNLIKELY(!t)) return 0;
  int ok = prof__ring_put_aux(&t->ring, type, cat, aux, name, prof__ticks(), a, b);
  prof__call_leave(t);
  return ok;
}
