/* api_calls.c — calls every function of mlprof.h once (and PROF_SCOPE) and
 * prints what each returns, for test_scope.c: linked with libmlprof and run
 * with MLPROF_DISABLE=1, and compiled with -DMLPROF_DISABLED and no
 * libmlprof, the two outputs must be the same. Arguments are taken through
 * next() so the output also shows that each was evaluated exactly once.
 *   api_calls TRACE_PATH   (no trace may appear at that path) */
#include <stdio.h>

#include <mlprof.h>

static int evaluated;

/* Each argument expression counts itself. */
static const char *next(const char *s) {
  evaluated++;
  return s;
}
static uint32_t next_id(uint32_t id) {
  evaluated++;
  return id;
}

static void annotate(void) {
  float values[4] = {1, 0, -2, 3};
  PROF_SCOPE(next("scope"));
  PROF_SCOPE_CAT(next("scope_io"), PROF_CAT_IO);
  prof_range_push(next("push"));
  prof_range_push_cat(next("push_cat"), PROF_CAT_DATA);
  prof_range_pop();
  prof_range_pop();
  prof_mark(next("mark"));
  prof_counter(next("counter"), 1.5);
  prof_range_push_id(next_id(1), PROF_CAT_COMM);
  prof_range_pop();
  prof_mark_id(next_id(1));
  prof_counter_id(next_id(1), 2.0);
  prof_comm_id(next_id(1), 64, 2, 1);
  prof_comm_done_id(next_id(1), 64, 10);
  prof_mem_alloc(1, next("block"), 16);
  prof_mem_free(1, next("block"));
  prof_scalar(next("loss"), 0.5);
  prof_histogram(next("w"), PROF_HIST_WEIGHT, values, 4);
  prof_histogram_units(next("a"), PROF_HIST_ACTIVATION, values, 4, 2);
  prof_graph_edge(next("from"), next("to"));
  prof_graph_edge_id(next_id(1), next_id(2));
  prof_graph_node(next("node"), next("Linear"), NULL, 10, 40);
  prof_graph_node_id(next_id(1), 0, 0, 10, 40);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: api_calls TRACE_PATH\n");
    return 2;
  }
  for (int e = 1; e >= -12; e--) printf("strerror(%d) %s\n", e, prof_strerror(e));
  prof_config cfg = prof_config_default();
  printf("config_default size=%d output=%d ring_kb=%u report=%d disable=%d flush_ms=%u schedule=%d\n",
         cfg.size == sizeof cfg, cfg.output != NULL, cfg.ring_kb, cfg.report, cfg.disable, cfg.flush_ms,
         cfg.schedule != NULL);
  prof_config bad = cfg;
  bad.size = 1;
  printf("init(bad size) %d\n", prof_init(&bad));
  cfg.output = next(argv[1]);
  cfg.report = 0;
  printf("init %d\n", prof_init(&cfg));
  printf("init again %d\n", prof_init(NULL));
  printf("start %d\n", prof_start());
  annotate();
  printf("name_id %u\n", (unsigned)prof_name_id(next("dynamic")));
  printf("name_id(NULL) %u\n", (unsigned)prof_name_id(NULL));
  printf("meta %d\n", prof_meta(next("key"), next("value")));
  printf("meta(NULL) %d\n", prof_meta(NULL, "value"));
  printf("mem_pool %d\n", prof_mem_pool(next("arena")));
  printf("mem_pool(\"\") %d\n", prof_mem_pool(""));
  printf("snapshot %d\n", prof_snapshot(NULL));
  printf("stop %d\n", prof_stop());
  printf("step_count %llu\n", (unsigned long long)prof_step_count());
  printf("trace_path %s\n", prof_trace_path() ? "set" : "NULL");
  prof_stats st = {.size = sizeof st, .events_written = 7, .events_lost = 7, .threads = 7, .bytes_written = 7};
  int rc = prof_stats_get(&st);
  printf("stats_get %d written=%llu lost=%llu threads=%llu bytes=%llu\n", rc,
         (unsigned long long)st.events_written, (unsigned long long)st.events_lost,
         (unsigned long long)st.threads, (unsigned long long)st.bytes_written);
  prof_stats tiny = {.size = 1};
  printf("stats_get(size 1) %d\n", prof_stats_get(&tiny));
  printf("stats_get(NULL) %d\n", prof_stats_get(NULL));
  printf("shutdown %d\n", prof_shutdown());
  printf("evaluated %d\n", evaluated);
  return 0;
}
