/* rank.c — rank detection from launcher environment variables (rank.h). */
#include "rank.h"

#include <stdlib.h>

static long num(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return -1;
  char *end;
  long x = strtol(v, &end, 10);
  return *end || x < 0 ? -1 : x;
}

void prof__rank_detect(prof__rank *r) {
  static const struct {
    const char *source, *rank, *local, *size;
  } launchers[] = {
      {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
      {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
  };
  r->known = 0;
  r->rank = r->local_rank = r->world_size = -1;
  r->source = "";
  for (unsigned i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
    long rank = num(launchers[i].rank);
    if (rank < 0) continue;
    r->known = 1;
    r->rank = rank;
    r->local_rank = num(launchers[i].local);
    r->world_size = num(launchers[i].size);
    r->source = launchers[i].source;
    return;
  }
}
