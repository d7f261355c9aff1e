/* header.c — the header of every trace the session writes (header.h): its
 * own trace and its capture segments. The pairs are documented in
 * docs/trace-format.md; the modules add theirs (producer.h).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "header.h"
#include "modules.h"
#include "rank.h"
#include "session.h"
#include "session_core.h"
#include "trace/tracename.h"
#include "tracepath.h"

/* The command line, arguments joined by spaces, cut to n - 1 bytes. */
static void read_cmdline(char *out, size_t n) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  size_t len = 0;
  while (fd >= 0 && len < n - 1) {
    ssize_t got = read(fd, out + len, n - 1 - len);
    if (got <= 0) break;
    len += (size_t)got;
  }
  if (fd >= 0) close(fd);
  for (size_t i = 0; i + 1 < len; i++)
    if (out[i] == 0) out[i] = ' ';
  out[len] = 0;
}

prof__tw *prof__header_open(char *path, size_t path_n, int own, char *err) {
  const prof__cfg *cfg = prof__session_cfg();
  if (own && cfg->out_err[0]) { /* the output folder was refused */
    snprintf(err, PROF_ERR_MAX, "%s", cfg->out_err);
    return NULL;
  }
  char prev[PATH_MAX] = "";
  if (own) prof__prev_trace(prev, sizeof prev);
  char pid[24], rt[32], mono[32], tsc0[32], ring[24], host[256] = "", cmd[2048];
  struct utsname u;
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  snprintf(rt, sizeof rt, "%llu", (unsigned long long)prof__clk.realtime0);
  snprintf(mono, sizeof mono, "%llu", (unsigned long long)prof__clk.mono0);
  snprintf(tsc0, sizeof tsc0, "%llu", (unsigned long long)prof__clk.tsc0);
  snprintf(ring, sizeof ring, "%u", cfg->ring_kb);
  if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  read_cmdline(cmd, sizeof cmd);
  if (uname(&u) != 0) memset(&u, 0, sizeof u);
  char os[200];
  snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
  prof__rank rk;
  char rank[24], lrank[24], wsize[24];
  prof__rank_detect(&rk);
  snprintf(rank, sizeof rank, "%ld", rk.rank);
  snprintf(lrank, sizeof lrank, "%ld", rk.local_rank);
  snprintf(wsize, sizeof wsize, "%ld", rk.world_size);
  prof__kv kv[] = {
      {"rank", rank},
      {"local_rank", lrank},
      {"world_size", wsize},
      {"rank_source", rk.source},
      {"program", prof__program_name()},
      {"pid", pid},
      {"cmdline", cmd},
      {"hostname", host},
      {"os", os},
      {"version", MLPROF_VERSION_STRING},
      {"clock", __atomic_load_n(&prof__clk.use_tsc, __ATOMIC_RELAXED) ? "tsc" : "monotonic"},
      {"clock.tsc0", tsc0},
      {"start_mono_ns", mono},
      {"start_realtime_ns", rt},
      {"ring_kb", ring},
      {"previous_trace", prev},
  };
  enum { BASE = sizeof kv / sizeof kv[0], MAX = BASE + 64 };
  prof__kv all[MAX];
  memcpy(all, kv, sizeof kv);
  size_t n = BASE - !prev[0]; /* previous_trace only when there is one */
  n += prof__modules_header(all + n, MAX - n);
  prof__tw *tw = prof__trace_create_free(path, path_n, all, n, err);
  if (tw && own) prof__prev_trace_set(path);
  return tw;
}
