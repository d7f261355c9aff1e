/* sec_memory_out.c — the "memory" section's results: leaks grouped by
 * allocation stack, top sites, per-step live bytes and growth, the
 * memory_leak and memory_growth findings, and the text and JSON writers.
 *
 * Thresholds (docs/memory.md):
 *  - memory_leak: blocks still live when the trace ended cleanly total at
 *    least 64 KiB. Severity high from 64 MiB or a quarter of the heap
 *    peak, medium from 1 MiB, low below.
 *  - memory_growth: at least 5 steps (the first and flagged warm-up steps
 *    left out), live bytes at step end rose in at least 70 % of the
 *    step-to-step changes and by at least 1 MiB overall. High from 256 MiB.
 *
 * A trace that lost events (a full ring under MLPROF_RING_FULL=drop, or a
 * stuck writer) cannot tell a leak from a lost FREE, nor a step's live bytes
 * from a lost ALLOC: the leak list, both findings and the growth figure are
 * withheld, the event figures are marked as lower bounds, and every writer
 * says so next to the numbers (JSON: `lost_events` and `withheld`).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/memory/sec_memory.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/util/fmt.h"
#include "analyze/util/termsafe.h"


#define LEAK_MIN_BYTES (64.0 * 1024)
#define GROWTH_MIN_STEPS 5
#define GROWTH_MIN_SHARE 0.7
#define GROWTH_MIN_BYTES (1024.0 * 1024)
#define TOP_SITES 10
#define MAX_FRAMES 16

/* ---- helpers ----------------------------------------------------------- */

double prof__sec_mem_series_at(const mem_series *s, uint64_t ts) {
  if (!s->n || s->ts[0] > ts) return -1;
  size_t lo = 0, hi = s->n; /* last index with ts <= target */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (s->ts[mid] <= ts) lo = mid;
    else hi = mid;
  }
  return s->v[lo];
}

static double series_max(const mem_series *s) {
  double m = -1;
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] > m) m = s->v[i];
  return m;
}

/* Function names of a stack, innermost first, without profiler frames. */
static int stack_names(prof__an *an, uint32_t id, const char **out, int max) {
  if (!id) return 0;
  const uintptr_t *pcs;
  int d = prof__an_stack(an, id, &pcs), n = 0;
  for (int i = 0; i < d && n < max; i++) {
    const prof__frame *f = prof__an_frame(an, pcs[i]);
    if (!f || prof__an_frame_is_profiler(f)) continue;
    out[n++] = f->func ? f->func : "?";
  }
  return n;
}

static int use_events(const mem_state *s) { return prof__ev_mem_mode_has_events(s->mode) && s->nalloc_events > 0; }
static int exact_events(const mem_state *s) { return prof__ev_mem_mode_exact(s->mode) && s->nalloc_events > 0; }

/* ---- finish ------------------------------------------------------------- */

static int by_leak(const void *a, const void *b, void *arg) {
  const mem_state *sort_st = arg;
  double x = sort_st->sites[*(const uint32_t *)a].leak_bytes, y = sort_st->sites[*(const uint32_t *)b].leak_bytes;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The function names of a site's stack as one string ("" without). */
static char *signature(prof__an *an, const mem_site *x) {
  const char *names[MAX_FRAMES];
  int n = stack_names(an, x->stack, names, MAX_FRAMES);
  size_t len = 16;
  for (int i = 0; i < n; i++) len += strlen(names[i]) + 1;
  char *sig = malloc(len);
  if (!sig) return NULL;
  int off = snprintf(sig, len, "%u|", (unsigned)x->pool);
  for (int i = 0; i < n; i++) off += snprintf(sig + off, len - (size_t)off, "%s\n", names[i]);
  return sig;
}

typedef struct site_sig {
  char *sig;
  uint32_t idx;
} site_sig;

static int by_sig(const void *a, const void *b) {
  const site_sig *x = a, *y = b;
  int c = strcmp(x->sig, y->sig);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Sites are call stacks as people read them: sites whose frames symbolize
 * to the same functions (return addresses of the same call can differ,
 * e.g. an unrolled loop or two copies of an inlined caller) are one site
 * in the top sites and in the leaks; the first keeps the sums, the others
 * are emptied. */
static void merge_same_names(prof__an *an, mem_state *s) {
  site_sig *v = malloc((s->nsites + 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; v && i < s->nsites; i++)
    if (s->sites[i].stack && (v[n].sig = signature(an, &s->sites[i])) != NULL) v[n++].idx = (uint32_t)i;
  if (v) qsort(v, n, sizeof *v, by_sig);
  for (size_t a = 0, b; v && a < n; a = b) {
    mem_site *x = &s->sites[v[a].idx];
    for (b = a + 1; b < n && strcmp(v[a].sig, v[b].sig) == 0; b++) {
      mem_site *y = &s->sites[v[b].idx];
      x->calls += y->calls;
      x->bytes += y->bytes;
      x->live += y->live;
      x->at_peak += y->at_peak;
      x->temp_calls += y->temp_calls;
      x->temp_bytes += y->temp_bytes;
      x->leak_bytes += y->leak_bytes;
      x->leak_count += y->leak_count;
      if (y->kept_bytes > x->kept_bytes) x->kept_why = y->kept_why;
      x->kept_bytes += y->kept_bytes;
      x->kept_count += y->kept_count;
      y->calls = y->bytes = y->live = y->at_peak = y->temp_calls = y->temp_bytes = 0;
      y->leak_bytes = y->leak_count = y->kept_bytes = y->kept_count = 0;
    }
  }
  for (size_t a = 0; v && a < n; a++) free(v[a].sig);
  free(v);
}

/* Why the blocks of site i still live at exit are retained (MEM_KEPT_*),
 * from its stack, cached in why[i] (+1; 0: not looked at). */
static int site_kept(prof__an *an, const mem_state *s, unsigned char *why, uint32_t i) {
  if (!why[i]) {
    mem_attr a;
    prof__sec_mem_attr(an, s->sites[i].stack, &a);
    why[i] = (unsigned char)(a.kept + 1);
  }
  return why[i] - 1;
}

/* Blocks still live at the end of a clean trace: retained on purpose (made
 * by a library's or module's initialisation, before the first step, or by
 * the interpreter), else leaked. */
static void live_at_exit(prof__an *an, mem_state *s) {
  unsigned char *why = calloc(s->nsites + 1, 1);
  if (!why) return;
  for (size_t i = 0; i < s->live.cap; i++) {
    const mem_blk *b = &s->live.s[i];
    if (!b->addr || b->site >= s->nsites) continue;
    mem_site *x = &s->sites[b->site];
    int k = site_kept(an, s, why, b->site);
    if (!k && b->early && an->nsteps > 0) k = MEM_KEPT_STARTUP;
    if (k) {
      x->kept_why = x->kept_why ? x->kept_why : k;
      x->kept_bytes += (double)b->size * b->w;
      x->kept_count += b->w;
    } else {
      x->leak_bytes += (double)b->size * b->w;
      x->leak_count += b->w;
    }
  }
  free(why);
}

static int by_kept(const void *a, const void *b, void *arg) {
  const mem_state *sort_st = arg;
  double x = sort_st->sites[*(const uint32_t *)a].kept_bytes, y = sort_st->sites[*(const uint32_t *)b].kept_bytes;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void leaks_collect(prof__an *an, mem_state *s) {
  if (an->has_footer) live_at_exit(an, s); /* a cut-short run says nothing about leaks */
  merge_same_names(an, s);
  if (!an->has_footer) return;
  s->leak_order = malloc((s->nsites + 1) * sizeof *s->leak_order);
  s->kept_order = malloc((s->nsites + 1) * sizeof *s->kept_order);
  if (!s->leak_order || !s->kept_order) return;
  for (size_t i = 0; i < s->nsites; i++) {
    if (s->sites[i].kept_bytes > 0) {
      s->kept_order[s->nkept++] = (uint32_t)i;
      s->kept_bytes += s->sites[i].kept_bytes;
      s->kept_count += s->sites[i].kept_count;
    }
    if (s->sites[i].leak_bytes <= 0) continue;
    s->leak_order[s->nleaks++] = (uint32_t)i;
    s->leaked_bytes += s->sites[i].leak_bytes;
    s->leaked_count += s->sites[i].leak_count;
  }
  qsort_r(s->leak_order, s->nleaks, sizeof *s->leak_order, by_leak, (void *)s);
  qsort_r(s->kept_order, s->nkept, sizeof *s->kept_order, by_kept, (void *)s);
}

/* ---- memory steps by number -------------------------------------------- */

static int by_number_then_index(const void *a, const void *b, void *arg) {
  const mem_state *order_st = arg;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  uint64_t nx = order_st->steps[x].number, ny = order_st->steps[y].number;
  if (nx != ny) return nx < ny ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* Index the memory steps by number once, so that the per-step figures of
 * the report take a bisection each instead of a scan of every step. */
static void index_steps(mem_state *s) {
  size_t n = s->nsteps, *ord = malloc((n ? n : 1) * sizeof *ord);
  s->by_number = malloc((n ? n : 1) * sizeof *s->by_number);
  if (!ord || !s->by_number) {
    free(ord);
    free(s->by_number);
    s->by_number = NULL;
    s->oom = 1;
    return;
  }
  for (size_t k = 0; k < n; k++) ord[k] = k;
  qsort_r(ord, n, sizeof *ord, by_number_then_index, s);
  size_t g = 0;
  for (size_t i = 0; i < n; i++) {
    const mem_step *st = &s->steps[ord[i]];
    if (!g || s->by_number[g - 1].number != st->number) s->by_number[g++] = (mem_stepno){st->number, SIZE_MAX, 0};
    mem_stepno *x = &s->by_number[g - 1];
    if (st->ended && x->first_ended == SIZE_MAX) x->first_ended = ord[i];
    x->last = ord[i];
  }
  s->nby_number = g;
  free(ord);
}

static const mem_stepno *steps_numbered(const mem_state *s, uint64_t number) {
  size_t lo = 0, hi = s->nby_number;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->by_number[mid].number < number) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->nby_number && s->by_number[lo].number == number ? &s->by_number[lo] : NULL;
}

static double step_live_end(const mem_state *s, const prof__step *st) {
  if (exact_events(s)) {
    const mem_stepno *x = steps_numbered(s, st->number);
    return x && x->first_ended != SIZE_MAX ? s->steps[x->first_ended].live_end : -1;
  }
  return prof__sec_mem_series_at(&s->series[MS_LIVE], st->end_ns);
}

static void leak_finding(prof__an *an, mem_state *s) {
  if (s->leaked_bytes < LEAK_MIN_BYTES) return;
  double peak = exact_events(s) ? s->heap_peak : series_max(&s->series[MS_LIVE]);
  const char *sev = s->leaked_bytes >= 64.0 * 1048576 || (peak > 0 && s->leaked_bytes >= peak / 4) ? "high"
                    : s->leaked_bytes >= 1048576                                                     ? "medium"
                                                                                                      : "low";
  char b[32], title[256], measured[768];
  const char *fn[1];
  int nf = s->nleaks ? stack_names(an, s->sites[s->leak_order[0]].stack, fn, 1) : 0;
  snprintf(title, sizeof title, "%s still allocated at exit, from %zu call site%s", prof__fmt_bytes(b, sizeof b, s->leaked_bytes),
           s->nleaks, s->nleaks == 1 ? "" : "s");
  char top[32];
  int counts = s->mode == PROF_MEM_COUNTS; /* only blocks reported by hand (pools) are events in counts mode */
  char live[32], note[200] = "";
  if (counts) {
    snprintf(title, sizeof title,
             "%s of recorded blocks still allocated at exit, from %zu call site%s; heap blocks cannot be attributed "
             "in counts mode", prof__fmt_bytes(b, sizeof b, s->leaked_bytes), s->nleaks, s->nleaks == 1 ? "" : "s");
    double end = prof__sec_mem_series_at(&s->series[MS_LIVE], an->last_ns);
    snprintf(note, sizeof note,
             "; in counts mode heap blocks are counted, not recorded, so heap leaks are not in this figure (live "
             "heap at the end: %s)", end >= 0 ? prof__fmt_bytes(live, sizeof live, end) : "not sampled");
  }
  snprintf(measured, sizeof measured, "%.0f blocks never freed%s; largest site %s%s%s%s", s->leaked_count,
           s->mode == PROF_MEM_SAMPLED ? " (estimated from samples)" : "",
           prof__fmt_bytes(top, sizeof top, s->nleaks ? s->sites[s->leak_order[0]].leak_bytes : 0), nf ? " in " : "",
           nf ? fn[0] : "", note);
  prof__an_finding(an, "memory_leak", sev, s->leaked_bytes, title, measured,
                   counts ? "Free these blocks when they are no longer needed (see memory.leaks for the call "
                            "stacks). To find heap leaks, record with MLPROF_MEM=full (exact) or sampled (the "
                            "default): counts mode keeps no heap blocks."
                          : "Free these blocks when they are no longer needed (see memory.leaks for the call stacks); "
                            "memory kept on purpose until exit can be ignored.");
  prof__an_finding_kstr(an, "mode", s->mode >= PROF_MEM_COUNTS ? prof__ev_mem_mode_name(s->mode) : "unknown");
}

static void growth_finding(prof__an *an, mem_state *s) {
  double first = -1, last = -1, prev = -1;
  int n = 0, ups = 0;
  for (size_t i = 1; i < an->nsteps; i++) {
    if (an->steps[i].warmup_outlier) continue;
    double v = step_live_end(s, &an->steps[i]);
    if (v < 0) continue;
    if (n == 0) first = v;
    else ups += v > prev;
    prev = last = v;
    n++;
  }
  if (n < GROWTH_MIN_STEPS) return;
  s->growth_steps = n;
  s->growth_per_step = (last - first) / (n - 1);
  if ((double)ups < GROWTH_MIN_SHARE * (n - 1) || last - first < GROWTH_MIN_BYTES) return;
  char a[32], b[32], c[32], title[160], measured[512];
  snprintf(title, sizeof title, "Live memory grows every step (+%s per step)", prof__fmt_bytes(c, sizeof c, s->growth_per_step));
  snprintf(measured, sizeof measured, "live heap at step end rose from %s to %s over %d steps; %d of %d changes were increases",
           prof__fmt_bytes(a, sizeof a, first), prof__fmt_bytes(b, sizeof b, last), n, ups, n - 1);
  prof__an_finding(an, "memory_growth", last - first >= 256.0 * 1048576 ? "high" : "medium", s->growth_per_step, title,
                   measured,
                   "Something keeps per-step objects alive (a list of losses or tensors, a cache without a bound, "
                   "a growing history); check the top sites by peak contribution and drop references after each step.");
}

/* Full mode: the heap that was live when the session began and is not in
 * the events (blocks made before it, but the large ones recorded at its
 * start) is added to the peak and the live bytes of every step end. */
static void add_start_heap(mem_state *s) {
  double base = s->start_live - s->start_listed;
  if (!s->start_known || !(base > 0)) return;
  s->heap_peak += base;
  s->heap_live += base;
  s->snap_value += base;
  for (size_t i = 0; i < s->nsteps; i++)
    if (s->steps[i].ended) s->steps[i].live_end += base;
}

void prof__sec_mem_finish(prof__an *an, void *stp) {
  mem_state *s = stp;
  if (!s->init || !s->any) return;
  if (exact_events(s)) {
    index_steps(s);
    add_start_heap(s);
  }
  if (s->peak_pending) {
    for (size_t i = 0; i < s->nsites; i++) s->sites[i].at_peak = s->sites[i].pool ? 0 : s->sites[i].live;
    s->snap_value = s->heap_live;
  }
  s->lost = an->lost_events;
  if (s->lost) { /* a lost FREE looks like a leak, a lost ALLOC like a shrink */
    s->withheld = MEM_WITHHELD_LEAKS | MEM_WITHHELD_GROWTH;
    return;
  }
  leaks_collect(an, s);
  leak_finding(an, s);
  growth_finding(an, s);
}

const char *prof__sec_mem_loss_note(const mem_state *s, char *buf, size_t n) {
  if (!s->lost) {
    if (n) buf[0] = 0;
    return buf;
  }
  snprintf(buf, n,
           "%llu events were lost while recording: the figures from events (allocations, bytes, heap peak, sites) are "
           "incomplete; %s withheld (a lost free "
           "looks like a leak, a lost allocation like a shrink). Record with MLPROF_RING_FULL=wait or a larger "
           "MLPROF_RING_KB to get them.",
           (unsigned long long)s->lost,
           (s->withheld & MEM_WITHHELD_LEAKS) && (s->withheld & MEM_WITHHELD_GROWTH) ? "the leak list and the growth finding"
           : (s->withheld & MEM_WITHHELD_LEAKS)                                     ? "the leak list"
                                                                                     : "the growth finding");
  return buf;
}

static void json_withheld(const mem_state *s, prof__json *j) {
  prof__json_kuint(j, "lost_events", s->lost);
  prof__json_key(j, "withheld");
  prof__json_arr_begin(j);
  if (s->withheld & MEM_WITHHELD_LEAKS) {
    prof__json_str(j, "leaks");
    prof__json_str(j, "memory_leak");
  }
  if (s->withheld & MEM_WITHHELD_GROWTH) {
    prof__json_str(j, "growth_bytes_per_step");
    prof__json_str(j, "memory_growth");
  }
  prof__json_arr_end(j);
}

/* ---- ranking -------------------------------------------------------------- */

static double rank_key(const mem_site *x, int how) {
  switch (how) {
  case MEM_RANK_BYTES: return x->bytes;
  case MEM_RANK_CALLS: return x->calls;
  case MEM_RANK_PEAK: return x->at_peak;
  default: return x->temp_bytes;
  }
}

typedef struct rank_by {
  const mem_state *s;
  int how;
} rank_by;

static int by_rank(const void *a, const void *b, void *arg) {
  const rank_by *r = arg;
  double x = rank_key(&r->s->sites[*(const uint32_t *)a], r->how);
  double y = rank_key(&r->s->sites[*(const uint32_t *)b], r->how);
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Top sites by `how` into out[]; returns the count. */
static size_t top_sites(const mem_state *s, int how, uint32_t *out, size_t max) {
  uint32_t *all = malloc((s->nsites + 1) * sizeof *all);
  if (!all) return 0;
  size_t n = 0;
  for (size_t i = 0; i < s->nsites; i++)
    if (rank_key(&s->sites[i], how) > 0) all[n++] = (uint32_t)i;
  rank_by r = {s, how};
  qsort_r(all, n, sizeof *all, by_rank, &r);
  if (n > max) n = max;
  memcpy(out, all, n * sizeof *out);
  free(all);
  return n;
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_stack(prof__an *an, prof__json *j, uint32_t stack) {
  prof__json_kuint(j, "stack_id", stack);
  const char *names[MAX_FRAMES];
  int n = stack_names(an, stack, names, MAX_FRAMES);
  prof__json_key(j, "stack");
  prof__json_arr_begin(j);
  for (int i = 0; i < n; i++) prof__json_str(j, names[i]);
  prof__json_arr_end(j);
  prof__sec_mem_attr_json(an, j, stack);
}

static void json_sites(prof__an *an, const mem_state *s, prof__json *j, const char *key, int how) {
  uint32_t idx[TOP_SITES];
  size_t n = top_sites(s, how, idx, TOP_SITES);
  prof__json_key(j, key);
  prof__json_arr_begin(j);
  for (size_t i = 0; i < n; i++) {
    const mem_site *x = &s->sites[idx[i]];
    prof__json_obj_begin(j);
    double bytes = how == MEM_RANK_PEAK ? x->at_peak : how == MEM_RANK_TEMP ? x->temp_bytes : x->bytes;
    prof__json_knum(j, "bytes", round(bytes));
    prof__json_knum(j, "calls", round(how == MEM_RANK_TEMP ? x->temp_calls : x->calls));
    prof__json_kstr(j, "pool", prof__sec_mem_pool_name(s, x->pool));
    json_stack(an, j, x->stack);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_leaks(prof__an *an, const mem_state *s, prof__json *j) {
  if (s->withheld & MEM_WITHHELD_LEAKS) { /* unknown, not zero */
    prof__json_key(j, "leaked_bytes");
    prof__json_null(j);
    prof__json_key(j, "leaked_blocks");
    prof__json_null(j);
  } else {
    prof__json_knum(j, "leaked_bytes", round(s->leaked_bytes));
    prof__json_knum(j, "leaked_blocks", round(s->leaked_count));
  }
  prof__json_key(j, "leaks");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nleaks && i < 50; i++) {
    const mem_site *x = &s->sites[s->leak_order[i]];
    prof__json_obj_begin(j);
    prof__json_knum(j, "bytes", round(x->leak_bytes));
    prof__json_knum(j, "count", round(x->leak_count));
    prof__json_kstr(j, "pool", prof__sec_mem_pool_name(s, x->pool));
    json_stack(an, j, x->stack);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_steps(prof__an *an, const mem_state *s, prof__json *j) {
  prof__json_key(j, "steps");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < an->nsteps; i++) {
    const prof__step *st = &an->steps[i];
    double allocs = -1, bytes = -1, live = step_live_end(s, st);
    if (exact_events(s)) {
      const mem_stepno *x = steps_numbered(s, st->number);
      if (x) allocs = s->steps[x->last].allocs, bytes = s->steps[x->last].bytes;
    } else {
      double c0 = prof__sec_mem_series_at(&s->series[MS_CALLS], st->begin_ns);
      double c1 = prof__sec_mem_series_at(&s->series[MS_CALLS], st->end_ns);
      double b0 = prof__sec_mem_series_at(&s->series[MS_BYTES], st->begin_ns);
      double b1 = prof__sec_mem_series_at(&s->series[MS_BYTES], st->end_ns);
      if (c0 >= 0 && c1 >= 0) allocs = c1 - c0, bytes = b1 - b0;
    }
    prof__json_obj_begin(j);
    prof__json_kuint(j, "step", st->number);
    if (allocs >= 0) prof__json_knum(j, "allocs", round(allocs));
    else prof__json_key(j, "allocs"), prof__json_null(j);
    if (bytes >= 0) prof__json_knum(j, "bytes", round(bytes));
    else prof__json_key(j, "bytes"), prof__json_null(j);
    if (live >= 0) prof__json_knum(j, "live_end_bytes", round(live));
    else prof__json_key(j, "live_end_bytes"), prof__json_null(j);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_pools_ranges(prof__an *an, const mem_state *s, prof__json *j) {
  prof__json_key(j, "pools");
  prof__json_arr_begin(j);
  for (int i = 1; i < 256; i++) {
    const mem_pool *p = &s->pools[i];
    if (!p->seen && !p->allocs) continue;
    prof__json_obj_begin(j);
    prof__json_kint(j, "id", i);
    prof__json_kstr(j, "name", p->name[0] ? p->name : "?");
    prof__json_knum(j, "peak_live_bytes", round(p->peak));
    prof__json_knum(j, "live_end_bytes", round(p->live));
    prof__json_knum(j, "allocs", round(p->allocs));
    prof__json_knum(j, "bytes", round(p->bytes));
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_key(j, "ranges");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nranges; i++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "name", prof__an_str(an, s->ranges[i].name));
    prof__json_knum(j, "allocs", round(s->ranges[i].allocs));
    prof__json_knum(j, "bytes", round(s->ranges[i].bytes));
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

/* JSON "run" of a bounded trace (text_run_peaks). */
static void json_run_peaks(prof__an *an, prof__json *j) {
  prof__step_res r;
  if (!an->summary_only_steps) return;
  prof__an_step_res(an, &r);
  if (!r.rss_steps && !r.live_steps) return;
  prof__json_key(j, "run");
  prof__json_obj_begin(j);
  prof__json_kuint(j, "steps", prof__an_nall(an));
  prof__json_kuint(j, "rss_steps", r.rss_steps);
  if (r.rss_steps) {
    prof__json_kuint(j, "rss_peak_bytes", r.rss_peak_bytes);
    prof__json_kuint(j, "rss_peak_step", r.rss_peak_step);
  }
  prof__json_kuint(j, "live_steps", r.live_steps);
  if (r.live_steps) {
    prof__json_kuint(j, "live_peak_bytes", r.live_peak_bytes);
    prof__json_kuint(j, "live_peak_step", r.live_peak_step);
  }
  prof__json_obj_end(j);
}

static void json_peak(prof__an *an, const mem_state *s, prof__json *j) {
  double peak = s->heap_peak;
  uint64_t ts = s->heap_peak_ts;
  if (!exact_events(s)) { /* counters: usable bytes, sampled every flush period */
    const mem_series *l = &s->series[MS_LIVE];
    peak = -1;
    for (size_t i = 0; i < l->n; i++)
      if (l->v[i] > peak) peak = l->v[i], ts = l->ts[i];
  }
  if (peak >= 0) prof__json_knum(j, "peak_live_bytes", round(peak));
  else prof__json_key(j, "peak_live_bytes"), prof__json_null(j);
  prof__json_kuint(j, "peak_ns", peak >= 0 && ts >= an->first_ns ? ts - an->first_ns : 0);
  long step = peak >= 0 ? prof__an_step_at(an, ts) : -1;
  prof__json_key(j, "peak_step");
  if (step >= 0) prof__json_uint(j, an->steps[step].number);
  else prof__json_null(j);
  const char *range = peak >= 0 ? prof__sec_mem_peak_range(an, s) : NULL;
  prof__json_key(j, "peak_range");
  if (range) prof__json_str(j, range);
  else prof__json_null(j);
  double rss = prof__an_rss_peak(an, series_max(&s->series[MS_RSS]));
  prof__json_key(j, "rss_peak_bytes");
  if (rss >= 0) prof__json_num(j, rss);
  else prof__json_null(j);
  json_run_peaks(an, j);
}

/* A bounded trace: the figures above cover the detail window; the steps'
 * summaries give the peaks of every step of the run ("run", steps.memory). */
static void text_run_peaks(prof__an *an, FILE *out) {
  prof__step_res r;
  if (!an->summary_only_steps) return;
  prof__an_step_res(an, &r);
  if (!r.rss_steps && !r.live_steps) return;
  char a[32], b[32];
  fputs("  whole run (bounded trace; the figures above cover the detail window):", out);
  if (r.live_steps)
    fprintf(out, " heap peak of a step %s (step %llu)", prof__fmt_bytes(a, sizeof a, (double)r.live_peak_bytes),
            (unsigned long long)r.live_peak_step);
  if (r.rss_steps)
    fprintf(out, "%s RSS peak of a step %s (step %llu)", r.live_steps ? "," : "",
            prof__fmt_bytes(b, sizeof b, (double)r.rss_peak_bytes), (unsigned long long)r.rss_peak_step);
  fputc('\n', out);
}

/* Where the heap peak happened: time, step and innermost open range. */
static void text_peak_place(prof__an *an, const mem_state *s, FILE *out) {
  uint64_t ts = s->heap_peak_ts;
  double peak = s->heap_peak;
  if (!exact_events(s)) {
    const mem_series *l = &s->series[MS_LIVE];
    peak = -1;
    for (size_t i = 0; i < l->n; i++)
      if (l->v[i] > peak) peak = l->v[i], ts = l->ts[i];
  }
  if (peak <= 0) return;
  long step = prof__an_step_at(an, ts);
  const char *range = prof__sec_mem_peak_range(an, s);
  fprintf(out, "  the heap peak was at %.3f s", ts > an->first_ns ? (double)(ts - an->first_ns) / 1e9 : 0.0);
  if (step >= 0) fprintf(out, ", in step %llu", (unsigned long long)an->steps[step].number);
  else fputs(", outside steps", out);
  char nm[PROF_TERM_NAME];
  if (range) fprintf(out, ", inside range %s", prof__term_name(nm, sizeof nm, range));
  fputs(exact_events(s) ? "\n" : " (from the live-bytes counter, read each writer period, step end and large allocation)\n", out);
}

void prof__sec_mem_json(prof__an *an, void *stp, prof__json *j) {
  mem_state *s = stp;
  if (!s->init || !s->any) return;
  prof__json_key(j, "memory");
  prof__json_obj_begin(j);
  prof__json_kstr(j, "mode", s->mode >= 0 ? prof__ev_mem_mode_name(s->mode) : "unknown");
  prof__json_knum(j, "sample_bytes", s->sample_bytes);
  prof__json_kstr(j, "source", exact_events(s) ? "events" : "counters");
  json_peak(an, s, j);
  if (s->start_known) {
    prof__json_knum(j, "start_live_bytes", round(s->start_live));
    prof__json_knum(j, "start_live_blocks", round(s->start_blocks));
    prof__json_knum(j, "start_recorded_bytes", round(s->start_listed));
    prof__json_knum(j, "start_unrecorded_large_blocks", round(s->start_unlisted));
  }
  prof__json_knum(j, "allocs", round(use_events(s) ? s->allocs : fmax(0, series_max(&s->series[MS_CALLS]))));
  prof__json_knum(j, "bytes_allocated", round(use_events(s) ? s->bytes : fmax(0, series_max(&s->series[MS_BYTES]))));
  prof__json_kbool(j, "estimated", s->mode == PROF_MEM_SAMPLED);
  json_withheld(s, j);
  json_leaks(an, s, j);
  prof__json_key(j, "sites");
  prof__json_obj_begin(j);
  json_sites(an, s, j, "by_bytes", MEM_RANK_BYTES);
  json_sites(an, s, j, "by_calls", MEM_RANK_CALLS);
  json_sites(an, s, j, "by_peak", MEM_RANK_PEAK);
  json_sites(an, s, j, "temporary", MEM_RANK_TEMP);
  prof__json_obj_end(j);
  json_steps(an, s, j);
  if (s->growth_steps) prof__json_knum(j, "growth_bytes_per_step", round(s->growth_per_step));
  json_pools_ranges(an, s, j);
  prof__sec_mem_attr_section_json(an, s, j);
  prof__json_kuint(j, "unmatched_frees", s->unmatched_frees);
  prof__json_obj_end(j);
}

/* ---- text ------------------------------------------------------------------ */

/* The innermost frames of a stack as one line ("a < b < c < d"). */
static void stack_text(prof__an *an, uint32_t stack, char *buf, size_t len) {
  prof__sec_mem_site_line(an, stack, buf, len);
}

static void text_stack(prof__an *an, FILE *out, uint32_t stack) {
  char buf[1024], shown[1024];
  stack_text(an, stack, buf, sizeof buf);
  fprintf(out, "%s\n", prof__term_name(shown, sizeof shown, buf));
}

typedef struct site_line {
  char text[1024];
  double bytes, calls;
} site_line;

static int by_line_value(const void *a, const void *b, void *arg) {
  const site_line *x = a, *y = b;
  int rank_how = *(const int *)arg;
  double u = rank_how == MEM_RANK_CALLS ? x->calls : x->bytes, v = rank_how == MEM_RANK_CALLS ? y->calls : y->bytes;
  return u < v ? 1 : u > v ? -1 : strcmp(x->text, y->text);
}

/* The top sites as the text shows them: sites whose shown frames read the
 * same (they differ further out) are one line with their sums. */
static void text_sites(prof__an *an, const mem_state *s, FILE *out, const char *title, int how) {
  enum { CANDIDATES = 64, SHOWN = 5 };
  uint32_t idx[CANDIDATES];
  size_t n = top_sites(s, how, idx, CANDIDATES), m = 0;
  if (!n) return;
  site_line *v = calloc(n, sizeof *v);
  if (!v) return;
  for (size_t i = 0; i < n; i++) {
    const mem_site *x = &s->sites[idx[i]];
    site_line l;
    stack_text(an, x->stack, l.text, sizeof l.text);
    l.bytes = how == MEM_RANK_PEAK ? x->at_peak : how == MEM_RANK_TEMP ? x->temp_bytes : x->bytes;
    l.calls = how == MEM_RANK_TEMP ? x->temp_calls : x->calls;
    size_t k = 0;
    while (k < m && strcmp(v[k].text, l.text) != 0) k++;
    if (k == m) v[m++] = l;
    else {
      v[k].bytes += l.bytes;
      v[k].calls += l.calls;
    }
  }
  qsort_r(v, m, sizeof *v, by_line_value, &how);
  fprintf(out, "  %s:\n", title);
  for (size_t i = 0; i < m && i < SHOWN; i++) {
    char b[32], shown[sizeof v[i].text];
    fprintf(out, "    %10s %10.0f calls  %s\n", prof__fmt_bytes(b, sizeof b, v[i].bytes), v[i].calls,
            prof__term_name(shown, sizeof shown, v[i].text));
  }
  free(v);
}

/* The heap when recording began (made before prof_init or the session's
 * start), and what of it has a call site. */
static void text_start(const mem_state *s, FILE *out) {
  if (!s->start_known || s->start_live <= 0) return;
  char a[32], b[32];
  fprintf(out, "  live when recording began: %s in %.0f blocks (allocated before the session started; counted in the peak)",
          prof__fmt_bytes(a, sizeof a, s->start_live), s->start_blocks);
  if (s->start_listed > 0) fprintf(out, ", of which large blocks with their call sites: %s", prof__fmt_bytes(b, sizeof b, s->start_listed));
  if (s->start_unlisted > 0) fprintf(out, "; %.0f large blocks of that time have no call site", s->start_unlisted);
  fputc('\n', out);
}

void prof__sec_mem_text(prof__an *an, void *stp, FILE *out) {
  mem_state *s = stp;
  if (!s->init || !s->any) return;
  char a[32], b[32];
  fprintf(out, "\nMemory (mode %s%s)\n", s->mode >= 0 ? prof__ev_mem_mode_name(s->mode) : "unknown",
          s->mode == PROF_MEM_SAMPLED ? ", estimates from byte sampling" : "");
  double peak = exact_events(s) ? s->heap_peak : series_max(&s->series[MS_LIVE]);
  double rss = prof__an_rss_peak(an, series_max(&s->series[MS_RSS]));
  if (peak >= 0) fprintf(out, "  heap peak %s", prof__fmt_bytes(a, sizeof a, peak));
  if (rss >= 0) fprintf(out, "%sRSS peak %s", peak >= 0 ? ", " : "  ", prof__fmt_bytes(b, sizeof b, rss));
  fputc('\n', out);
  text_peak_place(an, s, out);
  text_run_peaks(an, out);
  text_start(s, out);
  if (use_events(s))
    fprintf(out, "  %s%.0f allocations, %s allocated\n", s->lost ? "at least " : "", s->allocs,
            prof__fmt_bytes(a, sizeof a, s->bytes));
  if (s->lost) {
    char note[512];
    fprintf(out, "  LOSSY: %s\n", prof__sec_mem_loss_note(s, note, sizeof note));
  }
  if (s->nleaks) {
    fprintf(out, "  still allocated at exit (not retained on purpose, see below): %s in %.0f blocks\n", prof__fmt_bytes(a, sizeof a, s->leaked_bytes), s->leaked_count);
    for (size_t i = 0; i < s->nleaks && i < 5; i++) {
      const mem_site *x = &s->sites[s->leak_order[i]];
      fprintf(out, "    %10s %6.0f blocks  ", prof__fmt_bytes(a, sizeof a, x->leak_bytes), x->leak_count);
      text_stack(an, out, x->stack);
    }
  }
  prof__sec_mem_attr_text(an, s, out);
  text_sites(an, s, out, "top sites by bytes allocated", MEM_RANK_BYTES);
  text_sites(an, s, out, "top sites by live bytes at the peak", MEM_RANK_PEAK);
  text_sites(an, s, out, "temporary allocations (freed right away)", MEM_RANK_TEMP);
  if (s->growth_steps)
    fprintf(out, "  live bytes change per step: %s over %d steps\n", prof__fmt_bytes(a, sizeof a, s->growth_per_step),
            s->growth_steps);
}

/* ---- shared with the HTML panel (sec_memory_html.c) ---------------------------- */

int prof__sec_mem_stack_names(prof__an *an, uint32_t id, const char **out, int max) {
  return stack_names(an, id, out, max);
}
size_t prof__sec_mem_top_sites(const mem_state *s, int how, uint32_t *out, size_t max) {
  return top_sites(s, how, out, max);
}
double prof__sec_mem_series_max(const mem_series *s) { return series_max(s); }
int prof__sec_mem_exact(const mem_state *s) { return exact_events(s); }
int prof__sec_mem_from_events(const mem_state *s) { return use_events(s); }

const char *prof__sec_mem_peak_range(prof__an *an, const mem_state *s) {
  uint32_t r = exact_events(s) ? s->heap_peak_range : s->live_peak_range;
  return r ? prof__an_str(an, r - 1) : NULL;
}
