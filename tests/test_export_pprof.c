/* test_export_pprof.c — the exporters of sampled stacks: pprof (decoded
 * here by an independent protobuf reader that checks field numbers),
 * folded stacks and the SVG flame graph, from a real sampled run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/export/gzfile.h"
#include "analyze/sections/functions/sec_functions.h"
#include "helpers.h"
#include "mlprof.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
volatile double sink;
__attribute__((noinline)) void export_hot_leaf(void) {
  double x = 1.0, t0 = cpu_now();
  while (cpu_now() - t0 < 0.4)
    for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}
__attribute__((noinline)) void export_caller(void) {
  export_hot_leaf();
  __asm__ volatile("" ::: "memory");
}

static const char *trace_path;
static prof__an *an;

static int setup(void **state) {
  (void)state;
  trace_path = th_tmp_path("export", ".mlpt");
  pid_t pid = fork();
  if (pid == 0) {
    setenv("MLPROF_SAMPLE_HZ", "1000", 1);
    prof_config c = prof_config_default();
    c.output = trace_path;
    c.report = 0;
    if (prof_init(&c) != 0) _exit(3);
    export_caller();
    _exit(prof_shutdown() == 0 ? 0 : 4);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  char err[256];
  return prof__an_run_opts(&an, trace_path, 1, err) == 0 ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  prof__an_free(an);
  return 0;
}

/* ---- a minimal protobuf reader --------------------------------------------- */

#include "pb_read.h"

#define MAXN 4096
typedef struct prof_model {
  char *strings[MAXN];
  int nstrings;
  uint64_t func_name[MAXN]; /* by function id */
  uint64_t loc_func[MAXN];  /* by location id: function of its first line */
  uint64_t leaf_weight[MAXN]; /* by location id: weight of samples with it innermost */
  uint64_t total_samples, total_ns, period;
  int nsample_types, nsamples;
  uint64_t type_name[2], type_unit[2]; /* string indexes of the sample types */
  uint64_t loc_mapping[MAXN];          /* by location id */
  uint64_t map_file[MAXN], map_build_id[MAXN], map_start[MAXN], map_limit[MAXN]; /* by mapping id */
  int nmappings;
  uint64_t time_nanos, duration_nanos;
} prof_model;

static void read_value_type(prof_model *m, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  assert_true(m->nsample_types < 2);
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) m->type_name[m->nsample_types] = v;
    if (f == 2) m->type_unit[m->nsample_types] = v;
  }
  m->nsample_types++;
}

static void read_mapping(prof_model *m, pb *s) {
  int f, w;
  uint64_t v, id = 0, fields[11] = {0};
  pb sub;
  while (pb_next(s, &f, &w, &v, &sub))
    if (f > 0 && f < 11 && w == 0) fields[f] = v;
  id = fields[1];
  assert_true(id > 0 && id < MAXN);
  m->map_start[id] = fields[2];
  m->map_limit[id] = fields[3];
  m->map_file[id] = fields[5];
  m->map_build_id[id] = fields[6];
  m->nmappings++;
}

static void read_sample(prof_model *m, pb *s) {
  int f, w;
  uint64_t v;
  pb sub;
  uint64_t first_loc = 0, vals[2] = {0, 0};
  int nv = 0;
  while (pb_next(s, &f, &w, &v, &sub)) {
    assert_true(f == 1 || f == 2);
    assert_int_equal(w, 2); /* packed */
    if (f == 1) first_loc = pb_varint(&sub);
    else
      while (sub.p < sub.end && nv < 2) vals[nv++] = pb_varint(&sub);
  }
  assert_int_equal(nv, 2);
  m->total_samples += vals[0];
  m->total_ns += vals[1];
  assert_true(first_loc > 0 && first_loc < MAXN);
  m->leaf_weight[first_loc] += vals[0];
  m->nsamples++;
}

static void read_location(prof_model *m, pb *s) {
  int f, w;
  uint64_t v, id = 0, fn = 0;
  pb sub;
  uint64_t mapping = 0;
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) id = v;
    if (f == 2) mapping = v;
    if (f == 4) {
      int f2, w2;
      uint64_t v2;
      pb sub2;
      while (pb_next(&sub, &f2, &w2, &v2, &sub2))
        if (f2 == 1 && !fn) fn = v2;
    }
  }
  assert_true(id > 0 && id < MAXN && fn > 0);
  m->loc_func[id] = fn;
  m->loc_mapping[id] = mapping;
}

static void read_function(prof_model *m, pb *s) {
  int f, w;
  uint64_t v, id = 0, name = 0;
  pb sub;
  while (pb_next(s, &f, &w, &v, &sub)) {
    if (f == 1) id = v;
    if (f == 2) name = v;
  }
  assert_true(id > 0 && id < MAXN);
  m->func_name[id] = name;
}

static void decode(prof_model *m, const uint8_t *p, size_t len) {
  pb b = {p, p + len, 0}, sub;
  int f, w;
  uint64_t v;
  while (pb_next(&b, &f, &w, &v, &sub)) {
    switch (f) {
    case 1: read_value_type(m, &sub); break;
    case 2: read_sample(m, &sub); break;
    case 3: read_mapping(m, &sub); break;
    case 4: read_location(m, &sub); break;
    case 5: read_function(m, &sub); break;
    case 6: assert_true(m->nstrings < MAXN); m->strings[m->nstrings++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p)); break;
    case 9: m->time_nanos = v; break;
    case 10: m->duration_nanos = v; break;
    case 11: case 14: break;
    case 12: m->period = v; break;
    default: fail_msg("unexpected profile field %d", f);
    }
  }
  assert_false(b.bad);
}

static void pprof_decodes_to_the_sampled_profile(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_pprof(an, f), 0);
  fclose(f);
  static prof_model m;
  memset(&m, 0, sizeof m);
  decode(&m, (const uint8_t *)buf, len);
  free(buf);
  assert_true(m.nstrings > 3);
  assert_string_equal(m.strings[0], "");
  assert_int_equal(m.nsample_types, 2);
  assert_int_equal(m.period, 1000000); /* 1 kHz */
  const prof__sampled_stack *st;
  size_t n = prof__functions_stacks(an, &st, NULL, NULL);
  uint64_t weight = 0;
  for (size_t i = 0; i < n; i++) weight += st[i].weight;
  assert_int_equal(m.nsamples, (int)n);
  assert_int_equal(m.total_samples, weight);
  assert_int_equal(m.total_ns, weight * 1000000);
  /* the innermost location with the most weight is in export_hot_leaf */
  uint64_t best = 0, best_w = 0;
  for (uint64_t i = 1; i < MAXN; i++)
    if (m.leaf_weight[i] > best_w) best_w = m.leaf_weight[i], best = i;
  uint64_t fn = m.loc_func[best];
  assert_true(fn > 0 && m.func_name[fn] < (uint64_t)m.nstrings);
  assert_true(best_w > 0);
  uint64_t leaf_total = 0;
  for (uint64_t i = 1; i < MAXN; i++)
    if (m.loc_func[i] && strcmp(m.strings[m.func_name[m.loc_func[i]]], "export_hot_leaf") == 0) leaf_total += m.leaf_weight[i];
  assert_true(leaf_total * 10 >= weight * 8);
  /* sample types say what they count */
  assert_string_equal(m.strings[m.type_name[0]], "cpu_samples");
  assert_string_equal(m.strings[m.type_unit[0]], "count");
  assert_string_equal(m.strings[m.type_name[1]], "cpu_time");
  assert_string_equal(m.strings[m.type_unit[1]], "nanoseconds");
  /* the hot leaf's location lies in the mapping of this test program, which has its build id */
  uint64_t mp = m.loc_mapping[best];
  assert_true(mp > 0 && mp < MAXN && m.nmappings > 1);
  assert_non_null(strstr(m.strings[m.map_file[mp]], "test_export_pprof"));
  assert_true(m.map_build_id[mp] > 0 && strlen(m.strings[m.map_build_id[mp]]) >= 16);
  assert_true(m.map_start[mp] < m.map_limit[mp]);
  /* wall-clock start and span of the trace */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
  assert_true(m.time_nanos > now_ns - 3600ull * 1000000000ull && m.time_nanos <= now_ns);
  assert_true(m.duration_nanos > 0);
  for (int i = 0; i < m.nstrings; i++) free(m.strings[i]);
}

static void folded_lines_sum_to_the_samples(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(prof__export_folded(an, f), 0);
  fclose(f);
  uint64_t sum = 0, hot = 0;
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    char *sp = strrchr(line, ' ');
    assert_non_null(sp);
    uint64_t w = strtoull(sp + 1, NULL, 10);
    assert_true(w > 0);
    sum += w;
    *sp = 0;
    const char *leaf = strrchr(line, ';');
    if (strcmp(leaf ? leaf + 1 : line, "export_hot_leaf") == 0 && strstr(line, "export_caller;export_hot_leaf")) hot += w;
  }
  free(buf);
  const prof__sampled_stack *st;
  size_t n = prof__functions_stacks(an, &st, NULL, NULL);
  uint64_t weight = 0;
  for (size_t i = 0; i < n; i++) weight += st[i].weight;
  assert_int_equal(sum, weight);
  assert_true(hot * 10 >= weight * 8);
}

static void flamegraph_is_an_svg_naming_the_hot_path(void **state) {
  (void)state;
  const char *path = th_tmp_path("flame", ".svg");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(prof__export_flamegraph(an, f), 0);
  fclose(f);
  char *svg = th_read_file(path, NULL);
  assert_non_null(svg);
  assert_true(strncmp(svg, "<?xml", 5) == 0);
  assert_non_null(strstr(svg, "<svg"));
  assert_non_null(strstr(svg, "export_hot_leaf ("));
  assert_non_null(strstr(svg, "export_caller ("));
  size_t l = strlen(svg);
  assert_true(l > 7 && strcmp(svg + l - 7, "</svg>\n") == 0);
  free(svg);
}

/* The CLI writes pprof through the gzip stream; gzip itself checks it. */
static void pprof_gzip_is_valid(void **state) {
  (void)state;
  const char *path = th_tmp_path("profile", ".pb.gz");
  char err[256];
  FILE *f = prof__gz_open(path, err);
  if (!f) skip(); /* a build without zlib */
  assert_int_equal(prof__export_pprof(an, f), 0);
  assert_int_equal(fclose(f), 0);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "gzip -t '%s'", path);
  assert_int_equal(th_run(cmd, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pprof_decodes_to_the_sampled_profile),
      cmocka_unit_test(folded_lines_sum_to_the_samples),
      cmocka_unit_test(flamegraph_is_an_svg_naming_the_hot_path),
      cmocka_unit_test(pprof_gzip_is_valid),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
