/* consumer.c — a program outside the mlprof tree that uses an installed
 * mlprof, built by the install test with CMake and with pkg-config.
 *   consumer TRACE_PATH   -> three steps with one range each; exit 0 on success */
#include <stdio.h>

#include <mlprof.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer TRACE_PATH\n");
    return 2;
  }
  prof_config cfg = prof_config_default();
  cfg.output = argv[1];
  cfg.report = 0;
  int err = prof_init(&cfg);
  if (err != 0) {
    fprintf(stderr, "consumer: prof_init: %s\n", prof_strerror(err));
    return 1;
  }
  for (int step = 0; step < 3; step++) {
    prof_start();
    prof_range_push("consumer_work");
    prof_counter("step", step);
    prof_range_pop();
    prof_stop();
  }
  return prof_shutdown() == 0 ? 0 : 1;
}
