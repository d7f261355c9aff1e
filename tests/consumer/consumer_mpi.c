/* consumer_mpi.c — an MPI program outside the mlprof tree that links the
 * installed libmlprof_mpi (PMPI wrappers), built by the install test with
 * CMake (mlprof::mlprof_mpi) and with pkg-config (mlprof_mpi).
 *   consumer_mpi TRACE_PATH   -> three steps, one MPI_Allreduce each; exit 0 */
#include <mpi.h>
#include <stdio.h>

#include <mlprof.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer_mpi TRACE_PATH\n");
    return 2;
  }
  prof_config cfg = prof_config_default();
  cfg.output = argv[1];
  cfg.report = 0;
  int err = prof_init(&cfg);
  if (err != 0) {
    fprintf(stderr, "consumer_mpi: prof_init: %s\n", prof_strerror(err));
    return 1;
  }
  MPI_Init(&argc, &argv);
  double x[4] = {1, 2, 3, 4}, y[4];
  for (int step = 0; step < 3; step++) {
    prof_start();
    prof_range_push("consumer_work");
    MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    prof_range_pop();
    prof_stop();
  }
  MPI_Finalize(); /* the wrapper shuts the profiler down */
  return prof_shutdown() == 0 ? 0 : 1;
}
