/* test_gpu_nvml.c — NVML samples only the GPUs the job uses: a stand-in
 * NVML (built at test time) with four GPUs, each at its own utilisation,
 * and one MIG instance without a utilisation counter. CUDA_VISIBLE_DEVICES
 * by index, by full or prefix UUID, by MIG UUID, empty, and with an entry
 * naming no device (the rest of the list is ignored, as CUDA does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "res/res.h"

/* GPU i (handle i+1) runs at 10*(i+1) %; its UUID is GPU-1111-000i. The
 * MIG instance (handle 100) has memory but no utilisation (NOT_SUPPORTED). */
static const char fake_src[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "typedef struct { unsigned gpu, memory; } U;\n"
    "typedef struct { unsigned long long total, free, used; } M;\n"
    "int nvmlInit_v2(void) { return 0; }\n"
    "int nvmlShutdown(void) { return 0; }\n"
    "int nvmlDeviceGetCount_v2(unsigned *c) { *c = 4; return 0; }\n"
    "int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { if (i >= 4) return 2;"
    " *d = (void *)(unsigned long)(i + 1); return 0; }\n"
    "int nvmlDeviceGetUUID(void *d, char *b, unsigned n) { snprintf(b, n, \"GPU-1111-%04lu\","
    " (unsigned long)d - 1); return 0; }\n"
    "int nvmlDeviceGetHandleByUUID(const char *u, void **d) {\n"
    "  if (strcmp(u, \"MIG-2222-abcd\") == 0) { *d = (void *)100ul; return 0; }\n"
    "  return 2; }\n"
    "int nvmlDeviceGetUtilizationRates(void *d, U *u) { if ((unsigned long)d == 100) return 3;"
    " u->gpu = 10 * (unsigned)(unsigned long)d; u->memory = 1; return 0; }\n"
    "int nvmlDeviceGetMemoryInfo(void *d, M *m) { m->total = 8ull << 30; m->used = (unsigned long)d << 20;"
    " m->free = m->total - m->used; return 0; }\n"
    "int nvmlDeviceGetName(void *d, char *b, unsigned n) { (void)d; snprintf(b, n, \"Fake GPU\"); return 0; }\n";

static char lib[4200];

static int build_fake(void **state) {
  (void)state;
  const char *src = th_tmp_path("fake-nvml-uuid", ".c");
  char cmd[9000];
  snprintf(lib, sizeof lib, "%s.so", src);
  FILE *f = fopen(src, "w");
  if (!f) return -1;
  fputs(fake_src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s'", lib, src);
  if (th_run(cmd, NULL) != 0) lib[0] = 0;
  return 0;
}

/* Open with CUDA_VISIBLE_DEVICES = cvd (NULL: unset); the GPUs' utilisation
 * in order into util[] (-1 where absent); returns the count or -1. */
static int open_with(const char *cvd, int util[8], char *msg, size_t n) {
  if (!lib[0]) skip();
  prof__res_nvml_close();
  if (cvd) setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
  int count = prof__res_nvml_open(lib, msg, n);
  unsetenv("CUDA_VISIBLE_DEVICES");
  for (int i = 0; i < count && i < 8; i++) {
    prof__res_gpu g;
    prof__res_nvml_read(i, &g);
    util[i] = (g.have & 1u) ? (int)g.util_pct : -1;
  }
  return count;
}

static void unset_means_every_gpu(void **state) {
  (void)state;
  int u[8];
  char msg[128];
  assert_int_equal(open_with(NULL, u, msg, sizeof msg), 4);
  assert_int_equal(u[3], 40);
}

static void one_gpu_job_samples_only_its_gpu(void **state) {
  (void)state;
  int u[8];
  char msg[128];
  assert_int_equal(open_with("2", u, msg, sizeof msg), 1);
  assert_int_equal(u[0], 30);
  assert_non_null(strstr(msg, "CUDA_VISIBLE_DEVICES"));
}

static void uuids_and_prefixes_keep_the_job_order(void **state) {
  (void)state;
  int u[8];
  char msg[128];
  assert_int_equal(open_with("GPU-1111-0003,GPU-1111-0000", u, msg, sizeof msg), 2);
  assert_int_equal(u[0], 40);
  assert_int_equal(u[1], 10);
  assert_int_equal(open_with("GPU-1111-0001", u, msg, sizeof msg), 1);
  assert_int_equal(u[0], 20);
  assert_int_equal(open_with("GPU-1111-000", u, msg, sizeof msg), -1); /* ambiguous prefix: no device */
}

static void list_ends_at_an_entry_naming_no_device(void **state) {
  (void)state;
  int u[8];
  char msg[128];
  assert_int_equal(open_with("1,7,3", u, msg, sizeof msg), 1);
  assert_int_equal(u[0], 20);
  assert_int_equal(open_with("", u, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "CUDA_VISIBLE_DEVICES names no GPU"));
}

static void mig_instance_has_memory_but_no_utilisation(void **state) {
  (void)state;
  int u[8];
  char msg[128];
  assert_int_equal(open_with("MIG-2222-abcd", u, msg, sizeof msg), 1);
  assert_int_equal(u[0], -1);
  prof__res_gpu g;
  assert_int_equal(prof__res_nvml_read(0, &g), 0);
  assert_true(g.have & 4u);
  assert_true(g.mem_used_bytes == (double)(100ul << 20));
  prof__res_nvml_close();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unset_means_every_gpu),
      cmocka_unit_test(one_gpu_job_samples_only_its_gpu),
      cmocka_unit_test(uuids_and_prefixes_keep_the_job_order),
      cmocka_unit_test(list_ends_at_an_entry_naming_no_device),
      cmocka_unit_test(mig_instance_has_memory_but_no_utilisation),
  };
  return cmocka_run_group_tests(tests, build_fake, NULL);
}
