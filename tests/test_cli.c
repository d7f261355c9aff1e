/* test_cli.c — the built `mlprof` command on a hand-built trace: info,
 * report as JSON, Chrome export, help, bad arguments (exit 1) and bad
 * traces (exit 2 with a message). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_analyze_tb.h"
#include "analyze/util/jsonparse.h"

#define MLPROF MLPROF_BIN_DIR "/mlprof"

/* Three steps of 1000 ns; "decode" (data) takes 100 ns of each. */
static const char *cli_trace(void) {
  tb t = tb_open("cli");
  tb_str(&t, 1, "decode");
  tb_str(&t, 2, "train_step");
  for (uint64_t i = 0; i < 3; i++) {
    uint64_t b = 1000000 + i * 2000;
    tb_sb(&t, 3, b, i);
    tb_b(&t, 3, b, 1, PROF_CAT_DATA);
    tb_e(&t, 3, b + 100, 1);
    tb_b(&t, 3, b + 100, 2, PROF_CAT_COMPUTE);
    tb_e(&t, 3, b + 1000, 2);
    tb_se(&t, 3, b + 1000, i);
  }
  tb_thread_named(&t, 3, "trainer", 4);
  return tb_close(&t, "0");
}

/* Run `mlprof <args>`; returns the exit status, output in *out. */
static int mlprof(const char *args, char **out) {
  char cmd[2048];
  const char *log = th_tmp_path("cli-out", ".txt");
  snprintf(cmd, sizeof cmd, "'%s' %s", MLPROF, args);
  int rc = th_run(cmd, log);
  *out = th_read_file(log, NULL);
  assert_non_null(*out);
  return rc;
}

static void info_shows_header_counts_and_state(void **state) {
  (void)state;
  char args[700], *out;
  snprintf(args, sizeof args, "info '%s'", cli_trace());
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "unit-train"));
  assert_non_null(strstr(out, "events: 18"));
  assert_non_null(strstr(out, "lost: 4 events"));
  assert_non_null(strstr(out, "state: complete"));
  assert_non_null(strstr(out, "trainer"));
  assert_non_null(strstr(out, "chunks"));
  free(out);
}

/* Parse the JSON file the command wrote (the test fails if it cannot). */
static prof__jv *json_file(const char *path) {
  size_t len;
  char err[128];
  char *text = th_read_file(path, &len);
  assert_non_null(text);
  prof__jv *v = prof__jv_parse(text, len, err);
  free(text);
  if (!v) fail_msg("%s", err);
  return v;
}

static void report_json_parses_with_the_contract_keys(void **state) {
  (void)state;
  char args[700], *out;
  const char *json = th_tmp_path("cli-report", ".json");
  snprintf(args, sizeof args, "report --format json -o '%s' '%s'", json, cli_trace());
  assert_int_equal(mlprof(args, &out), 0);
  free(out);
  prof__jv *v = json_file(json);
  const char *keys[] = {"schema", "trace", "steps", "breakdown", "ranges", "findings"};
  for (size_t i = 0; i < 6; i++) assert_non_null(prof__jv_get(v, keys[i]));
  assert_true(prof__jv_path(v, "trace.lost_events")->num == 4);
  assert_true(prof__jv_path(v, "steps.count")->num == 3);
  assert_true(prof__jv_path(v, "breakdown.share.data")->num == 0.1);
  const prof__jv *f = prof__jv_get(v, "findings");
  int input = 0;
  for (size_t i = 0; i < f->len; i++) input |= strcmp(prof__jv_get(&f->items[i], "id")->str, "input_bound") == 0;
  assert_false(input); /* the trainer lost 4 events: its breakdown conclusions are withheld */
  assert_true(prof__jv_path(v, "breakdown.lost_events")->num == 4);
  assert_string_equal(prof__jv_at(prof__jv_path(v, "breakdown.withheld"), 0)->str, "input_bound");
  prof__jv_free(v);
}

static void report_text_goes_to_stdout(void **state) {
  (void)state;
  char args[700], *out;
  snprintf(args, sizeof args, "report '%s'", cli_trace());
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "lost 4 events"));
  assert_non_null(strstr(out, "input_bound"));
  free(out);
}

/* A directory holding one trace gives that trace's own report (not the
 * merged multi-rank one, which has fewer sections and findings). */
static void report_of_a_directory_with_one_trace_is_the_trace_report(void **state) {
  (void)state;
  char dir[600], cmd[2400], args[700], *alone, *in_dir;
  snprintf(dir, sizeof dir, "%s", th_tmp_path("onedir", ""));
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s' '%s/only.mlpt'", dir, dir, cli_trace(), dir);
  assert_int_equal(system(cmd), 0);
  snprintf(args, sizeof args, "report --format json '%s/only.mlpt'", dir);
  assert_int_equal(mlprof(args, &alone), 0);
  snprintf(args, sizeof args, "report --format json '%s'", dir);
  assert_int_equal(mlprof(args, &in_dir), 0);
  assert_string_equal(in_dir, alone);
  free(alone);
  free(in_dir);
}

/* Outputs that would not be what their names say are refused: the report
 * and the Chrome export (unless .gz) are plain text, so "x.json.bz2" or "x.txt.gz"
 * would lie about their bytes. */
static void compressed_output_names_are_refused(void **state) {
  (void)state;
  char args[800], *out;
  const char *bad[] = {"report -o '%s.json.bz2' '%s'", "report -o '%s.txt.gz' '%s'", "export --chrome -o '%s.json.bz2' '%s'"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *base = th_tmp_path("cmpout", "");
    snprintf(args, sizeof args, bad[i], base, cli_trace());
    assert_int_equal(mlprof(args, &out), 3);
    assert_non_null(strstr(out, "not compressed"));
    free(out);
  }
}

/* The text report speaks plainly: "1 step", no raw footer or misuse dumps
 * (those are `mlprof info`'s). */
static void report_text_has_no_raw_dumps_and_counts_in_words(void **state) {
  (void)state;
  tb t = tb_open("cli-one");
  tb_str(&t, 1, "work");
  tb_sb(&t, 3, 1000000, 0);
  tb_b(&t, 3, 1000000, 1, PROF_CAT_COMPUTE);
  tb_e(&t, 3, 1500000, 1);
  tb_se(&t, 3, 2000000, 0);
  tb_thread_named(&t, 3, "trainer", 0);
  char args[700], *out;
  snprintf(args, sizeof args, "report '%s'", tb_close(&t, "0"));
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "1 step: mean"));
  assert_non_null(strstr(out, "in 1 step)"));
  assert_null(strstr(out, "1 steps"));
  assert_null(strstr(out, "footer "));
  assert_null(strstr(out, "misuse."));
  assert_null(strstr(out, "== "));
  free(out);
}

/* Without -o the Chrome export goes beside the trace as TRACE.trace.json,
 * a name speedscope and Perfetto both load. */
static void export_chrome_default_name_is_trace_json(void **state) {
  (void)state;
  char args[700], *out, json[800];
  const char *trace = cli_trace();
  snprintf(args, sizeof args, "export --chrome '%s'", trace);
  assert_int_equal(mlprof(args, &out), 0);
  free(out);
  snprintf(json, sizeof json, "%s.trace.json", trace);
  prof__jv *v = json_file(json);
  assert_non_null(prof__jv_get(v, "traceEvents"));
  prof__jv_free(v);
}

static void help_names_every_exit_status_and_export_form(void **state) {
  (void)state;
  char *out;
  assert_int_equal(mlprof("--help", &out), 0);
  assert_non_null(strstr(out, "4 'diff --fail-if-slower'"));
  free(out);
  assert_int_equal(mlprof("export --help", &out), 0);
  assert_non_null(strstr(out, "mlprof export --folded|--pprof"));
  assert_non_null(strstr(out, "mlprof export --flamegraph FILE.svg"));
  free(out);
}

static void export_chrome_writes_valid_json(void **state) {
  (void)state;
  char args[700], *out;
  const char *json = th_tmp_path("cli-chrome", ".json");
  snprintf(args, sizeof args, "export --chrome '%s' -o '%s'", cli_trace(), json);
  assert_int_equal(mlprof(args, &out), 0);
  free(out);
  prof__jv *v = json_file(json);
  const prof__jv *ev = prof__jv_get(v, "traceEvents");
  assert_non_null(ev);
  int x = 0;
  for (size_t i = 0; i < ev->len; i++) x += strcmp(prof__jv_get(&ev->items[i], "ph")->str, "X") == 0;
  assert_int_equal(x, 9); /* 6 ranges + 3 steps */
  prof__jv_free(v);
}

static void help_exits_zero(void **state) {
  (void)state;
  char *out;
  assert_int_equal(mlprof("--help", &out), 0);
  assert_non_null(strstr(out, "report"));
  assert_non_null(strstr(out, "export"));
  free(out);
  assert_int_equal(mlprof("report --help", &out), 0);
  assert_non_null(strstr(out, "--format"));
  free(out);
}

static void bad_arguments_exit_one(void **state) {
  (void)state;
  char args[700], *out;
  const char *cases[] = {"", "frobnicate", "report", "report --format yaml x.mlpt", "report --bogus x.mlpt",
                         "export x.mlpt", "info a.mlpt b.mlpt", "report -o"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = mlprof(cases[i], &out);
    if (rc != 1) fail_msg("'mlprof %s' exited %d, not 1: %s", cases[i], rc, out);
    assert_true(strlen(out) > 0);
    free(out);
  }
  snprintf(args, sizeof args, "report --format html '%s'", cli_trace());
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "<!DOCTYPE html>"));
  free(out);
}

static void corrupt_or_missing_trace_exits_two(void **state) {
  (void)state;
  const char *path = cli_trace();
  size_t len;
  char *data = th_read_file(path, &len);
  data[len - 4] ^= 0x77; /* inside the last chunk: CRC mismatch */
  FILE *f = fopen(path, "wb");
  fwrite(data, 1, len, f);
  fclose(f);
  free(data);
  char args[700], *out;
  const char *cmds[] = {"info", "report", "export --chrome -o /dev/null"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "%s '%s'", cmds[i], path);
    assert_int_equal(mlprof(args, &out), 2);
    assert_non_null(strstr(out, "cannot read trace"));
    free(out);
  }
  const char *junk = th_tmp_path("junk", ".mlpt");
  f = fopen(junk, "w");
  fputs("this is not a trace at all", f);
  fclose(f);
  snprintf(args, sizeof args, "report '%s'", junk);
  assert_int_equal(mlprof(args, &out), 2);
  assert_non_null(strstr(out, "not an mlprof trace"));
  free(out);
  assert_int_equal(mlprof("info /nonexistent/none.mlpt", &out), 2);
  free(out);
}

static void truncated_trace_still_reports(void **state) {
  (void)state;
  tb t = tb_open("cli-trunc");
  tb_str(&t, 1, "decode");
  tb_sb(&t, 1, 0, 0);
  tb_se(&t, 1, 100, 0);
  char args[700], *out;
  const char *path = tb_abort(&t);
  snprintf(args, sizeof args, "info '%s'", path);
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "TRUNCATED"));
  free(out);
  snprintf(args, sizeof args, "report '%s'", path);
  assert_int_equal(mlprof(args, &out), 0);
  assert_non_null(strstr(out, "truncated"));
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(info_shows_header_counts_and_state),
    cmocka_unit_test(report_json_parses_with_the_contract_keys),
    cmocka_unit_test(report_text_goes_to_stdout),
    cmocka_unit_test(export_chrome_writes_valid_json),
    cmocka_unit_test(report_text_has_no_raw_dumps_and_counts_in_words),
    cmocka_unit_test(export_chrome_default_name_is_trace_json),
    cmocka_unit_test(help_names_every_exit_status_and_export_form),
    cmocka_unit_test(help_exits_zero),
    cmocka_unit_test(bad_arguments_exit_one),
    cmocka_unit_test(corrupt_or_missing_trace_exits_two),
    cmocka_unit_test(truncated_trace_still_reports),
    cmocka_unit_test(report_of_a_directory_with_one_trace_is_the_trace_report),
    cmocka_unit_test(compressed_output_names_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
