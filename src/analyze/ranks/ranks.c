/* ranks.c — the merged multi-rank analysis: path expansion, one
 * prof__an_run() per trace reduced to a prof__rank_sum, the common clock,
 * and the merged measures and findings (ranks.h, docs/multi-rank.md). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mlprof.h"
#include "analyze/ranks/ranks.h"

#define STEP_MIN_MAX (1u << 24) /* step numbers tracked for the wait estimate */

/* ---- Paths ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int push_path(char ***v, size_t *n, size_t *cap, const char *p) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    char **q = realloc(*v, c * sizeof *q);
    if (!q) return PROF_ENOMEM;
    *v = q;
    *cap = c;
  }
  if (!((*v)[*n] = strdup(p))) return PROF_ENOMEM;
  (*n)++;
  return 0;
}

static int is_trace_name(const char *s) {
  size_t l = strlen(s);
  return l > 5 && strcmp(s + l - 5, ".mlpt") == 0 && s[0] != '.';
}

static int add_dir(char ***v, size_t *n, size_t *cap, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return PROF_ENOENT;
  size_t first = *n;
  int rc = 0;
  struct dirent *e;
  while (!rc && (e = readdir(d))) {
    if (!is_trace_name(e->d_name)) continue;
    size_t l = strlen(dir) + strlen(e->d_name) + 2;
    char *p = malloc(l);
    if (!p) rc = PROF_ENOMEM;
    else {
      snprintf(p, l, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
      rc = push_path(v, n, cap, p);
      free(p);
    }
  }
  closedir(d);
  if (!rc && *n > first) qsort(*v + first, *n - first, sizeof **v, cmp_str);
  return rc;
}

void prof__ranks_paths_free(char **paths, size_t n) {
  for (size_t i = 0; paths && i < n; i++) free(paths[i]);
  free(paths);
}

long prof__ranks_paths(char *const *args, size_t nargs, char ***paths, char *err) {
  char **v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (size_t i = 0; i < nargs && !rc; i++) {
    struct stat st;
    if (stat(args[i], &st) != 0) {
      snprintf(err, PROF_ERR_MAX, "%s: %s", args[i], strerror(errno));
      rc = PROF_ENOENT;
    } else if (S_ISDIR(st.st_mode)) {
      rc = add_dir(&v, &n, &cap, args[i]);
      if (rc) snprintf(err, PROF_ERR_MAX, "%s: cannot read the directory", args[i]);
    } else {
      rc = push_path(&v, &n, &cap, args[i]);
    }
  }
  if (!rc && n == 0) {
    snprintf(err, PROF_ERR_MAX, "no traces (*.mlpt) found");
    rc = PROF_ENOENT;
  }
  if (rc) {
    prof__ranks_paths_free(v, n);
    return rc;
  }
  *paths = v;
  return (long)n;
}

/* ---- One trace -> one summary -------------------------------------------- */

static const char *kv_get(const prof__kv *kv, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (kv[i].key && strcmp(kv[i].key, key) == 0) return kv[i].value;
  return NULL;
}

static int parse_ll(const char *s, long long *v) {
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

static void read_identity(prof__rank_sum *r, const prof__an *an) {
  long long v;
  const char *host = prof__an_header(an, "hostname");
  snprintf(r->host, sizeof r->host, "%s", host ? host : "");
  r->rank = -1;
  if (parse_ll(prof__an_header(an, "rank"), &v) && v >= 0) r->rank = (long)v;
  else if (parse_ll(kv_get(an->meta, an->meta_count, "mpi.rank"), &v) && v >= 0) r->rank = (long)v;
  long long off = 0, er = 0, rt = 0, mono = 0;
  r->has_offset = parse_ll(kv_get(an->meta, an->meta_count, "clock.offset_ns"), &off);
  parse_ll(kv_get(an->meta, an->meta_count, "clock.offset_err_ns"), &er);
  r->offset_ns = off;
  r->offset_err_ns = er;
  r->has_rt = parse_ll(prof__an_header(an, "start_realtime_ns"), &rt) &&
              parse_ll(prof__an_header(an, "start_mono_ns"), &mono);
  r->shift_ns = r->has_rt ? (int64_t)(rt - mono) : 0; /* realtime mapping; may be replaced */
}

static void read_steps(prof__rank_sum *r, const prof__an *an) {
  r->step_lo = UINT64_MAX;
  for (size_t i = 0; i < an->nsteps; i++) {
    const prof__step *s = &an->steps[i];
    r->steps++;
    r->step_ns += s->end_ns - s->begin_ns;
    for (int b = 0; b < PROF_BD_COUNT; b++) r->bd_ns[b] += s->bd_ns[b];
    if (s->number < r->step_lo) r->step_lo = s->number;
    if (s->number > r->step_hi) r->step_hi = s->number;
  }
  if (r->steps) return;
  /* No steps: the whole trace is one pseudo-step 0, by range categories. */
  r->steps = 1;
  r->step_lo = r->step_hi = 0;
  r->step_ns = an->last_ns > an->first_ns ? an->last_ns - an->first_ns : 0;
  uint64_t used = 0;
  for (size_t i = 0; i < an->nranges; i++) {
    int c = an->ranges[i].cat;
    int b = c == PROF_CAT_OTHER || c < 0 || c >= PROF_CAT_COUNT ? PROF_BD_OTHER_RANGE : c;
    r->bd_ns[b] += an->ranges[i].self_ns;
    used += an->ranges[i].self_ns;
  }
  r->bd_ns[PROF_BD_UNTRACKED] = r->step_ns > used ? r->step_ns - used : 0;
}

static int read_ops(prof__rank_sum *r, const prof__an *an) {
  for (size_t i = 0; i < an->nranges; i++)
    if (an->ranges[i].cat == PROF_CAT_COMM) r->comm_all_ns += an->ranges[i].self_ns;
  const prof__comm_state *cs = prof__sec_comm_of(an);
  if (!cs || !cs->nops) return 0;
  r->ops = calloc(cs->nops, sizeof *r->ops);
  if (!r->ops) return PROF_ENOMEM;
  for (size_t i = 0; i < cs->nops; i++) {
    const prof__comm_op *o = &cs->ops[i];
    prof__rank_op *d = &r->ops[r->nops++];
    if (!(d->name = strdup(prof__an_str(an, o->name)))) return PROF_ENOMEM;
    d->calls = o->calls;
    d->bytes = o->bytes;
    d->hidden_ns = o->hidden_ns;
    r->hidden_ns += o->hidden_ns;
    for (size_t k = 0; k < an->nranges; k++)
      if (an->ranges[k].name == o->name && an->ranges[k].cat == PROF_CAT_COMM) d->time_ns += an->ranges[k].total_ns;
  }
  return 0;
}

/* Least in-step communication time per step number, over ranks. */
static int note_step_min(prof__ranks *rs, const prof__an *an, const prof__rank_sum *r) {
  if (!an->nsteps) { /* the pseudo-step 0 */
    prof__step s = {.number = 0};
    s.bd_ns[PROF_BD_COMM] = r->bd_ns[PROF_BD_COMM];
    prof__an fake = {.steps = &s, .nsteps = 1};
    return note_step_min(rs, &fake, r);
  }
  for (size_t i = 0; i < an->nsteps; i++) {
    uint64_t k = an->steps[i].number;
    if (k >= STEP_MIN_MAX) continue;
    if (k >= rs->nstep_min) {
      size_t n = rs->nstep_min ? rs->nstep_min : 64;
      while (n <= k) n *= 2;
      uint64_t *p = realloc(rs->step_min, n * sizeof *p);
      if (!p) return PROF_ENOMEM;
      for (size_t j = rs->nstep_min; j < n; j++) p[j] = UINT64_MAX;
      rs->step_min = p;
      rs->nstep_min = n;
    }
    uint64_t c = an->steps[i].bd_ns[PROF_BD_COMM];
    if (c < rs->step_min[k]) rs->step_min[k] = c;
  }
  return 0;
}

static int add_trace(prof__ranks *rs, const char *path, char *err) {
  if (rs->n == rs->cap) {
    size_t c = rs->cap ? rs->cap * 2 : 16;
    prof__rank_sum *p = realloc(rs->r, c * sizeof *p);
    if (!p) return PROF_ENOMEM;
    rs->r = p;
    rs->cap = c;
  }
  prof__an *an = NULL;
  int rc = prof__an_run_opts(&an, path, 1, err);
  if (rc) return rc;
  prof__rank_sum *r = &rs->r[rs->n++];
  memset(r, 0, sizeof *r);
  r->path = strdup(path);
  read_identity(r, an);
  read_steps(r, an);
  r->first_ns = an->first_ns;
  r->last_ns = an->last_ns;
  r->lost = an->lost_events;
  r->events = an->events;
  r->truncated = an->truncated;
  rc = r->path ? read_ops(r, an) : PROF_ENOMEM;
  if (!rc) rc = note_step_min(rs, an, r);
  prof__an_free(an);
  if (rc) snprintf(err, PROF_ERR_MAX, "%s: out of memory", path);
  return rc;
}

/* ---- Merge ---------------------------------------------------------------- */

/* The common time axis: one host shares CLOCK_MONOTONIC; across hosts the
 * MPI ping-pong offsets when every trace has one, else the realtime anchors. */
static void choose_clock(prof__ranks *rs) {
  int one_host = 1, all_off = 1;
  for (size_t i = 0; i < rs->n; i++) {
    one_host &= strcmp(rs->r[i].host, rs->r[0].host) == 0;
    all_off &= rs->r[i].has_offset;
  }
  rs->clock = one_host ? "one_host" : all_off ? "mpi_offset" : "realtime";
  for (size_t i = 0; i < rs->n; i++) {
    prof__rank_sum *r = &rs->r[i];
    if (one_host) r->shift_ns = 0;
    else if (all_off) r->shift_ns = r->offset_ns;
    if (all_off && !one_host && prof__an_d2ns(r->offset_err_ns) > rs->clock_err_ns) rs->clock_err_ns = prof__an_d2ns(r->offset_err_ns);
  }
}

static void compute_wait(prof__ranks *rs) {
  for (size_t i = 0; i < rs->n; i++) {
    prof__rank_sum *r = &rs->r[i];
    uint64_t floor = 0;
    for (uint64_t s = r->step_lo; s <= r->step_hi && s < rs->nstep_min; s++)
      if (rs->step_min[s] != UINT64_MAX) floor += rs->step_min[s];
    r->wait_ns = r->bd_ns[PROF_BD_COMM] > floor ? r->bd_ns[PROF_BD_COMM] - floor : 0;
  }
}

static int cmp_rank(const void *a, const void *b) {
  const prof__rank_sum *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return strcmp(x->path, y->path);
}

void prof__ranks_free(prof__ranks *rs) {
  if (!rs) return;
  for (size_t i = 0; i < rs->n; i++) {
    for (size_t k = 0; k < rs->r[i].nops; k++) free(rs->r[i].ops[k].name);
    free(rs->r[i].ops);
    free(rs->r[i].path);
  }
  for (size_t i = 0; i < rs->nfindings; i++) {
    free(rs->findings[i].title);
    free(rs->findings[i].measured);
    free(rs->findings[i].recommendation);
  }
  free(rs->findings);
  free(rs->step_min);
  free(rs->r);
  free(rs);
}

int prof__ranks_run(prof__ranks **out, char *const *paths, size_t n, char *err) {
  *out = NULL;
  prof__ranks *rs = calloc(1, sizeof *rs);
  if (!rs) return PROF_ENOMEM;
  err[0] = 0;
  for (size_t i = 0; i < n; i++) {
    int rc = add_trace(rs, paths[i], err);
    if (rc) {
      if (!err[0]) snprintf(err, PROF_ERR_MAX, "%s: %s", paths[i], prof_strerror(rc));
      prof__ranks_free(rs);
      return rc;
    }
  }
  qsort(rs->r, rs->n, sizeof *rs->r, cmp_rank);
  for (size_t i = 0; i < rs->n; i++) /* unknown ranks: numbered after the known ones */
    if (rs->r[i].rank < 0) rs->r[i].rank = (long)(i + (rs->n ? (size_t)rs->r[rs->n - 1].rank + 1 : 0));
  choose_clock(rs);
  compute_wait(rs);
  prof__ranks_finish(rs);
  *out = rs;
  return 0;
}
