/* config.c — the effective configuration: prof_config fields merged with
 * the MLPROF_* environment, and the trace path chosen from them by the
 * naming rule of trace/tracename.h.
 *
 * The recorder reads every MLPROF_* value with prof__env (trace/settings.h)
 * and checks it here or with the helpers below: a value out of range or not
 * understood is ignored with one message naming the variable, the value and
 * what is expected, and the default applies. Switches take 1/true/yes/on or
 * 0/false/no/off (any case), nothing else. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "rank.h"
#include "trace/tracename.h"

/* 1 the first time (name, value) is reported in this process, else 0: the
 * module headers are read again for every capture file of a schedule, and a
 * bad value is said once. Up to 32 values are remembered (hashes of
 * "name=value"); past that a message may repeat. Lock-free. */
static int first_report(const char *name, const char *v) {
  static uint64_t said[32];
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h = (h ^ '=') * 1099511628211ull;
  for (const char *p = v; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h |= 1; /* 0 marks a free slot */
  for (int i = 0; i < 32; i++) {
    uint64_t cur = 0;
    if (__atomic_compare_exchange_n(&said[i], &cur, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
    if (cur == h) return 0;
  }
  return 1;
}

void prof__env_ignored(const char *name, const char *v, const char *expected, const char *instead) {
  if (first_report(name, v))
    fprintf(stderr, "mlprof: ignoring MLPROF_%s='%s' (expected %s); %s\n", name, v, expected, instead);
}

/* strtol of the whole text: 0, or -1 when it is not a decimal long. */
static int whole_long(const char *v, long *x) {
  char *end;
  errno = 0;
  *x = strtol(v, &end, 10);
  return errno || end == v || *end ? -1 : 0;
}

long prof__env_long(const char *name, long dflt, long lo, long hi) {
  const char *v = prof__env(name);
  long x;
  if (!v) return dflt;
  if (whole_long(v, &x) != 0 || x < lo || x > hi) {
    char expected[64], instead[40];
    snprintf(expected, sizeof expected, "%ld..%ld", lo, hi);
    snprintf(instead, sizeof instead, "using %ld", dflt);
    prof__env_ignored(name, v, expected, instead);
    return dflt;
  }
  return x;
}

long prof__env_long_capped(const char *name, long dflt, long lo, long hi, const char *why) {
  const char *v = prof__env(name);
  long x;
  if (v && whole_long(v, &x) == 0 && x > hi) {
    if (first_report(name, v))
      fprintf(stderr, "mlprof: MLPROF_%s='%s' is above the maximum %ld (%s); using %ld\n", name, v, hi, why, hi);
    return hi;
  }
  return prof__env_long(name, dflt, lo, hi);
}

int prof__env_flag(const char *name, int dflt) {
  const char *v = prof__env(name);
  if (!v) return dflt;
  int f = prof__flag_parse(v);
  if (f < 0) {
    prof__env_ignored(name, v, "1/true/yes/on or 0/false/no/off", dflt ? "using 1" : "using 0");
    return dflt;
  }
  return f;
}

int prof__env_choice(const char *name, const char *const *choices, int n, int dflt) {
  const char *v = prof__env(name);
  if (!v) return dflt;
  for (int i = 0; i < n; i++)
    if (strcmp(v, choices[i]) == 0) return i;
  char list[256] = "one of ", instead[80];
  for (int i = 0; i < n; i++) {
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
  }
  snprintf(instead, sizeof instead, "using %s", choices[dflt]);
  prof__env_ignored(name, v, list, instead);
  return dflt;
}

PROF_API prof_config prof_config_default(void) {
  prof_config c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  c.report = -1;
  return c;
}

const char *prof__program_name(void) {
  extern char *program_invocation_short_name;
  return program_invocation_short_name && *program_invocation_short_name
             ? program_invocation_short_name
             : "program";
}

/* The default file name (trace/tracename.h), with the host and rank when a
 * launcher told us the rank. */
static void default_name(char *out, size_t n) {
  prof__rank r;
  prof__rank_detect(&r);
  char host[128] = "host";
  if (r.known) {
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = 0;
  }
  prof__trace_default_name(out, n, prof__program_name(), r.known ? host : NULL, r.rank, (long)getpid());
}

int prof__sched_parse(const char *s, prof__sched *out) {
  static const char *const keys[] = {"skip_first", "wait", "warmup", "active", "repeat"};
  uint64_t v[5] = {0, 0, 0, 1, 0};
  if (!s) return PROF_EINVAL;
  while (*s) {
    size_t klen = strcspn(s, "=");
    int k = -1;
    for (int i = 0; i < 5; i++)
      if (strlen(keys[i]) == klen && strncmp(s, keys[i], klen) == 0) k = i;
    if (k < 0 || s[klen] != '=') return PROF_EINVAL;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s + klen + 1, &end, 10);
    if (errno || end == s + klen + 1 || (*end && (*end != ',' || !end[1])) || s[klen + 1] == '-')
      return PROF_EINVAL;
    v[k] = x;
    s = *end ? end + 1 : end;
  }
  if (v[3] == 0) return PROF_EINVAL;
  /* The cycle (wait + warmup + active) and the first step past the last
   * cycle must be representable: a wrapped length would divide by zero. */
  if (v[1] > UINT64_MAX - v[2] || v[3] > UINT64_MAX - v[1] - v[2]) return PROF_EINVAL;
  out->on = 1;
  out->skip_first = v[0];
  out->wait = v[1];
  out->warmup = v[2];
  out->active = v[3];
  out->repeat = v[4];
  return 0;
}

static int resolve_schedule(const char *field, prof__sched *out) {
  memset(out, 0, sizeof *out);
  if (field) return *field ? prof__sched_parse(field, out) : 0;
  const char *env = prof__env("SCHEDULE");
  if (env && prof__sched_parse(env, out) != 0) {
    fprintf(stderr, "mlprof: ignoring MLPROF_SCHEDULE='%s' (expected skip_first=N,wait=N,warmup=N,active=N,repeat=N "
            "with active >= 1 and wait+warmup+active < 2^64); recording every step\n", env);
    memset(out, 0, sizeof *out);
  }
  return 0;
}

int prof__config_resolve(const prof_config *cfg, prof__cfg *out) {
  prof_config c = prof_config_default();
  if (cfg) {
    if (cfg->size < offsetof(prof_config, ring_kb) || cfg->size > 4096) return PROF_EINVAL;
    memcpy(&c, cfg, cfg->size < sizeof c ? cfg->size : sizeof c);
    c.size = sizeof c;
  }
  memset(out, 0, sizeof *out);
  out->disable = c.disable || prof__env_flag("DISABLE", 0);
  out->ring_kb = c.ring_kb ? c.ring_kb : (uint32_t)prof__env_long("RING_KB", 1024, 4, 1 << 20);
  out->flush_ms = c.flush_ms ? c.flush_ms : (uint32_t)prof__env_long("FLUSH_MS", 10, 1, 10000);
  out->report = c.report >= 0 ? c.report : prof__env_flag("REPORT", 1);
  static const char *const clocks[] = {"auto", "tsc", "monotonic"};
  out->force_monotonic = prof__env_choice("CLOCK", clocks, 3, 0) == 2;
  char name[256];
  default_name(name, sizeof name);
  const char *output = c.output ? c.output : prof__env("OUTPUT");
  if (prof__trace_output_path(out->path, sizeof out->path, output, name, out->out_err) != 0)
    out->path[0] = 0; /* refused: no trace (out_err says why) */
  const char *sched = cfg && cfg->size <= offsetof(prof_config, schedule) ? NULL : c.schedule;
  return resolve_schedule(sched, &out->sched);
}
