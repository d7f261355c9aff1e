/* omp_share.c — an OpenMP program that measures its own CPU shares, the
 * referee of the CPU sampling tests (tests/omp_share.sh).
 *
 * Two OpenMP threads run `kernel_par` together in short parallel regions;
 * between them the main thread runs `kernel_ser` alone while the other
 * thread waits in libgomp (spinning first, libgomp's default). Each thread
 * times every kernel call on its own CPU-time clock, and its whole run on
 * the same clock, so the program knows exactly what share of its threads'
 * CPU each kernel held. It prints "kernel_par PCT", "kernel_ser PCT" and
 * "threads_cpu_s S" at the end.
 *
 * usage: omp_share [ITERATIONS [PAR_WORK [SER_WORK]]]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static double kernel_par(double x, long n) {
  for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
  return x;
}

__attribute__((noinline)) static double kernel_ser(double x, long n) {
  for (long i = 0; i < n; i++) x = x * 0.9999999 + 1e-9;
  return x;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 3000;
  long par_work = argc > 2 ? atol(argv[2]) : 150000;
  long ser_work = argc > 3 ? atol(argv[3]) : 150000;
  double start[2] = {0, 0}, total[2] = {0, 0}, par[2] = {0, 0}, ser = 0, x[2] = {1, 1}, y = 1;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
  start[omp_get_thread_num()] = thread_cpu();
  for (long it = 0; it < iters; it++) {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      double t0 = thread_cpu();
      x[t] = kernel_par(x[t], par_work);
      par[t] += thread_cpu() - t0;
    }
    double t0 = thread_cpu();
    y = kernel_ser(y, ser_work);
    ser += thread_cpu() - t0;
  }
#pragma omp parallel num_threads(2)
  total[omp_get_thread_num()] = thread_cpu() - start[omp_get_thread_num()];
  double all = total[0] + total[1];
  if (all <= 0) return 1;
  printf("kernel_par %.2f\nkernel_ser %.2f\nthreads_cpu_s %.3f\n", 100 * (par[0] + par[1]) / all, 100 * ser / all, all);
  return x[0] + x[1] + y > 0 ? 0 : 2;
}
