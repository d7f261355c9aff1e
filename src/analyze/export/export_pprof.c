/* export_pprof.c — sampled stacks as a pprof profile (profile.proto),
 * encoded here by hand: string table, functions (name, file), one location
 * per address (with its line), and one sample per stack carrying two
 * values: samples (count) and time (nanoseconds, weight x period). The
 * bytes are written uncompressed; the CLI gzips them (pprof reads both). */
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/sec_functions.h"
#include "analyze/sections/stacks/symbols.h"
#include "analyze/export/pb.h"

/* profile.proto field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6, P_DURATION = 10,
       P_PERIOD_TYPE = 11, P_PERIOD = 12 };
enum { VT_TYPE = 1, VT_UNIT = 2 };
enum { S_LOCATION = 1, S_VALUE = 2 };
enum { L_ID = 1, L_ADDRESS = 3, L_LINE = 4 };
enum { LN_FUNCTION = 1, LN_LINE = 2 };
enum { F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4 };

typedef struct pp {
  prof__an *an;
  prof__buf out;
  prof__u64map strs;  /* string hash -> index + 1 */
  const char **strv;
  size_t nstr, strcap;
  prof__u64map locs;  /* pc -> location id */
  prof__u64map funcs; /* (name idx << 32 | file idx) -> function id */
  uint64_t nloc, nfunc;
  prof__buf tail;     /* locations and functions, after the samples */
} pp;

static uint64_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h >> 1;
}

/* Index of s in the string table (0 is ""). */
static uint64_t str_idx(pp *p, const char *s) {
  if (!s || !*s) return 0;
  uint64_t h = str_hash(s);
  for (uint64_t probe = 0;; probe++) {
    uint64_t v = prof__u64map_get(&p->strs, h + probe);
    if (!v) break;
    if (strcmp(p->strv[v - 1], s) == 0) return v - 1;
  }
  if (p->nstr == p->strcap) {
    size_t cap = p->strcap ? p->strcap * 2 : 256;
    const char **v = realloc(p->strv, cap * sizeof *v);
    if (!v) return 0;
    p->strv = v;
    p->strcap = cap;
  }
  uint64_t probe = 0;
  while (prof__u64map_get(&p->strs, h + probe)) probe++;
  prof__u64map_add(&p->strs, h + probe, p->nstr + 1);
  p->strv[p->nstr] = s;
  return p->nstr++;
}

static uint64_t func_id(pp *p, const prof__frame *f) {
  uint64_t name = str_idx(p, f->func), file = str_idx(p, f->file), k = name << 32 | file;
  uint64_t id = prof__u64map_get(&p->funcs, k);
  if (id) return id;
  id = ++p->nfunc;
  prof__u64map_add(&p->funcs, k, id);
  prof__buf m = {0};
  prof__exp_pb_varint(&m, F_ID, id);
  prof__exp_pb_varint(&m, F_NAME, name);
  prof__exp_pb_varint(&m, F_SYSTEM_NAME, name);
  prof__exp_pb_varint(&m, F_FILENAME, file);
  prof__exp_pb_msg(&p->tail, P_FUNCTION, &m);
  return id;
}

static uint64_t loc_id(pp *p, uintptr_t pc, int innermost) {
  uint64_t id = prof__u64map_get(&p->locs, pc);
  if (id) return id;
  id = ++p->nloc;
  prof__u64map_add(&p->locs, pc, id);
  const prof__frame *f = prof__an_frame(p->an, innermost ? pc : pc - 1);
  prof__buf line = {0}, m = {0};
  prof__exp_pb_varint(&line, LN_FUNCTION, func_id(p, f));
  prof__exp_pb_varint(&line, LN_LINE, (uint64_t)(f->line > 0 ? f->line : 0));
  prof__exp_pb_varint(&m, L_ID, id);
  prof__exp_pb_varint(&m, L_ADDRESS, pc);
  prof__exp_pb_msg(&m, L_LINE, &line);
  prof__exp_pb_msg(&p->tail, P_LOCATION, &m);
  return id;
}

static void value_type(pp *p, int field, const char *type, const char *unit) {
  prof__buf m = {0};
  prof__exp_pb_varint(&m, VT_TYPE, str_idx(p, type));
  prof__exp_pb_varint(&m, VT_UNIT, str_idx(p, unit));
  prof__exp_pb_msg(&p->out, field, &m);
}

static void sample(pp *p, const prof__sampled_stack *s, double period_ns) {
  const uintptr_t *pcs;
  int d = prof__an_stack(p->an, s->stack, &pcs);
  prof__buf ids = {0}, vals = {0}, m = {0};
  for (int i = 0; i < d; i++) {
    if (prof__an_frame_is_profiler(prof__an_frame(p->an, i ? pcs[i] - 1 : pcs[i]))) continue;
    prof__buf_varint(&ids, loc_id(p, pcs[i], i == 0));
  }
  prof__buf_varint(&vals, s->weight);
  prof__buf_varint(&vals, (uint64_t)((double)s->weight * period_ns));
  prof__exp_pb_msg(&m, S_LOCATION, &ids); /* packed repeated */
  prof__exp_pb_msg(&m, S_VALUE, &vals);
  prof__exp_pb_msg(&p->out, P_SAMPLE, &m);
}

int prof__export_pprof(prof__an *an, FILE *out) {
  pp p = {0};
  p.an = an;
  str_idx(&p, "x"); /* reserve index 0 for "" below */
  p.strv[0] = "";
  const prof__sampled_stack *st;
  int mode = 0;
  double period = 0;
  size_t n = prof__functions_stacks(an, &st, &mode, &period);
  value_type(&p, P_SAMPLE_TYPE, "samples", "count");
  value_type(&p, P_SAMPLE_TYPE, mode ? "wall" : "cpu", "nanoseconds");
  for (size_t i = 0; i < n; i++) sample(&p, &st[i], period);
  prof__buf_put(&p.out, p.tail.p, p.tail.len);
  value_type(&p, P_PERIOD_TYPE, mode ? "wall" : "cpu", "nanoseconds");
  prof__exp_pb_varint(&p.out, P_PERIOD, (uint64_t)period);
  if (an->last_ns > an->first_ns) prof__exp_pb_varint(&p.out, P_DURATION, an->last_ns - an->first_ns);
  for (size_t i = 0; i < p.nstr; i++) prof__exp_pb_bytes(&p.out, P_STRING, p.strv[i], strlen(p.strv[i]));
  int rc = p.out.oom || p.tail.oom ? PROF_ENOMEM : 0;
  if (!rc && fwrite(p.out.p, 1, p.out.len, out) != p.out.len) rc = PROF_EIO;
  prof__buf_free(&p.out);
  prof__buf_free(&p.tail);
  prof__u64map_free(&p.strs);
  prof__u64map_free(&p.locs);
  prof__u64map_free(&p.funcs);
  free(p.strv);
  return rc;
}
