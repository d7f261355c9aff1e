/* test_resources.c — resource monitoring: the procfs parsers and the thread
 * chunk codec on known text and bytes; real profiled runs in forked
 * children (bytes written with fsync, two spinning threads, a loopback TCP
 * transfer, NVML absent, sampling off) read back through the analyzer's
 * JSON report; and the four findings with a negative case on hand-built
 * traces whose every number is known by construction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/util/jsonparse.h"
#include "helpers.h"
#include "trace/ev_sample.h"
#include "mlprof.h"
#include "res/res.h"
#include "trace/trace.h"

#define MIB (1024.0 * 1024.0)

/* ---- helpers ---------------------------------------------------------------- */

static prof__jv *report_json(const char *trace, char **text_out) {
  prof__an *an = NULL;
  char err[256];
  if (prof__an_run_opts(&an, trace, 1, err) != 0) {
    print_error("analysis failed: %s\n", err);
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  prof__report_write(an, "json", f);
  fclose(f);
  if (text_out) {
    char *tbuf = NULL;
    size_t tlen = 0;
    FILE *t = open_memstream(&tbuf, &tlen);
    prof__report_write(an, "text", t);
    fclose(t);
    *text_out = tbuf;
  }
  prof__an_free(an);
  prof__jv *v = prof__jv_parse(buf, len, err);
  if (!v) print_error("bad JSON: %s\n", err);
  free(buf);
  return v;
}

static double num_at(const prof__jv *v, const char *path) {
  const prof__jv *x = prof__jv_path(v, path);
  if (!x || x->type != PROF_JV_NUM) {
    print_error("no number at %s\n", path);
    fail();
  }
  return x->num;
}

static int in_child(int (*fn)(const char *), const char *path, const char *resource_ms) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("MLPROF_RESOURCE_MS", resource_ms, 1);
    prof_config c = prof_config_default();
    c.output = path;
    c.report = 0;
    if (prof_init(&c) != 0) _exit(90);
    int rc = fn(path);
    if (prof_shutdown() != 0 && rc == 0) rc = 91;
    _exit(rc);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- parsers and codec -------------------------------------------------------- */

static void io_text_is_parsed(void **state) {
  (void)state;
  const char *t = "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\n"
                  "write_bytes: 8192\ncancelled_write_bytes: 0\n";
  prof__res_raw r;
  memset(&r, 0, sizeof r);
  assert_int_equal(prof__res_parse_io(t, strlen(t), &r), 0);
  assert_int_equal(r.rchar, 6976);
  assert_int_equal(r.wchar, 12);
  assert_int_equal(r.read_bytes, 4096);
  assert_int_equal(r.write_bytes, 8192);
  /* cut before write_bytes: not usable */
  assert_int_equal(prof__res_parse_io(t, 40, &r), -1);
}

static void status_high_water_mark_is_parsed(void **state) {
  (void)state;
  const char *t = "Name:\tsort\nVmPeak:\t  120000 kB\nVmSize:\t  110000 kB\nVmHWM:\t   29492 kB\n"
                  "VmRSS:\t    4100 kB\n";
  uint64_t b = 0;
  assert_int_equal(prof__res_parse_hwm(t, strlen(t), &b), 0);
  assert_int_equal(b, 29492ull * 1024);
  assert_int_equal(prof__res_parse_hwm(t, 40, &b), -1); /* cut before VmHWM */
  assert_int_equal(prof__res_parse_hwm("VmHWM:\t kB\n", 12, &b), -1);
  assert_true(prof__res_rss_hwm() > 0); /* this process's own */
}

static void netdev_sums_every_interface(void **state) {
  (void)state;
  const char *t =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
      "    lo:    3267      29    0    0    0     0          0         0     3000      29    0    0    0     0       0          0\n"
      "  eth0: 21230341     772    0    0    0     0          0         0    46029     596    0    0    0     0       0          0\n";
  uint64_t rx = 0, tx = 0;
  assert_int_equal(prof__res_parse_netdev(t, strlen(t), &rx, &tx), 0);
  assert_int_equal(rx, 3267 + 21230341);
  assert_int_equal(tx, 3000 + 46029);
  assert_int_equal(prof__res_parse_netdev("garbage\n", 8, &rx, &tx), -1);
  for (size_t n = 0; n < strlen(t); n += 7) prof__res_parse_netdev(t, n, &rx, &tx); /* never reads past n */
}

static void loadavg_and_task_stat_are_parsed(void **state) {
  (void)state;
  double l = 0;
  assert_int_equal(prof__res_parse_loadavg("2.80 1.54 0.67 7/120 22292\n", 27, &l), 0);
  assert_true(l > 2.799 && l < 2.801);
  assert_int_equal(prof__res_parse_loadavg("x", 1, &l), -1);
  /* a comm with spaces and parentheses; utime 250, stime 50 */
  const char *s = "1234 (my (odd) name) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 99";
  char comm[17];
  uint64_t ticks = 0;
  assert_int_equal(prof__res_parse_taskstat(s, strlen(s), comm, &ticks), 0);
  assert_string_equal(comm, "my (odd) name");
  assert_int_equal(ticks, 300);
  for (size_t n = 0; n < 60; n++) assert_int_equal(prof__res_parse_taskstat(s, n, comm, &ticks), -1);
}

static void thread_chunk_round_trips_and_rejects_cuts(void **state) {
  (void)state;
  prof__res_thread t[2] = {{.tid = 77, .comm = "loader", .cpu_ns = 900000000, .total_ns = 5000000000ull},
                           {.tid = 78, .comm = "main", .cpu_ns = 100, .total_ns = 200}};
  prof__buf b = {0};
  prof__rec_res_chunk_encode(&b, 123456789, 1000000000, 9, t, 2);
  prof__res_thread out[2];
  uint64_t ts, w;
  uint32_t nt;
  assert_int_equal(prof__rec_res_chunk_decode(b.p, b.len, &ts, &w, &nt, out, 2), 2);
  assert_int_equal(ts, 123456789);
  assert_int_equal(w, 1000000000);
  assert_int_equal(nt, 9);
  assert_int_equal(out[0].tid, 77);
  assert_string_equal(out[0].comm, "loader");
  assert_int_equal(out[0].cpu_ns, 900000000);
  assert_int_equal(out[1].total_ns, 200);
  for (size_t n = 0; n < b.len; n++) assert_int_equal(prof__rec_res_chunk_decode(b.p, n, &ts, &w, &nt, out, 2), -1);
  prof__buf_free(&b);
}

/* Without the driver's device NVML is not even looked for (no dlopen and
 * its search of the library path at every start): the reason says so. */
static void nvml_without_driver_device_is_not_loaded(void **state) {
  (void)state;
  if (access("/dev/nvidiactl", F_OK) == 0) skip(); /* a machine with the driver */
  char msg[128] = "";
  prof__res_nvml_close();
  assert_int_equal(prof__res_nvml_open(NULL, msg, sizeof msg), -1);
  assert_string_equal(msg, "no NVIDIA driver (no /dev/nvidiactl)");
}

static void nvml_absent_says_so(void **state) {
  (void)state;
  char msg[128] = "";
  assert_int_equal(prof__res_nvml_open("libmlprof-no-such-nvml.so.1", msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "libmlprof-no-such-nvml.so.1 not found"));
  prof__res_gpu g;
  assert_int_equal(prof__res_nvml_read(0, &g), -1);
  char name[32] = "x";
  prof__res_nvml_name(0, name, sizeof name);
  assert_string_equal(name, "");
}

static void sampler_rates_are_deltas_over_time(void **state) {
  (void)state;
  prof__res_raw a, b;
  memset(&a, 0, sizeof a);
  a.ns = 1000000000ull;
  a.have_io = a.have_net = 1;
  b = a;
  b.ns = a.ns + 500000000ull;           /* half a second later */
  b.cpu_ns = 750000000ull;              /* 0.75 s of CPU: 1.5 cores */
  b.wchar = 1048576;                    /* 1 MiB written: 2 MiB/s */
  b.net_rx = 1000;
  prof__event ev[64];
  size_t n = prof__res_events(&a, &b, 0, ev, 64);
  int seen = 0;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ev[i].type, PROF_EV_COUNTER);
    double v = prof__bits_f64(ev[i].a);
    if (ev[i].aux == PROF_RES_CPU) seen |= 1, assert_true(v > 1.4999 && v < 1.5001);
    if (ev[i].aux == PROF_RES_IO_WRITE) seen |= 2, assert_true(v > 2 * MIB - 1 && v < 2 * MIB + 1);
    if (ev[i].aux == PROF_RES_NET_RX) seen |= 4, assert_true(v > 1999 && v < 2001);
    if (prof__rec_res_metric_is_rate(ev[i].aux)) {
      assert_int_equal(ev[i].ts, 1000000000ull);
      assert_int_equal(ev[i].b, 500000000ull);
    }
  }
  assert_int_equal(seen, 7);
  assert_int_equal(a.ns, b.ns); /* prev became cur */
}

/* ---- real runs --------------------------------------------------------------- */

#define WRITE_STEPS 4
#define WRITE_BYTES (1024 * 1024)

/* A quiet second: one step, no other events. */
static int scenario_quiet(const char *trace) {
  (void)trace;
  prof_start();
  sleep_ms(1000);
  prof_stop();
  return 0;
}

static int scenario_write(const char *trace) {
  char path[4200];
  snprintf(path, sizeof path, "%s.data", trace);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  static char block[64 * 1024];
  memset(block, 'x', sizeof block);
  for (int s = 0; s < WRITE_STEPS; s++) {
    prof_start();
    for (size_t done = 0; done < WRITE_BYTES; done += sizeof block)
      if (write(fd, block, sizeof block) != (ssize_t)sizeof block) return 2;
    if (fsync(fd) != 0) return 3;
    sleep_ms(30);
    prof_stop();
  }
  close(fd);
  unlink(path);
  return 0;
}

static void written_bytes_are_reported(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-write", ".mlpt");
  assert_int_equal(in_child(scenario_write, trace, "20"), 0);
  prof__jv *r = report_json(trace, NULL);
  assert_non_null(r);
  assert_true(num_at(r, "resources.run.io_write_bytes") >= WRITE_STEPS * (double)WRITE_BYTES);
  assert_true(num_at(r, "resources.run.io_write_rate") > 0);
  const prof__jv *steps = prof__jv_path(r, "resources.steps");
  assert_non_null(steps);
  assert_int_equal(steps->len, WRITE_STEPS);
  assert_true(num_at(r, "resources.period_ms") == 20);
  prof__jv_free(r);
}

/* The writer sleeps up to 250 ms when the trace is quiet; a shorter
 * resource period asks it to wake that often (prof__writer_period_cap), so
 * a quiet second still gets its samples. */
static void quiet_trace_keeps_the_resource_period(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-quiet", ".mlpt");
  assert_int_equal(in_child(scenario_quiet, trace, "40"), 0);
  prof__jv *r = report_json(trace, NULL);
  assert_non_null(r);
  assert_true(num_at(r, "resources.period_ms") == 40);
  double n = num_at(r, "resources.samples");
  print_message("resource samples in a quiet second at 40 ms: %.0f\n", n);
  assert_true(n >= 15); /* 25 expected; 4 if the writer slept its longest */
  prof__jv_free(r);
}

/* Two threads that each spin for 300 ms of their own CPU time. */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_done, spun;

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *spinner(void *arg) {
  pthread_setname_np(pthread_self(), (const char *)arg);
  volatile uint64_t x = 0;
  while (thread_cpu_s() < 0.3) x++;
  pthread_mutex_lock(&hold_mu);
  spun++;
  pthread_cond_broadcast(&hold_cv);
  while (!hold_done) pthread_cond_wait(&hold_cv, &hold_mu); /* stay listed until shutdown */
  pthread_mutex_unlock(&hold_mu);
  return NULL;
}

static int scenario_spin(const char *trace) {
  pthread_t t[2];
  prof_start();
  double w0 = wall_s();
  pthread_create(&t[0], NULL, spinner, "spin-a");
  pthread_create(&t[1], NULL, spinner, "spin-b");
  pthread_mutex_lock(&hold_mu);
  while (spun < 2) pthread_cond_wait(&hold_cv, &hold_mu);
  pthread_mutex_unlock(&hold_mu);
  double wall = wall_s() - w0;
  prof_stop();
  /* What the run itself saw: 0.6 s of CPU over `wall` seconds. */
  char p[4200];
  snprintf(p, sizeof p, "%s.par", trace);
  FILE *f = fopen(p, "w");
  if (!f) return 1;
  fprintf(f, "%f\n", 0.6 / wall);
  fclose(f);
  prof_shutdown();
  pthread_mutex_lock(&hold_mu);
  hold_done = 1;
  pthread_cond_broadcast(&hold_cv);
  pthread_mutex_unlock(&hold_mu);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  return 0;
}

static void two_spinning_threads_show_two_cores(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-spin", ".mlpt");
  assert_int_equal(in_child(scenario_spin, trace, "20"), 0);
  char p[4200];
  snprintf(p, sizeof p, "%s.par", trace);
  char *par_text = th_read_file(p, NULL);
  assert_non_null(par_text);
  double seen_par = atof(par_text);
  free(par_text);
  prof__jv *r = report_json(trace, NULL);
  assert_non_null(r);
  const prof__jv *s0 = prof__jv_at(prof__jv_path(r, "resources.steps"), 0);
  assert_non_null(s0);
  double cores = num_at(s0, "cpu_cores_mean"), dur = num_at(s0, "duration_s");
  /* 0.6 s of CPU by construction; at most a sampling period leaks out at each end. */
  assert_true(cores * dur >= 0.45);
  if (seen_par >= 1.6) assert_true(cores >= 1.3); /* the machine let both threads run */
  else print_message("machine busy: the run itself saw only %.2f cores; not asserting ~2\n", seen_par);
  const prof__jv *th = prof__jv_path(r, "resources.threads");
  assert_non_null(th);
  int spinners = 0;
  for (size_t i = 0; i < th->len; i++) {
    const prof__jv *name = prof__jv_get(&th->items[i], "name");
    if (name && strncmp(name->str, "spin-", 5) == 0 && num_at(&th->items[i], "cpu_s") >= 0.1) spinners++;
  }
  assert_int_equal(spinners, 2);
  prof__jv_free(r);
}

#define NET_BYTES (8 * 1024 * 1024)

static void *receiver(void *arg) {
  int ls = *(int *)arg, c = accept(ls, NULL, NULL);
  static char buf[65536];
  long got = 0;
  ssize_t k;
  while (c >= 0 && (k = read(c, buf, sizeof buf)) > 0) got += k;
  if (c >= 0) close(c);
  return (void *)got;
}

static int scenario_loopback(const char *trace) {
  (void)trace;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
      getsockname(ls, (struct sockaddr *)&a, &al))
    return 1;
  prof_start();
  pthread_t t;
  pthread_create(&t, NULL, receiver, &ls);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a)) return 2;
  static char buf[65536];
  memset(buf, 7, sizeof buf);
  for (long sent = 0; sent < NET_BYTES;) {
    ssize_t k = write(c, buf, sizeof buf);
    if (k <= 0) return 3;
    sent += k;
  }
  close(c);
  void *got;
  pthread_join(t, &got);
  close(ls);
  prof_stop();
  return (long)got == NET_BYTES ? 0 : 4;
}

static void loopback_transfer_is_seen(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-net", ".mlpt");
  assert_int_equal(in_child(scenario_loopback, trace, "20"), 0);
  prof__jv *r = report_json(trace, NULL);
  assert_non_null(r);
  assert_true(num_at(r, "resources.run.net_rx_bytes") >= NET_BYTES);
  assert_true(num_at(r, "resources.run.net_tx_bytes") >= NET_BYTES);
  assert_true(num_at(r, "resources.run.io_write_bytes") >= NET_BYTES); /* write() on the socket */
  prof__jv_free(r);
}

static int scenario_idle(const char *trace) {
  (void)trace;
  prof_start();
  sleep_ms(50);
  prof_stop();
  return 0;
}

static int scenario_no_nvml(const char *trace) {
  return scenario_idle(trace);
}

static void nvml_absent_run_has_one_clear_line(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-nogpu", ".mlpt");
  setenv("MLPROF_RESOURCE_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
  int rc = in_child(scenario_no_nvml, trace, "20");
  unsetenv("MLPROF_RESOURCE_NVML");
  assert_int_equal(rc, 0);
  char *text = NULL;
  prof__jv *r = report_json(trace, &text);
  assert_non_null(r);
  const prof__jv *g = prof__jv_path(r, "resources.gpu_status");
  assert_non_null(g);
  assert_string_equal(g->str, "not sampled: /nonexistent/libnvidia-ml.so.1 not found (no NVIDIA driver)");
  assert_int_equal(prof__jv_path(r, "resources.gpus")->len, 0);
  assert_non_null(text);
  assert_non_null(strstr(text, "GPU: not sampled: /nonexistent/libnvidia-ml.so.1 not found"));
  assert_non_null(strstr(text, "Resources (sampled every 20 ms"));
  free(text);
  prof__jv_free(r);
}

static void sampling_off_records_nothing(void **state) {
  (void)state;
  const char *trace = th_tmp_path("res-off", ".mlpt");
  assert_int_equal(in_child(scenario_idle, trace, "0"), 0);
  prof__jv *r = report_json(trace, NULL);
  assert_non_null(r);
  assert_null(prof__jv_get(r, "resources"));
  prof__jv_free(r);
}

static int findings_of(const char *path, prof__jv **json);

/* A stand-in NVML, built at test time: two GPUs at 30% utilisation, 1 GiB
 * used, 100 W, 1500 MHz, 50 C. Exercises the loaded path without a GPU. */
static const char fake_nvml_src[] =
    "#include <stdio.h>\n"
    "typedef struct { unsigned gpu, memory; } U;\n"
    "typedef struct { unsigned long long total, free, used; } M;\n"
    "int nvmlInit_v2(void) { return 0; }\n"
    "int nvmlShutdown(void) { return 0; }\n"
    "int nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return 0; }\n"
    "int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { *d = (void *)(unsigned long)(i + 1); return 0; }\n"
    "int nvmlDeviceGetUtilizationRates(void *d, U *u) { (void)d; u->gpu = 30; u->memory = 10; return 0; }\n"
    "int nvmlDeviceGetMemoryInfo(void *d, M *m) { (void)d; m->total = 8ull << 30; m->used = 1ull << 30;"
    " m->free = m->total - m->used; return 0; }\n"
    "int nvmlDeviceGetPowerUsage(void *d, unsigned *p) { (void)d; *p = 100000; return 0; }\n"
    "int nvmlDeviceGetClockInfo(void *d, int t, unsigned *c) { (void)d; (void)t; *c = 1500; return 0; }\n"
    "int nvmlDeviceGetTemperature(void *d, int t, unsigned *c) { (void)d; (void)t; *c = 50; return 0; }\n"
    "int nvmlDeviceGetName(void *d, char *b, unsigned n) { (void)d; snprintf(b, n, \"Fake GPU\"); return 0; }\n";

static int scenario_gpu(const char *trace) {
  (void)trace;
  prof_start();
  sleep_ms(150);
  prof_stop();
  return 0;
}

static void nvml_present_gpus_are_sampled(void **state) {
  (void)state;
  const char *src = th_tmp_path("fake-nvml", ".c");
  char lib[4200], cmd[9000];
  snprintf(lib, sizeof lib, "%s.so", src);
  FILE *f = fopen(src, "w");
  assert_non_null(f);
  fputs(fake_nvml_src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s'", lib, src);
  if (th_run(cmd, NULL) != 0) {
    print_message("no C compiler at test time; the NVML-present path is not exercised\n");
    skip();
  }
  const char *trace = th_tmp_path("res-gpu", ".mlpt");
  setenv("MLPROF_RESOURCE_NVML", lib, 1);
  int rc = in_child(scenario_gpu, trace, "20");
  unsetenv("MLPROF_RESOURCE_NVML");
  assert_int_equal(rc, 0);
  prof__jv *r;
  assert_int_equal(findings_of(trace, &r) & 8, 8); /* 30% utilisation, no CUPTI */
  assert_non_null(r);
  assert_string_equal(prof__jv_path(r, "resources.gpu_status")->str, "NVML, 2 GPUs");
  const prof__jv *gpus = prof__jv_path(r, "resources.gpus");
  assert_int_equal(gpus->len, 2);
  assert_string_equal(prof__jv_get(&gpus->items[1], "name")->str, "Fake GPU");
  assert_true(num_at(&gpus->items[0], "util_mean") == 30);
  assert_true(num_at(&gpus->items[0], "mem_used_peak_bytes") == 1073741824.0);
  assert_true(num_at(&gpus->items[0], "power_mean_w") == 100);
  assert_true(num_at(&gpus->items[1], "temp_peak_c") == 50);
  assert_true(fabs(num_at(r, "resources.in_steps.gpu_util_mean") - 30) < 1e-9);
  prof__jv_free(r);
}

/* ---- findings on hand-built traces ---------------------------------------- */

typedef struct shape {
  const char *cpus;  /* usable cores in the header */
  double cores;      /* process CPU, constant */
  double wait;       /* share of each step in a data range */
  double io_read;    /* bytes/s, constant */
  double gpu_util;   /* <0: no GPU samples */
  int cupti;         /* add a GPU activity chunk */
  double load1;      /* machine load average samples (0: none) */
} shape;

#define T0 1000000000ull
#define SEC 1000000000ull
#define NSTEPS 4

static void put(prof__tw *w, uint32_t tid, uint64_t ts, int type, uint32_t name, int cat, uint16_t aux,
                uint64_t a, uint64_t b) {
  prof__event e = {.ts = ts, .type = (uint8_t)type, .cat = (uint8_t)cat, .aux = aux, .name = name, .a = a, .b = b};
  assert_int_equal(prof__tw_events(w, tid, &e, 1), 0);
}

static void put_steps(prof__tw *w, const shape *s) {
  for (uint64_t k = 0; k < NSTEPS; k++) {
    uint64_t b = T0 + k * SEC;
    put(w, 1, b, PROF_EV_STEP_BEGIN, 0, 0, 0, k, 0);
    put(w, 1, b, PROF_EV_RANGE_BEGIN, 1, PROF_CAT_DATA, 0, 0, 0);
    put(w, 1, b + (uint64_t)(s->wait * SEC), PROF_EV_RANGE_END, 1, PROF_CAT_DATA, 0, 0, 0);
    put(w, 1, b + SEC, PROF_EV_STEP_END, 0, 0, 0, k, 0);
  }
}

/* Samples every 100 ms over the four steps. */
static void put_samples(prof__tw *w, const shape *s) {
  const uint64_t P = SEC / 10;
  for (uint64_t t = T0; t < T0 + NSTEPS * SEC; t += P) {
    put(w, PROF_RES_TID, t, PROF_EV_COUNTER, 2, 0, PROF_RES_CPU, prof__f64_bits(s->cores), P);
    put(w, PROF_RES_TID, t, PROF_EV_COUNTER, 3, 0, PROF_RES_IO_READ, prof__f64_bits(s->io_read), P);
    if (s->load1 > 0) put(w, PROF_RES_TID, t + P, PROF_EV_COUNTER, 1, 0, PROF_RES_LOAD1, prof__f64_bits(s->load1), 0);
    if (s->gpu_util >= 0)
      put(w, PROF_RES_TID, t + P, PROF_EV_COUNTER, 4, 0, PROF_RES_GPU_UTIL, prof__f64_bits(s->gpu_util), 0);
  }
}

static const char *build(const shape *s) {
  const char *path = th_tmp_path("res-find", ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "unit"}, {"res.period_ms", "100"}, {"res.cpus", s->cpus},
                    {"res.gpu", s->gpu_util >= 0 ? "NVML, 1 GPU" : "not sampled: test"}, {"res.cpus_online", "4"}};
  prof__tw *w = prof__tw_open(path, hdr, 5, err);
  assert_non_null(w);
  const char *names[] = {NULL, "load", "res.cpu_cores", "res.io_read_bytes_per_s", "res.gpu0.util_pct"};
  for (uint32_t i = 1; i < 5; i++) prof__tw_string(w, i, names[i], strlen(names[i]));
  put_steps(w, s);
  put_samples(w, s);
  if (s->cupti) assert_int_equal(prof__tw_chunk(w, PROF_CHUNK_GPU, "x", 1), 0);
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  return path;
}

/* The exit's reading is short and can hold the run's fastest rate: the
 * peak (over readings at least half a period long) never drops below the
 * mean, since the whole run is such a reading too. */
static void peak_is_never_below_the_mean(void **state) {
  (void)state;
  shape s = {"4.00", 1.0, 0.3, 1e6, -1, 0, 0};
  const char *path = th_tmp_path("res-peak", ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "unit"}, {"res.period_ms", "100"}, {"res.cpus", s.cpus},
                    {"res.gpu", "not sampled: test"}, {"res.cpus_online", "4"}};
  prof__tw *w = prof__tw_open(path, hdr, 5, err);
  assert_non_null(w);
  const char *names[] = {NULL, "load", "res.cpu_cores", "res.io_read_bytes_per_s"};
  for (uint32_t i = 1; i < 4; i++) prof__tw_string(w, i, names[i], strlen(names[i]));
  put_steps(w, &s);
  put_samples(w, &s);
  const uint64_t end = T0 + NSTEPS * SEC, short_read = SEC / 50; /* 20 ms, 3 cores */
  put(w, PROF_RES_TID, end, PROF_EV_COUNTER, 2, 0, PROF_RES_CPU, prof__f64_bits(3.0), short_read);
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  prof__jv *r = report_json(path, NULL);
  double mean = num_at(r, "resources.run.cpu_cores_mean"), peak = num_at(r, "resources.run.cpu_cores_peak");
  assert_true(mean > 1.0);
  assert_true(peak >= mean);
  prof__jv_free(r);
}

/* A peak between two readings (a short program, a spike): the kernel's
 * high-water mark kept at the end (res.rss_hwm_bytes) raises the RSS peak
 * of the resources and memory sections; it never lowers one. */
static const char *rss_trace(const char *hwm) {
  const char *path = th_tmp_path("res-hwm", ".mlpt");
  char err[256];
  prof__kv hdr[] = {{"program", "unit"}, {"res.period_ms", "100"}, {"res.cpus", "4.00"},
                    {"res.gpu", "not sampled: test"}, {"res.cpus_online", "4"}};
  prof__tw *w = prof__tw_open(path, hdr, 5, err);
  assert_non_null(w);
  prof__tw_string(w, 1, "res.rss_bytes", strlen("res.rss_bytes"));
  for (uint64_t k = 0; k < 10; k++)
    put(w, PROF_RES_TID, T0 + k * SEC / 10, PROF_EV_COUNTER, 1, 0, PROF_RES_RSS, prof__f64_bits(10e6 + k), 0);
  prof__kv meta[] = {{"res.rss_hwm_bytes", hwm}};
  assert_int_equal(prof__tw_meta(w, meta, 1), 0);
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  return path;
}

static void rss_peak_takes_the_kernel_high_water_mark(void **state) {
  (void)state;
  prof__jv *r = report_json(rss_trace("50000000"), NULL);
  assert_true(num_at(r, "resources.run.rss_peak_bytes") == 50e6);
  /* the I/O figures say whose I/O they hold (/proc/self/io counts reaped children in) */
  const prof__jv *scope = prof__jv_path(r, "resources.io_scope");
  assert_non_null(scope);
  assert_int_equal(scope->type, PROF_JV_STR);
  assert_non_null(strstr(scope->str, "child processes it has waited for"));
  prof__jv_free(r);
  r = report_json(rss_trace("1000"), NULL); /* below the readings: they stand */
  assert_true(num_at(r, "resources.run.rss_peak_bytes") == 10e6 + 9);
  prof__jv_free(r);
}

/* Bit per finding id present: 1 saturated, 2 underused, 4 io, 8 gpu, 16 machine. */
static int findings_of(const char *path, prof__jv **json) {
  prof__an *an = NULL;
  char err[256];
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  static const char *const ids[] = {"cpu_saturated", "cpu_underused", "io_bound", "gpu_underused",
                                    "machine_saturated"};
  int bits = 0;
  for (size_t i = 0; i < an->nfindings; i++)
    for (int k = 0; k < 5; k++)
      if (strcmp(an->findings[i].id, ids[k]) == 0) bits |= 1 << k;
  prof__an_free(an);
  if (json) *json = report_json(path, NULL);
  return bits;
}

static void saturated_cpus_while_steps_wait(void **state) {
  (void)state;
  shape s = {"4.00", 3.8, 0.3, 1e6, -1, 0, 0};
  prof__jv *r;
  assert_int_equal(findings_of(build(&s), &r), 1);
  assert_true(fabs(num_at(r, "resources.in_steps.cpu_cores_mean") - 3.8) < 1e-6);
  assert_true(fabs(num_at(r, "resources.run.cpu_cores_peak") - 3.8) < 1e-6);
  prof__jv_free(r);
}

static void one_busy_core_in_a_data_bound_job(void **state) {
  (void)state;
  shape s = {"4.00", 1.0, 0.5, 1e6, -1, 0, 0};
  assert_int_equal(findings_of(build(&s), NULL), 2);
}

/* The one-busy-core shape of one_busy_core_in_a_data_bound_job, with
 * `n` forked DataLoader workers each sampled at `per` cores (CPU samples
 * of range "[forked worker]" at 100 Hz, as src/cpu/workers.c writes
 * them), and META cpu.workers. Returns the cpu_underused finding's
 * recommendation (the caller frees) or NULL. */
static char *underused_advice_with_workers(int n, double per, double *saving) {
  const char *path = th_tmp_path("res-workers", ".mlpt");
  char err[256];
  shape s = {"4.00", 1.0, 0.5, 1e6, -1, 0, 0};
  prof__kv hdr[] = {{"program", "unit"},        {"res.period_ms", "100"}, {"res.cpus", s.cpus},
                    {"res.gpu", "not sampled"}, {"res.cpus_online", "4"}, {"cpu.sample_hz", "100"}};
  prof__tw *w = prof__tw_open(path, hdr, 6, err);
  assert_non_null(w);
  const char *names[] = {NULL, "load", "res.cpu_cores", "res.io_read_bytes_per_s", "res.gpu0.util_pct",
                         "[forked worker]"};
  for (uint32_t i = 1; i < 6; i++) prof__tw_string(w, i, names[i], strlen(names[i]));
  put_steps(w, &s);
  put_samples(w, &s);
  for (int k = 0; k < n; k++) {
    uint32_t pid = 5000 + (uint32_t)k;
    assert_int_equal(prof__tw_thread(w, pid, "forked worker", 0, 0), 0);
    for (uint64_t t = T0; t < T0 + NSTEPS * SEC; t += SEC / 10) /* 10 periods of 10 ms in each 100 ms */
      put(w, pid, t, PROF_EV_SAMPLE, 0, 0, PROF_SAMPLE_CPU, 5, (uint64_t)(per * 10 + 0.5));
  }
  char v[16];
  snprintf(v, sizeof v, "%d", n);
  prof__kv m[] = {{"cpu.workers", v}};
  assert_int_equal(prof__tw_meta(w, m, 1), 0);
  prof__kv f[] = {{"events_written", "0"}};
  assert_int_equal(prof__tw_close(w, f, 1), 0);
  prof__an *an = NULL;
  assert_int_equal(prof__an_run_opts(&an, path, 1, err), 0);
  char *rec = NULL;
  for (size_t i = 0; i < an->nfindings; i++)
    if (strcmp(an->findings[i].id, "cpu_underused") == 0) {
      rec = strdup(an->findings[i].recommendation);
      *saving = (double)an->findings[i].saving_ns;
    }
  prof__an_free(an);
  return rec;
}

/* With DataLoader workers the advice fits them: never "num_workers > 0";
 * more workers only when they are saturated; none when they fill the cores. */
static void underused_cores_with_workers_get_worker_advice(void **state) {
  (void)state;
  double saving = -1;
  char *rec = underused_advice_with_workers(1, 1.0, &saving); /* 1 saturated worker, 2 cores idle */
  assert_non_null(rec);
  assert_null(strstr(rec, "num_workers > 0"));
  assert_non_null(strstr(rec, "raise num_workers"));
  assert_true(saving > 0);
  free(rec);
  rec = underused_advice_with_workers(2, 0.3, &saving); /* 2 workers, mostly idle */
  assert_non_null(rec);
  assert_null(strstr(rec, "num_workers > 0"));
  assert_null(strstr(rec, "raise num_workers"));
  assert_non_null(strstr(rec, "persistent_workers"));
  free(rec);
  rec = underused_advice_with_workers(3, 1.0, &saving); /* 3 busy workers fill the cores */
  assert_null(rec);
}

static void heavy_reads_while_steps_wait(void **state) {
  (void)state;
  shape s = {"4.00", 2.0, 0.3, 100 * MIB, -1, 0, 0};
  prof__jv *r;
  assert_int_equal(findings_of(build(&s), &r), 4);
  /* 100 MiB/s over 4 s, and exactly 100 MiB in each 1 s step */
  assert_true(fabs(num_at(r, "resources.run.io_read_bytes") - 400 * MIB) < 1);
  assert_true(fabs(num_at(r, "resources.run.io_read_rate") - 100 * MIB) < 1);
  const prof__jv *s2 = prof__jv_at(prof__jv_path(r, "resources.steps"), 2);
  assert_true(fabs(num_at(s2, "io_read_bytes") - 100 * MIB) < 1);
  prof__jv_free(r);
}

static void idle_gpu_without_cupti(void **state) {
  (void)state;
  shape s = {"4.00", 2.0, 0.05, 1e6, 20, 0, 0};
  prof__jv *r;
  assert_int_equal(findings_of(build(&s), &r), 8);
  assert_true(fabs(num_at(r, "resources.in_steps.gpu_util_mean") - 20) < 1e-6);
  prof__jv_free(r);
  s.cupti = 1; /* CUPTI's own view wins */
  assert_int_equal(findings_of(build(&s), NULL), 0);
}

static void machine_loaded_by_other_processes_is_flagged(void **state) {
  (void)state;
  /* load 9 on 4 CPUs while this process uses 2 cores: 7 runnable tasks are others' */
  shape s = {"4.00", 2.0, 0.05, 1e6, 90, 0, 9.0};
  assert_int_equal(findings_of(build(&s), NULL), 16);
  /* load 4.5 made of this process's 3.8 cores: busy, but not by others (only cpu_saturated) */
  shape own = {"4.00", 3.8, 0.3, 1e6, -1, 0, 4.5};
  assert_int_equal(findings_of(build(&own), NULL), 1);
  shape quiet = {"4.00", 2.0, 0.05, 1e6, 90, 0, 2.1};
  assert_int_equal(findings_of(build(&quiet), NULL), 0);
}

static void balanced_run_has_no_resource_findings(void **state) {
  (void)state;
  shape s = {"4.00", 2.0, 0.05, 1e6, 90, 0, 0};
  assert_int_equal(findings_of(build(&s), NULL), 0);
  shape one = {"1.00", 1.0, 0.5, 1e6, -1, 0, 0}; /* one core, fully used, waiting: saturated, not underused */
  assert_int_equal(findings_of(build(&one), NULL), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(io_text_is_parsed),
      cmocka_unit_test(netdev_sums_every_interface),
      cmocka_unit_test(loadavg_and_task_stat_are_parsed),
      cmocka_unit_test(thread_chunk_round_trips_and_rejects_cuts),
      cmocka_unit_test(nvml_absent_says_so),
      cmocka_unit_test(nvml_without_driver_device_is_not_loaded),
      cmocka_unit_test(machine_loaded_by_other_processes_is_flagged),
      cmocka_unit_test(sampler_rates_are_deltas_over_time),
      cmocka_unit_test(written_bytes_are_reported),
      cmocka_unit_test(quiet_trace_keeps_the_resource_period),
      cmocka_unit_test(two_spinning_threads_show_two_cores),
      cmocka_unit_test(loopback_transfer_is_seen),
      cmocka_unit_test(nvml_absent_run_has_one_clear_line),
      cmocka_unit_test(sampling_off_records_nothing),
      cmocka_unit_test(nvml_present_gpus_are_sampled),
      cmocka_unit_test(saturated_cpus_while_steps_wait),
      cmocka_unit_test(one_busy_core_in_a_data_bound_job),
      cmocka_unit_test(underused_cores_with_workers_get_worker_advice),
      cmocka_unit_test(heavy_reads_while_steps_wait),
      cmocka_unit_test(idle_gpu_without_cupti),
      cmocka_unit_test(balanced_run_has_no_resource_findings),
      cmocka_unit_test(peak_is_never_below_the_mean),
      cmocka_unit_test(rss_peak_takes_the_kernel_high_water_mark),
      cmocka_unit_test(status_high_water_mark_is_parsed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
