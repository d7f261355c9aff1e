/* test_mem_findings.c — the memory findings on hand-built traces: in counts
 * mode the leak finding covers only the blocks recorded as events and says
 * that heap blocks cannot be attributed, with the live heap beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "trace/event.h"
#include "helpers.h"
#include "trace/trace.h"

enum { TID = 3, LIVE_ID = 1 };

static void ev(prof__tw *w, int type, uint32_t name, uint16_t aux, uint64_t ts, uint64_t a, uint64_t b) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .aux = aux, .name = name, .a = a, .b = b};
  assert_int_equal(prof__tw_events(w, TID, &e, 1), 0);
}

static const prof__finding *find(const prof__an *an, const char *id) {
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, id) == 0) return &an->findings[i];
  return NULL;
}

static void counts_mode_leak_says_heap_blocks_are_not_attributed(void **state) {
  (void)state;
  char err[256];
  const char *path = th_tmp_path("memf-counts", ".mlpt");
  prof__kv hdr[] = {{"program", "memf"}, {"pid", "1"}, {"mem.mode", "counts"}};
  prof__tw *w = prof__tw_open(path, hdr, 3, err);
  assert_non_null(w);
  assert_int_equal(prof__tw_string(w, LIVE_ID, "mem.live_bytes", strlen("mem.live_bytes")), 0);
  uint64_t ts = 1000000;
  for (uint64_t s = 0; s < 10; s++) {
    ev(w, PROF_EV_STEP_BEGIN, 0, 0, ts, s, 0);
    /* a hand-reported pool block of 1 MiB each step (events), while the heap grows 4.3 MB a step (counter only) */
    ev(w, PROF_EV_ALLOC, 0, 1, ts + 10, 0x100000 * (s + 1), 1048576);
    ev(w, PROF_EV_COUNTER, LIVE_ID, 0, ts + 20, prof__f64_bits(4.3e6 * (double)(s + 1)), 0);
    ts += 1000000;
    ev(w, PROF_EV_STEP_END, 0, 0, ts, s, 0);
    ts += 1000;
  }
  prof__kv f[] = {{"events_lost", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  prof__an *an = NULL;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  const prof__finding *lf = find(an, "memory_leak");
  assert_non_null(lf);
  assert_non_null(strstr(lf->title, "heap blocks cannot be attributed in counts mode"));
  if (!strstr(lf->measured, "live heap at the end: 41.0 MiB")) fail_msg("%s", lf->measured); /* 43 MB */
  assert_non_null(strstr(lf->recommendation, "MLPROF_MEM=full"));
  prof__an_free(an);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counts_mode_leak_says_heap_blocks_are_not_attributed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
