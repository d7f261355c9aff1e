/* rec_res.c — names of the resource metrics and the PROF_CHUNK_RES codec
 * (the busiest threads of a scan), shared by the resource producer and the
 * reader. Layout: docs/resources.md.
 */
#include <stdio.h>
#include <string.h>

#include "rec_res.h"

static const char *const proc_names[PROF_RES_NPROC] = {
    NULL,
    "res.cpu_cores",
    "res.cpu_sys_cores",
    "res.load1",
    "res.ctx_voluntary_per_s",
    "res.ctx_involuntary_per_s",
    "res.minor_faults_per_s",
    "res.major_faults_per_s",
    "res.rss_bytes",
    "res.io_read_bytes_per_s",
    "res.io_write_bytes_per_s",
    "res.disk_read_bytes_per_s",
    "res.disk_write_bytes_per_s",
    "res.net_rx_bytes_per_s",
    "res.net_tx_bytes_per_s",
};
static const char *const gpu_names[PROF_RES_GPU_END - PROF_RES_GPU_UTIL] = {
    "util_pct", "mem_util_pct", "mem_used_bytes", "power_w", "sm_clock_mhz", "temp_c",
};

const char *prof__rec_res_metric_name(int code, int gpu, char *buf, size_t n) {
  if (code > 0 && code < PROF_RES_NPROC) return proc_names[code];
  if (code < PROF_RES_GPU_UTIL || code >= PROF_RES_GPU_END || gpu < 0 || gpu >= PROF_RES_MAX_GPUS) return NULL;
  snprintf(buf, n, "res.gpu%d.%s", gpu, gpu_names[code - PROF_RES_GPU_UTIL]);
  return buf;
}

int prof__rec_res_metric_is_rate(int code) {
  return code > 0 && code < PROF_RES_NPROC && code != PROF_RES_LOAD1 && code != PROF_RES_RSS;
}

void prof__rec_res_chunk_encode(prof__buf *b, uint64_t ts_ns, uint64_t window_ns, uint32_t nthreads,
                            const prof__res_thread *t, int n) {
  prof__buf_u8(b, PROF_RES_CHUNK_VERSION);
  prof__buf_varint(b, ts_ns);
  prof__buf_varint(b, window_ns);
  prof__buf_varint(b, nthreads);
  prof__buf_varint(b, (uint64_t)n);
  for (int i = 0; i < n; i++) {
    prof__buf_varint(b, t[i].tid);
    prof__buf_str(b, t[i].comm, strnlen(t[i].comm, 16));
    prof__buf_varint(b, t[i].cpu_ns);
    prof__buf_varint(b, t[i].total_ns);
  }
}

int prof__rec_res_chunk_decode(const uint8_t *p, size_t len, uint64_t *ts_ns, uint64_t *window_ns,
                           uint32_t *nthreads, prof__res_thread *t, int max) {
  prof__cur c = {p, p + len, 0};
  if (!p || prof__cur_u8(&c) != PROF_RES_CHUNK_VERSION) return -1;
  *ts_ns = prof__cur_varint(&c);
  *window_ns = prof__cur_varint(&c);
  uint64_t nt = prof__cur_varint(&c), n = prof__cur_varint(&c);
  if (c.bad || nt > UINT32_MAX || n > PROF_RES_MAX_SCAN) return -1;
  *nthreads = (uint32_t)nt;
  int kept = 0;
  for (uint64_t i = 0; i < n && !c.bad; i++) {
    prof__res_thread r;
    memset(&r, 0, sizeof r);
    uint64_t tid = prof__cur_varint(&c);
    size_t cl = 0;
    const char *comm = prof__cur_str(&c, &cl);
    r.cpu_ns = prof__cur_varint(&c);
    r.total_ns = prof__cur_varint(&c);
    if (c.bad || !comm || tid > UINT32_MAX) return -1;
    r.tid = (uint32_t)tid;
    memcpy(r.comm, comm, cl > 16 ? 16 : cl);
    if (kept < max) t[kept++] = r;
  }
  return c.bad || c.p != c.end ? -1 : kept;
}
