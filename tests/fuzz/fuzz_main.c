/* fuzz_main.c — libFuzzer target over the trace reader, the analyzer and
 * every report and export writer (fuzz_entry.c). Built only with clang
 * (-DMLPROF_FUZZ=ON); scripts/test runs it on tests/fuzz/corpus for about a
 * minute. A crashing input goes to tests/fuzz/regressions/, where the plain
 * replay test (replay.c) keeps it tested in every build. */
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlprof_fuzz_trace(data, size);
  return 0;
}
