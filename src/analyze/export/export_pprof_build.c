/* export_pprof_build.c — the pprof profile builder (export_pprof_int.h),
 * encoding profile.proto by hand: string table, one mapping per recorded
 * module (address range, file, build id), functions (demangled name, linked
 * name, file), one location per address (its mapping, and one line per
 * frame: the functions inlined there innermost first, then the function
 * they were inlined into), and samples with their values and labels.
 * time_nanos is the wall-clock time of the first event, duration_nanos the
 * span of the trace. The bytes are written uncompressed; the CLI gzips them
 * (pprof reads both). */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_pprof_int.h"
#include "analyze/export/pb.h"
#include "analyze/sections/stacks/symbols.h"

/* profile.proto field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6,
       P_TIME = 9, P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_DEFAULT_TYPE = 14 };
enum { VT_TYPE = 1, VT_UNIT = 2 };
enum { S_LOCATION = 1, S_VALUE = 2, S_LABEL = 3 };
enum { LB_KEY = 1, LB_STR = 2, LB_NUM = 3 };
enum { M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5, M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7,
       M_HAS_FILENAMES = 8, M_HAS_LINES = 9, M_HAS_INLINE = 10 };
enum { L_ID = 1, L_MAPPING = 2, L_ADDRESS = 3, L_LINE = 4 };
enum { LN_FUNCTION = 1, LN_LINE = 2 };
enum { F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4 };

typedef prof__pp pp;

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
  prof__exp_pb_varint(&m, F_SYSTEM_NAME, f->mangled ? str_idx(p, f->mangled) : name);
  prof__exp_pb_varint(&m, F_FILENAME, file);
  prof__exp_pb_msg(&p->tail, P_FUNCTION, &m);
  return id;
}

static void put_line(prof__buf *m, pp *p, const prof__frame *f) {
  prof__buf line = {0};
  prof__exp_pb_varint(&line, LN_FUNCTION, func_id(p, f));
  prof__exp_pb_varint(&line, LN_LINE, (uint64_t)(f->line > 0 ? f->line : 0));
  prof__exp_pb_msg(m, L_LINE, &line);
}

/* Mapping id (index + 1) of the module that holds pc, 0 for none. */
static uint64_t mapping_of(pp *p, uintptr_t pc) {
  if (!p->st || prof__pc_is_python(pc)) return 0;
  for (size_t i = p->st->nmods; i-- > 0;)
    if (pc >= p->st->mods[i].start && pc - p->st->mods[i].start < p->st->mods[i].size) return i + 1;
  return 0;
}

/* The location of one recorded address: f is its frame (looked up one
 * byte earlier for return addresses), with its inlined frames as lines. */
static uint64_t loc_id(pp *p, uintptr_t pc, const prof__frame *f) {
  uint64_t id = prof__u64map_get(&p->locs, pc);
  if (id) return id;
  id = ++p->nloc;
  prof__u64map_add(&p->locs, pc, id);
  prof__buf m = {0};
  prof__exp_pb_varint(&m, L_ID, id);
  uint64_t map = mapping_of(p, pc);
  if (map) prof__exp_pb_varint(&m, L_MAPPING, map);
  if (!prof__pc_is_python(pc)) prof__exp_pb_varint(&m, L_ADDRESS, pc);
  for (int k = 0; k < f->ninl; k++) put_line(&m, p, &f->inl[k]);
  put_line(&m, p, f);
  prof__exp_pb_msg(&p->tail, P_LOCATION, &m);
  return id;
}

static uint64_t mlprof_loc(pp *p) {
  if (p->mlprof_loc) return p->mlprof_loc;
  p->mlprof_loc = ++p->nloc;
  prof__buf m = {0};
  prof__exp_pb_varint(&m, L_ID, p->mlprof_loc);
  put_line(&m, p, &prof__profiler_frame);
  prof__exp_pb_msg(&p->tail, P_LOCATION, &m);
  return p->mlprof_loc;
}

static void mappings(pp *p) {
  for (size_t i = 0; p->st && i < p->st->nmods; i++) {
    const prof__an_module *md = &p->st->mods[i];
    char bid[129];
    size_t nb = md->build_id_len < 64 ? md->build_id_len : 64;
    for (size_t k = 0; k < nb; k++) snprintf(bid + 2 * k, 3, "%02x", md->build_id[k]);
    bid[2 * nb] = 0;
    prof__buf m = {0};
    prof__exp_pb_varint(&m, M_ID, i + 1);
    prof__exp_pb_varint(&m, M_START, md->start);
    prof__exp_pb_varint(&m, M_LIMIT, md->start + md->size);
    prof__exp_pb_varint(&m, M_OFFSET, md->start - md->bias); /* the first segment's address in the file */
    prof__exp_pb_varint(&m, M_FILENAME, str_idx(p, md->path));
    const char *own = prof__pp_own(p, bid);
    if (own) prof__exp_pb_varint(&m, M_BUILD_ID, str_idx(p, own));
    prof__exp_pb_varint(&m, M_HAS_FUNCTIONS, 1);
    prof__exp_pb_varint(&m, M_HAS_FILENAMES, 1);
    prof__exp_pb_varint(&m, M_HAS_LINES, 1);
    prof__exp_pb_varint(&m, M_HAS_INLINE, 1);
    prof__exp_pb_msg(&p->out, P_MAPPING, &m);
  }
}

static void value_type(pp *p, int field, const char *type, const char *unit) {
  prof__buf m = {0};
  prof__exp_pb_varint(&m, VT_TYPE, str_idx(p, type));
  prof__exp_pb_varint(&m, VT_UNIT, str_idx(p, unit));
  prof__exp_pb_msg(&p->out, field, &m);
}

static void label(prof__buf *m, pp *p, const prof__pp_label *l) {
  prof__buf b = {0};
  prof__exp_pb_varint(&b, LB_KEY, str_idx(p, l->key));
  if (l->str) prof__exp_pb_varint(&b, LB_STR, str_idx(p, l->str));
  else prof__exp_pb_varint(&b, LB_NUM, (uint64_t)l->num);
  prof__exp_pb_msg(m, S_LABEL, &b);
}

void prof__pp_sample(pp *p, uint32_t stack, const int64_t *values, const prof__pp_label *labels, int nlabels) {
  const uintptr_t *pcs;
  int d = stack ? prof__an_stack(p->an, stack, &pcs) : 0, leaf = 1;
  prof__buf ids = {0}, vals = {0}, m = {0};
  for (int i = 0; i < d; i++) {
    int adj = i && !prof__pc_is_python(pcs[i]);
    const prof__frame *f = prof__an_frame(p->an, adj ? pcs[i] - 1 : pcs[i]);
    if (prof__an_frame_is_profiler(f)) { /* as prof__an_stack_frames */
      if (leaf && i == 0) prof__buf_varint(&ids, mlprof_loc(p));
      continue;
    }
    leaf = 0;
    prof__buf_varint(&ids, loc_id(p, adj ? pcs[i] - 1 : pcs[i], f));
  }
  for (int i = 0; i < p->nvalues; i++) prof__buf_varint(&vals, (uint64_t)values[i]);
  prof__exp_pb_msg(&m, S_LOCATION, &ids); /* packed repeated */
  prof__exp_pb_msg(&m, S_VALUE, &vals);
  for (int i = 0; i < nlabels; i++) label(&m, p, &labels[i]);
  prof__exp_pb_msg(&p->out, P_SAMPLE, &m);
}

/* Wall-clock time of the first event, from the header's clock pair. */
static uint64_t start_time(prof__an *an) {
  const char *rt = prof__an_header(an, "start_realtime_ns"), *mono = prof__an_header(an, "start_mono_ns");
  if (!rt) return 0;
  uint64_t t = strtoull(rt, NULL, 10), m = mono ? strtoull(mono, NULL, 10) : 0;
  if (m && an->first_ns != UINT64_MAX && an->first_ns >= m) t += an->first_ns - m;
  return t;
}

uint64_t prof__pp_str(pp *p, const char *s) { return str_idx(p, s); }

const char *prof__pp_own(pp *p, const char *s) {
  char **ow = realloc(p->owned, (p->nowned + 1) * sizeof *ow);
  if (!ow) return NULL;
  p->owned = ow;
  ow[p->nowned] = strdup(s);
  return ow[p->nowned] ? ow[p->nowned++] : NULL;
}

void prof__pp_sample_type(pp *p, const char *type, const char *unit) {
  value_type(p, P_SAMPLE_TYPE, type, unit);
  p->nvalues++;
}

void prof__pp_init(pp *p, prof__an *an) {
  *p = (pp){0};
  p->an = an;
  str_idx(p, "x"); /* reserve index 0 for "" below */
  if (p->strv) p->strv[0] = "";
  p->st = prof__an_section(an, "stacks");
  mappings(p);
}

int prof__pp_finish(pp *p, FILE *out, const char *period_type, const char *period_unit, int64_t period,
                    const char *default_type) {
  prof__an *an = p->an;
  prof__buf_put(&p->out, p->tail.p, p->tail.len);
  value_type(p, P_PERIOD_TYPE, period_type, period_unit);
  prof__exp_pb_varint(&p->out, P_PERIOD, (uint64_t)period);
  uint64_t t0 = start_time(an);
  if (t0) prof__exp_pb_varint(&p->out, P_TIME, t0);
  if (an->last_ns > an->first_ns && an->first_ns != UINT64_MAX) prof__exp_pb_varint(&p->out, P_DURATION, an->last_ns - an->first_ns);
  prof__exp_pb_varint(&p->out, P_DEFAULT_TYPE, str_idx(p, default_type));
  for (size_t i = 0; i < p->nstr; i++) prof__exp_pb_bytes(&p->out, P_STRING, p->strv[i], strlen(p->strv[i]));
  int rc = p->out.oom || p->tail.oom || !p->strv ? PROF_ENOMEM : 0;
  if (!rc && fwrite(p->out.p, 1, p->out.len, out) != p->out.len) rc = PROF_EIO;
  prof__buf_free(&p->out);
  prof__buf_free(&p->tail);
  prof__u64map_free(&p->strs);
  prof__u64map_free(&p->locs);
  prof__u64map_free(&p->funcs);
  free(p->strv);
  for (size_t i = 0; i < p->nowned; i++) free(p->owned[i]);
  free(p->owned);
  *p = (pp){0};
  return rc;
}
