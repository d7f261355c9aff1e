/* sec_comm.c — the "comm" report section: calls, bytes and time per
 * communication operation of one trace (PROF_EV_COMM events from
 * prof_comm_id / prof_comm_done_id, times from the COMM ranges), and the
 * share of nonblocking transfer time hidden behind other work. The merged
 * multi-rank analysis (ranks.c) reads its state per trace. The HTML panel
 * is one table of the same figures. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report/html_series.h"
#include "mlprof.h"
#include "analyze/ranks/ranks.h"
#include "analyze/util/termsafe.h"
#include "trace/ev_comm.h"

static prof__comm_op *op_get(prof__comm_state *s, uint32_t name) {
  for (size_t i = 0; i < s->nops; i++)
    if (s->ops[i].name == name) return &s->ops[i];
  if (s->nops == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    prof__comm_op *p = realloc(s->ops, cap * sizeof *p);
    if (!p) return NULL;
    s->ops = p;
    s->cap = cap;
  }
  s->ops[s->nops] = (prof__comm_op){.name = name};
  return &s->ops[s->nops++];
}

static void comm_record(prof__an *an, void *st, const prof__rec *rec) {
  (void)an;
  if (rec->kind != PROF_REC_EVENT || rec->ev.type != PROF_EV_COMM) return;
  prof__comm_op *op = op_get(st, rec->ev.name);
  if (!op) return;
  if (rec->ev.aux == PROF_COMM_DONE) {
    op->done++;
    op->done_bytes += rec->ev.a;
    op->hidden_ns += rec->ev.b;
    return;
  }
  op->calls++;
  op->bytes += rec->ev.a;
  uint32_t size = prof__ev_comm_size(rec->ev.b);
  if (size > op->comm_size_max) op->comm_size_max = size;
}

/* Time in COMM ranges of this name. */
static uint64_t op_time(const prof__an *an, uint32_t name) {
  uint64_t t = 0;
  for (size_t i = 0; i < an->nranges; i++)
    if (an->ranges[i].name == name && an->ranges[i].cat == PROF_CAT_COMM) t += an->ranges[i].total_ns;
  return t;
}

static void comm_text(prof__an *an, void *st, FILE *out) {
  prof__comm_state *s = st;
  if (!s->nops) return;
  fprintf(out, "\nCommunication\n  %-24s %10s %14s %12s %12s\n", "operation", "calls", "bytes", "time", "hidden");
  for (size_t i = 0; i < s->nops; i++) {
    const prof__comm_op *o = &s->ops[i];
    char t[32], h[32], nm[PROF_TERM_NAME];
    fprintf(out, "  %-24s %10llu %14llu %12s %12s\n", prof__term_name(nm, sizeof nm, prof__an_str(an, o->name)),
            (unsigned long long)o->calls,
            (unsigned long long)o->bytes, prof__an_fmt_ns(t, sizeof t, op_time(an, o->name)),
            prof__an_fmt_ns(h, sizeof h, o->hidden_ns));
  }
}

static void comm_json(prof__an *an, void *st, prof__json *j) {
  prof__comm_state *s = st;
  if (!s->nops) return;
  prof__json_key(j, "comm");
  prof__json_obj_begin(j);
  prof__json_key(j, "ops");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < s->nops; i++) {
    const prof__comm_op *o = &s->ops[i];
    prof__json_obj_begin(j);
    prof__json_kstr(j, "name", prof__an_str(an, o->name));
    prof__json_kuint(j, "calls", o->calls);
    prof__json_kuint(j, "bytes", o->bytes);
    prof__json_kuint(j, "time_ns", op_time(an, o->name));
    prof__json_kuint(j, "completed", o->done);
    prof__json_kuint(j, "hidden_ns", o->hidden_ns);
    prof__json_kuint(j, "comm_size", o->comm_size_max);
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
  prof__json_obj_end(j);
}

static void comm_html(prof__an *an, void *st, FILE *out) {
  prof__comm_state *s = st;
  if (!s->nops) return;
  prof__html_section_begin(out, "comm", "Communication");
  static const char *const h[] = {"operation", "calls", "bytes", "time", "completed", "hidden behind other work",
                                  "communicator size"};
  prof__html_table_begin(out, h, 7);
  for (size_t i = 0; i < s->nops; i++) {
    const prof__comm_op *o = &s->ops[i];
    fputs("<tr>", out);
    prof__html_td(out, prof__an_str(an, o->name));
    prof__html_td_count(out, (double)o->calls);
    prof__html_td_bytes(out, (double)o->bytes);
    prof__html_td_ns(out, op_time(an, o->name));
    prof__html_td_count(out, (double)o->done);
    prof__html_td_ns(out, o->hidden_ns);
    prof__html_td_count(out, o->comm_size_max);
    fputs("</tr>\n", out);
  }
  prof__html_table_end(out);
  prof__html_section_end(out);
}

static void comm_destroy(prof__an *an, void *st) {
  (void)an;
  free(((prof__comm_state *)st)->ops);
}

const prof__section prof__sec_comm = {
    .name = "comm",
    .state_size = sizeof(prof__comm_state),
    .record = comm_record,
    .text = comm_text,
    .json = comm_json,
    .html = comm_html,
    .destroy = comm_destroy,
    .event_mask = PROF_EVMASK(PROF_EV_COMM),
};

const prof__comm_state *prof__sec_comm_of(const prof__an *an) { return prof__an_section(an, "comm"); }
