/* ranks_report.c — text and JSON reports of a merged multi-rank analysis.
 * The JSON carries the `ranks` section (docs/multi-rank.md lists its keys)
 * and the findings in the same shape as a single-trace report. */
#include <string.h>

#include "mlprof.h"
#include "analyze/ranks/ranks.h"
#include "analyze/util/termsafe.h"

static double ps(const prof__rank_sum *r, uint64_t ns) { return r->steps ? (double)ns / (double)r->steps : 0; }

static uint64_t other_ns(const prof__rank_sum *r) { return r->bd_ns[PROF_BD_OTHER_RANGE] + r->bd_ns[PROF_BD_UNTRACKED]; }

static double overlap_of(const prof__rank_sum *r) {
  uint64_t f = r->comm_all_ns + r->hidden_ns;
  return f ? (double)r->hidden_ns / (double)f : 0;
}

static void text_rank(const prof__rank_sum *r, FILE *out) {
  char s[6][32], h[PROF_TERM_NAME];
  fprintf(out, "  %5ld %-16.16s %6llu %10s %10s %10s %10s %10s %10s %5.0f%%\n", r->rank,
          prof__term_name(h, sizeof h, r->host),
          (unsigned long long)r->steps, prof__an_fmt_ns(s[0], 32, prof__an_d2ns(ps(r, r->step_ns))),
          prof__an_fmt_ns(s[1], 32, prof__an_d2ns(ps(r, r->bd_ns[PROF_BD_COMPUTE]))),
          prof__an_fmt_ns(s[2], 32, prof__an_d2ns(ps(r, r->bd_ns[PROF_BD_DATA]))),
          prof__an_fmt_ns(s[3], 32, prof__an_d2ns(ps(r, r->bd_ns[PROF_BD_COMM]))),
          prof__an_fmt_ns(s[4], 32, prof__an_d2ns(ps(r, r->wait_ns))),
          prof__an_fmt_ns(s[5], 32, prof__an_d2ns(ps(r, r->bd_ns[PROF_BD_IO] + other_ns(r)))),
          r->step_ns ? 100.0 * (double)r->bd_ns[PROF_BD_COMM] / (double)r->step_ns : 0);
}

static void text_ops(const prof__ranks *rs, FILE *out) {
  int any = 0;
  for (size_t i = 0; i < rs->n; i++)
    for (size_t k = 0; k < rs->r[i].nops; k++) {
      const prof__rank_op *o = &rs->r[i].ops[k];
      char t[32], nm[PROF_TERM_NAME];
      if (!any++) fprintf(out, "\nCommunication per rank\n  %5s %-22s %10s %14s %10s\n", "rank", "operation", "calls", "bytes", "time");
      fprintf(out, "  %5ld %-22.22s %10llu %14llu %10s\n", rs->r[i].rank, prof__term_name(nm, sizeof nm, o->name),
              (unsigned long long)o->calls,
              (unsigned long long)o->bytes, prof__an_fmt_ns(t, sizeof t, o->time_ns));
    }
}

static int write_text(prof__ranks *rs, FILE *out) {
  char a[32], b[32], c[32];
  fprintf(out, "mlprof merged report: %zu ranks, clock %s", rs->n, rs->clock);
  if (rs->clock_err_ns) fprintf(out, " (error up to %s)", prof__an_fmt_ns(a, sizeof a, rs->clock_err_ns));
  fprintf(out, "\n\nStep %s on average; compute %s (imbalance max/mean %.2f); communication %.0f%% of the step, "
               "waiting %s per step; overlap %.0f%%\n",
          prof__an_fmt_ns(a, sizeof a, prof__an_d2ns(rs->step_mean_ns)), prof__an_fmt_ns(b, sizeof b, prof__an_d2ns(rs->compute_mean_ns)),
          rs->load_imbalance, 100 * rs->comm_share, prof__an_fmt_ns(c, sizeof c, prof__an_d2ns(rs->wait_mean_ns)), 100 * rs->overlap);
  fprintf(out, "\nFindings\n");
  if (!rs->nfindings) fprintf(out, "  none\n");
  for (size_t i = 0; i < rs->nfindings; i++) {
    const prof__finding *f = &rs->findings[i];
    char t[PROF_TERM_NAME * 2], m[PROF_TERM_NAME * 2], r[PROF_TERM_NAME * 2];
    fprintf(out, "  [%s] %s (%s)\n    measured: %s\n", f->severity, prof__term_name(t, sizeof t, f->title), f->id,
            prof__term_name(m, sizeof m, f->measured));
    if (f->has_saving)
      fprintf(out, "    saving: %s per step (%.1f%%, %s confidence): %s\n",
              prof__an_fmt_ns(a, sizeof a, f->saving_ns), f->saving_pct, prof__an_confidence_label(f->saving_conf),
              prof__term_name(m, sizeof m, f->saving_model));
    fprintf(out, "    do: %s\n", prof__term_name(r, sizeof r, f->recommendation));
  }
  fprintf(out, "\nPer rank (per step)\n  %5s %-16s %6s %10s %10s %10s %10s %10s %10s %6s\n", "rank", "host", "steps",
          "step", "compute", "data", "comm", "wait", "io+other", "comm%");
  for (size_t i = 0; i < rs->n; i++) text_rank(&rs->r[i], out);
  text_ops(rs, out);
  for (size_t i = 0; i < rs->n; i++)
    if (rs->r[i].truncated || rs->r[i].lost)
      fprintf(out, "note: rank %ld: %s%llu lost events\n", rs->r[i].rank, rs->r[i].truncated ? "truncated trace, " : "",
              (unsigned long long)rs->r[i].lost);
  return 0;
}

static void json_ops(const prof__rank_sum *r, prof__json *j) {
  prof__json_key(j, "comm_ops");
  prof__json_arr_begin(j);
  for (size_t k = 0; k < r->nops; k++) {
    prof__json_obj_begin(j);
    prof__json_kstr(j, "name", r->ops[k].name);
    prof__json_kuint(j, "calls", r->ops[k].calls);
    prof__json_kuint(j, "bytes", r->ops[k].bytes);
    prof__json_kuint(j, "time_ns", r->ops[k].time_ns);
    prof__json_kuint(j, "hidden_ns", r->ops[k].hidden_ns);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

static void json_rank(const prof__rank_sum *r, prof__json *j) {
  prof__json_obj_begin(j);
  prof__json_kint(j, "rank", r->rank);
  prof__json_kstr(j, "host", r->host);
  prof__json_kstr(j, "trace", r->path);
  prof__json_kuint(j, "steps", r->steps);
  prof__json_knum(j, "step_ns", ps(r, r->step_ns));
  prof__json_knum(j, "compute_ns", ps(r, r->bd_ns[PROF_BD_COMPUTE]));
  prof__json_knum(j, "data_ns", ps(r, r->bd_ns[PROF_BD_DATA]));
  prof__json_knum(j, "comm_ns", ps(r, r->bd_ns[PROF_BD_COMM]));
  prof__json_knum(j, "io_ns", ps(r, r->bd_ns[PROF_BD_IO]));
  prof__json_knum(j, "other_ns", ps(r, other_ns(r)));
  prof__json_knum(j, "wait_ns", ps(r, r->wait_ns));
  prof__json_knum(j, "comm_share", r->step_ns ? (double)r->bd_ns[PROF_BD_COMM] / (double)r->step_ns : 0);
  prof__json_knum(j, "overlap", overlap_of(r));
  prof__json_kint(j, "clock_shift_ns", r->shift_ns);
  prof__json_kint(j, "clock_offset_ns", r->offset_ns);
  prof__json_kint(j, "clock_offset_err_ns", r->offset_err_ns);
  prof__json_kuint(j, "lost_events", r->lost);
  prof__json_kbool(j, "truncated", r->truncated);
  json_ops(r, j);
  prof__json_obj_end(j);
}

static void json_straggler(const prof__ranks *rs, prof__json *j) {
  prof__json_key(j, "straggler");
  if (rs->straggler < 0) {
    prof__json_null(j);
    return;
  }
  prof__json_obj_begin(j);
  prof__json_kint(j, "rank", rs->r[rs->straggler].rank);
  prof__json_knum(j, "excess_ns", rs->straggler_excess_ns);
  prof__json_knum(j, "excess_ratio", rs->straggler_ratio);
  prof__json_kstr(j, "phase", rs->straggler_phase);
  prof__json_obj_end(j);
}

static int write_json(prof__ranks *rs, FILE *out) {
  prof__json j;
  prof__json_init(&j, out, 1);
  prof__json_obj_begin(&j);
  prof__json_kstr(&j, "generator", "mlprof " MLPROF_VERSION_STRING);
  prof__json_kstr(&j, "kind", "merged");
  prof__json_kuint(&j, "traces", rs->n);
  prof__json_key(&j, "ranks");
  prof__json_obj_begin(&j);
  prof__json_kuint(&j, "count", rs->n);
  prof__json_kstr(&j, "clock", rs->clock);
  prof__json_kuint(&j, "clock_error_ns", rs->clock_err_ns);
  prof__json_knum(&j, "step_ns", rs->step_mean_ns);
  prof__json_knum(&j, "compute_ns", rs->compute_mean_ns);
  prof__json_knum(&j, "load_imbalance", rs->load_imbalance);
  prof__json_knum(&j, "comm_share", rs->comm_share);
  prof__json_knum(&j, "wait_ns", rs->wait_mean_ns);
  prof__json_knum(&j, "overlap", rs->overlap);
  json_straggler(rs, &j);
  prof__json_key(&j, "per_rank");
  prof__json_arr_begin(&j);
  for (size_t i = 0; i < rs->n; i++) json_rank(&rs->r[i], &j);
  prof__json_arr_end(&j);
  prof__json_obj_end(&j);
  prof__json_findings(&j, rs->findings, rs->nfindings);
  prof__json_obj_end(&j);
  fputc('\n', out);
  return 0;
}

int prof__ranks_write(prof__ranks *rs, const char *format, FILE *out) {
  if (!rs || !format || !out) return PROF_EINVAL;
  int rc;
  if (strcmp(format, "json") == 0) {
    rc = write_json(rs, out);
  } else if (strcmp(format, "text") == 0) {
    FILE *t = prof__term_open(out); /* names from the traces must not drive the terminal */
    if (!t) return PROF_ENOMEM;
    rc = write_text(rs, t);
    int crc = prof__term_close(t);
    if (rc == 0) rc = crc;
  } else {
    rc = PROF_EUNSUPPORTED;
  }
  if (rc == 0 && (fflush(out) || ferror(out))) rc = PROF_EIO;
  return rc;
}
