/* ranks.h — the merged analysis of a multi-rank run: N rank traces in, one
 * report out (per-rank step breakdown, waiting in collectives, imbalance,
 * communication share and overlap; findings `straggler`, `comm_bound`,
 * `load_imbalance`), and the Chrome export with one process per rank.
 *
 * Traces are analysed one after another with prof__an_run(); only a
 * per-rank summary survives each (memory grows with ranks × operation names
 * and with the number of steps, never with events). docs/multi-rank.md
 * describes the measures, thresholds and clock alignment.
 */
#ifndef PROF_RANKS_H
#define PROF_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"

/* Per-trace communication totals per operation name (the "comm" section,
 * sec_comm.c, from PROF_EV_COMM events and COMM ranges). */
typedef struct prof__comm_op {
  uint32_t name;          /* string id in the trace */
  uint64_t calls, bytes;  /* calls recorded with prof_comm_id */
  uint64_t done, done_bytes, hidden_ns; /* nonblocking completions */
  uint32_t comm_size_max;
} prof__comm_op;

typedef struct prof__comm_state {
  prof__comm_op *ops;
  size_t nops, cap;
} prof__comm_state;

/* One operation of one rank, by name. */
typedef struct prof__rank_op {
  char *name;
  uint64_t calls, bytes, time_ns, hidden_ns;
} prof__rank_op;

/* Everything kept of one rank. Durations are sums over its steps. */
typedef struct prof__rank_sum {
  char *path;
  char host[64];
  long rank;             /* header rank, else META mpi.rank, else -1 */
  uint64_t steps;        /* complete steps (1 pseudo-step when the trace has none) */
  uint64_t step_lo, step_hi;
  uint64_t step_ns, bd_ns[PROF_BD_COUNT];
  uint64_t comm_all_ns;  /* self time of every COMM range, in steps or not */
  uint64_t hidden_ns;    /* nonblocking transfer time hidden behind other work */
  uint64_t wait_ns;      /* estimated waiting inside communication (see docs) */
  int64_t shift_ns;      /* add to a trace timestamp to reach the common axis */
  int64_t offset_ns, offset_err_ns;
  int has_offset, has_rt;
  uint64_t first_ns, last_ns; /* on the trace's own clock */
  uint64_t lost, events;
  int truncated;
  prof__rank_op *ops;
  size_t nops;
} prof__rank_sum;

typedef struct prof__ranks {
  prof__rank_sum *r;
  size_t n, cap;
  /* per step number: least in-step communication time over ranks */
  uint64_t *step_min;
  size_t nstep_min;
  const char *clock;     /* "one_host", "mpi_offset", "realtime" */
  uint64_t clock_err_ns;
  /* results (prof__ranks_finish) */
  double step_mean_ns, compute_mean_ns, load_imbalance, comm_share, overlap, wait_mean_ns;
  long straggler;        /* index into r, or -1 */
  double straggler_excess_ns, straggler_ratio;
  const char *straggler_phase;
  prof__finding *findings;
  size_t nfindings;
} prof__ranks;

/* Expand arguments (trace files and directories holding *.mlpt files) into
 * a sorted list of paths (malloc'd, free with prof__ranks_paths_free).
 * Returns the count, or a negative error with a message in err. */
long prof__ranks_paths(char *const *args, size_t nargs, char ***paths, char *err);
void prof__ranks_paths_free(char **paths, size_t n);

/* Analyse the traces (one after another) and compute the merged results.
 * Returns 0 or a negative error with the failing trace in err (>= PROF_ERR_MAX bytes). */
int prof__ranks_run(prof__ranks **out, char *const *paths, size_t n, char *err);
void prof__ranks_free(prof__ranks *rs);

/* Merged measures and findings (ranks_findings.c; called by prof__ranks_run). */
void prof__ranks_finish(prof__ranks *rs);

/* Reports: format "text" or "json". */
int prof__ranks_write(prof__ranks *rs, const char *format, FILE *out);

/* Chrome Trace Event JSON with one process per rank (pid = rank) on the
 * common time axis; reads every trace again. */
int prof__ranks_export_chrome(prof__ranks *rs, FILE *out);

/* The comm section's state of one analysed trace (NULL if absent). */
const prof__comm_state *prof__sec_comm_of(const prof__an *an);

#endif
