/* aborter.c — a program that dies by SIGABRT after some work in two
 * threads, for the real-programs test: its exit status must be the same
 * with and without mlprof.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void *burn(void *arg) {
  (void)arg;
  double x = 1.0;
  for (int k = 0; k < 300; k++)
    for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, burn, NULL);
  burn(NULL);
  pthread_join(t, NULL);
  printf("about to abort\n");
  fflush(stdout);
  abort();
}
