/* rank.h — which rank of a distributed job this process is, from the
 * launchers' environment (torchrun, Open MPI, MPICH/PMI, Slurm). */
#ifndef PROF_RANK_H
#define PROF_RANK_H

typedef struct prof__rank {
  int known;          /* 1 when a launcher's variables were found */
  long rank, local_rank, world_size;
  const char *source; /* "torchrun", "openmpi", "pmi", "slurm" */
} prof__rank;

/* Fill r from the environment; the first launcher found wins, in the order
 * torchrun, Open MPI, PMI, Slurm. Missing values are -1. */
void prof__rank_detect(prof__rank *r);
#endif
