/* sec_functions_steps.c — the functions section's view of steps: CPU time
 * of the step thread per step, exact from its CPU clock read at each step's
 * begin and end (cpuctr/cpu_ns COUNTER events the CPU module's step hook
 * writes next to STEP_BEGIN / STEP_END), else estimated from its samples;
 * each step's class (compute-bound, mixed, waiting); the share of the CPU
 * samples outside every step. JSON "functions.steps" and the text lines.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sections/functions/sec_functions_int.h"
#include "analyze/util/array.h"
#include "trace/ev_cpuctr.h"

/* ---- exact per-step CPU time ------------------------------------------------ */

/* A reading of a thread's CPU clock counts for a step boundary when it was
 * taken this close to it (the step hook reads it next to the step event). */
#define BOUND_SLACK_NS 200000ull

static size_t reader_of(prof__fn_st *s, uint32_t tid) {
  uint64_t at = prof__u64map_get(&s->last_cpu, (uint64_t)tid + 1);
  if (at) return (size_t)at - 1;
  if (prof__arr_grow((void **)&s->rd, &s->rdcap, s->nrd + 1, sizeof *s->rd) ||
      prof__u64map_add(&s->last_cpu, (uint64_t)tid + 1, s->nrd + 1))
    return SIZE_MAX;
  memset(&s->rd[s->nrd], 0, sizeof s->rd[s->nrd]);
  s->rd[s->nrd].v = NAN;
  return s->nrd++;
}

static prof__fn_bound *bound_of(prof__fn_st *s, uint64_t step) {
  uint64_t at = prof__u64map_get(&s->bound_at, step + 1);
  if (at) return &s->bounds[at - 1];
  if (prof__arr_grow((void **)&s->bounds, &s->bcap, s->nbounds + 1, sizeof *s->bounds) ||
      prof__u64map_add(&s->bound_at, step + 1, s->nbounds + 1))
    return NULL;
  s->bounds[s->nbounds] = (prof__fn_bound){step, NAN, NAN};
  return &s->bounds[s->nbounds++];
}

/* STEP_BEGIN takes the thread's last reading (just before it); STEP_END the
 * next one (just after it). Readings the step hook marked as boundary
 * readings count whatever time passed (a preempted thread uses no CPU in
 * between); unmarked ones (older traces, the writer's periodic readings)
 * only within BOUND_SLACK_NS. */
void prof__fn_steps_record(prof__an *an, prof__fn_st *s, const prof__rec *rec) {
  const prof__event *ev = &rec->ev;
  if (ev->type == PROF_EV_COUNTER) {
    if (!s->cpu_ns_id) {
      if (strcmp(prof__an_str(an, ev->name), PROF_CPUCTR_CPU_NS) != 0) return;
      s->cpu_ns_id = ev->name;
    } else if (ev->name != s->cpu_ns_id) {
      return;
    }
    size_t r = reader_of(s, rec->tid);
    if (r == SIZE_MAX) return;
    double v = prof__bits_f64(ev->a);
    int marked = (ev->cat & PROF_CPUCTR_CAT_BOUNDARY) != 0;
    if (s->rd[r].want_end && ev->ts >= s->rd[r].end_ts && (marked || ev->ts - s->rd[r].end_ts <= BOUND_SLACK_NS)) {
      prof__fn_bound *b = bound_of(s, s->rd[r].want_end - 1);
      if (b) b->end = v;
      s->rd[r].want_end = 0;
      marked = 0; /* used as an end: not the next step's begin */
    } else if (!s->rd[r].marked_trace || marked) {
      s->rd[r].want_end = 0; /* unmarked traces: only the reading right after the step */
    }
    if (marked) s->rd[r].marked_trace = 1;
    /* in a trace with marked readings, a periodic reading never stands for
     * a boundary (it may arrive between the hook's reading and the step
     * event, from another chunk) */
    if (marked || !s->rd[r].marked_trace) {
      s->rd[r].ts = ev->ts;
      s->rd[r].v = v;
      s->rd[r].marked = marked;
    }
    return;
  }
  size_t r = reader_of(s, rec->tid);
  if (r == SIZE_MAX) return;
  if (ev->type == PROF_EV_STEP_BEGIN) {
    prof__fn_bound *b = bound_of(s, ev->a);
    if (b && isfinite(s->rd[r].v) && ev->ts >= s->rd[r].ts &&
        (s->rd[r].marked || (!s->rd[r].marked_trace && ev->ts - s->rd[r].ts <= BOUND_SLACK_NS)))
      b->begin = s->rd[r].v;
    s->rd[r].marked = 0; /* consumed */
  } else if (ev->type == PROF_EV_STEP_END) {
    s->rd[r].want_end = ev->a + 1;
    s->rd[r].end_ts = ev->ts;
  }
}

/* Each analyzer step's exact CPU time, where both boundaries were read. */
static void cpu_bounds_finish(prof__an *an, prof__fn_st *s) {
  for (size_t i = 0; s->steps && i < an->nsteps; i++) {
    uint64_t at = prof__u64map_get(&s->bound_at, an->steps[i].number + 1);
    const prof__fn_bound *b = at ? &s->bounds[at - 1] : NULL;
    s->steps[i].cpu_ns = b && isfinite(b->begin) && isfinite(b->end) && b->end >= b->begin ? b->end - b->begin : NAN;
  }
}

/* CPU ms of the step thread in step i: the clock readings when present,
 * else the samples; at most the step's wall time (one thread cannot run
 * longer; a sample's period can be longer than a short step). */
double prof__fn_step_cpu_ms(const prof__fn_st *s, size_t i, double wall_ms) {
  double c = isfinite(s->steps[i].cpu_ns) ? s->steps[i].cpu_ns / 1e6 : (double)s->steps[i].cpu_w * s->period_ns / 1e6;
  return c < wall_ms ? c : wall_ms;
}

static void step_times(prof__an *an, prof__fn_st *s) {
  if (!an->nsteps) return;
  s->steps = calloc(an->nsteps, sizeof *s->steps);
  if (!s->steps) return;
  for (size_t i = 0; i < s->nts; i++) {
    long k = prof__an_step_at(an, s->ts[i].ts);
    if (k < 0) {
      s->outside_w += s->ts[i].weight;
      continue;
    }
    s->steps[k].all_w += s->ts[i].weight;
    if (s->ts[i].tid == an->steps[k].tid) s->steps[k].cpu_w += s->ts[i].weight;
  }
}


/* Per-step CPU of the step thread and of all threads, from the samples, and
 * the exact figure from the clock readings where both boundaries were read. */
void prof__fn_steps_finish(prof__an *an, prof__fn_st *s) {
  step_times(an, s);
  cpu_bounds_finish(an, s);
}

const char *prof__fn_step_kind(double ratio) {
  return ratio < PROF_FN_WAIT_RATIO ? "waiting" : ratio >= PROF_FN_COMPUTE_RATIO ? "compute" : "mixed";
}


void prof__fn_steps_json(prof__an *an, prof__json *j, const prof__fn_st *s) {
  if (!s->steps || s->mode != 0) return;
  prof__json_key(j, "steps");
  prof__json_arr_begin(j);
  for (size_t i = 0; i < an->nsteps; i++) {
    const prof__step *st = &an->steps[i];
    double wall = (double)(st->end_ns - st->begin_ns) / 1e6, cpu = prof__fn_step_cpu_ms(s, i, wall);
    double ratio = wall > 0 ? cpu / wall : 0;
    prof__json_obj_begin(j);
    prof__json_kuint(j, "step", st->number);
    prof__json_knum(j, "wall_ms", wall);
    prof__json_knum(j, "cpu_ms", cpu);
    prof__json_knum(j, "all_threads_cpu_ms", (double)s->steps[i].all_w * s->period_ns / 1e6);
    prof__json_knum(j, "cpu_ratio", ratio);
    prof__json_kstr(j, "cpu_source", isfinite(s->steps[i].cpu_ns) ? "clock" : "samples");
    prof__json_kstr(j, "kind", prof__fn_step_kind(ratio));
    prof__json_obj_end(j);
  }
  prof__json_arr_end(j);
}

void prof__fn_steps_text(prof__an *an, const prof__fn_st *s, FILE *out) {
  if (!s->steps || s->mode != 0 || !an->nsteps) return;
  size_t kinds[3] = {0}, exact = 0;
  double cpu = 0, wall = 0;
  for (size_t i = 0; i < an->nsteps; i++) {
    double w = (double)(an->steps[i].end_ns - an->steps[i].begin_ns), c = prof__fn_step_cpu_ms(s, i, w / 1e6) * 1e6;
    double r = w > 0 ? c / w : 0;
    exact += isfinite(s->steps[i].cpu_ns);
    kinds[r < PROF_FN_WAIT_RATIO ? 0 : r >= PROF_FN_COMPUTE_RATIO ? 2 : 1]++;
    cpu += c;
    wall += w;
  }
  fprintf(out,
          "  Steps: CPU time of the step thread is %.0f%% of wall time (%zu compute-bound, %zu mixed, %zu off-CPU)\n",
          wall > 0 ? 100 * cpu / wall : 0, kinds[2], kinds[1], kinds[0]);
  if (s->outside_w)
    fprintf(out, "  Outside steps: %.1f%% of the CPU samples (%.1f ms: start-up, evaluation, generation, shutdown)\n",
            100.0 * (double)s->outside_w / (double)s->total_w, (double)s->outside_w * s->period_ns / 1e6);
  fputs("    (off-CPU: the thread was not running for most of the step: blocked on I/O, a lock or another\n"
        "    thread, or runnable but waiting for a core; 'Counters per step' splits the two)\n",
        out);
  if (exact == an->nsteps)
    fputs("    (per-step CPU time from the step thread's CPU clock read at each step's begin and end)\n", out);
  else if (s->samples[s->mode] < PROF_FN_FEW_SAMPLES)
    fprintf(out, "    caveat: from %llu samples only; per-step CPU shares are rough below ~%d samples.\n",
            (unsigned long long)s->samples[s->mode], PROF_FN_FEW_SAMPLES);
}

