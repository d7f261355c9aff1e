/* mpi_plain.c — an MPI program that knows nothing of mlprof: a few
 * Allreduce calls of known size, for `mlprof run --mpi` tests. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x[16], y[16];
  for (int i = 0; i < 16; i++) x[i] = rank + i;
  for (int i = 0; i < 7; i++) MPI_Allreduce(x, y, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
