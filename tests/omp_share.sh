#!/bin/sh
# omp_share.sh — CPU samples agree with the program's own thread clocks
# under contention.
#
# omp_share runs two OpenMP threads (libgomp's spinning wait) and measures
# on each thread's CPU-time clock the share of its threads' CPU that
# kernel_par and kernel_ser hold: that is the referee. It runs under
# `mlprof run` at 999 Hz, pinned to two CPUs with a busy loop on one of
# them, the contention under which CPU-time timers (which fire at
# scheduler ticks) gave kernel_par 16-23 % of the samples for 32 % of the
# CPU. With the perf clock sampler each kernel's share of the samples must
# be within TOLERANCE points of its share by the thread clocks. Skipped (77)
# when the kernel refuses perf events (the report's cpu.sampler is "timer").
#
# usage: omp_share.sh MLPROF LIBMLPROF_SO OMP_SHARE TMP_DIR
set -u
MLPROF=$1
LIB=$2
PROG=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/omp_share.XXXXXX") || exit 2
TOLERANCE=5
unset MLPROF_OUTPUT MLPROF_MODULES LD_PRELOAD MLPROF_SAMPLER MLPROF_SAMPLE_MODE OMP_WAIT_POLICY GOMP_SPINCOUNT
MLPROF_SAMPLE_HZ=999
export MLPROF_SAMPLE_HZ
HOG=
cleanup() { [ -n "$HOG" ] && kill "$HOG" 2>/dev/null; }
trap cleanup EXIT

PIN=
HOG_PIN=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
  PIN="taskset -c 0,1"
  HOG_PIN="taskset -c 0"
fi
$HOG_PIN sh -c 'while :; do :; done' &
HOG=$!

$PIN "$MLPROF" run -q --library "$LIB" -o "$WORK/omp.mlpt" -- "$PROG" 200 1500000 1500000 >"$WORK/out" 2>"$WORK/err" ||
  { echo "omp_share: FAIL mlprof run: $(cat "$WORK/err")"; exit 1; }
kill "$HOG" 2>/dev/null
HOG=
"$MLPROF" report --format json -o "$WORK/report.json" "$WORK/omp.mlpt" >/dev/null 2>&1 ||
  { echo "omp_share: FAIL report json"; exit 1; }

python3 - "$WORK/out" "$WORK/report.json" "$TOLERANCE" <<'PY'
import json, sys
out, path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
ref = dict((l.split()[0], float(l.split()[1])) for l in open(out) if l.strip())
r = json.load(open(path))
header = r["trace"]["header"]
fn = r["functions"]
print("omp_share: sampler %s, %d samples, effective %.0f samples/s per busy thread" %
      (header.get("cpu.sampler"), fn["samples"], fn.get("effective_hz", 0)))
if header.get("cpu.sampler") != "perf":
    print("omp_share: SKIP the CPU sampler is %r (%s)" % (header.get("cpu.sampler"), header.get("cpu.sampler_why_timer")))
    sys.exit(77)
top = {f["name"]: f["self_pct"] for f in fn["top_self"]}
bad = 0
for k in ("kernel_par", "kernel_ser"):
    got = top.get(k, 0.0)
    ok = abs(got - ref[k]) <= tol
    print("omp_share: %s holds %.1f%% of the threads' CPU by their clocks, %.1f%% of the samples%s" %
          (k, ref[k], got, "" if ok else "  <- FAIL"))
    bad += not ok
sys.exit(1 if bad else 0)
PY
rc=$?
if [ $rc -eq 0 ]; then rm -rf "$WORK"; else echo "omp_share: files in $WORK"; fi
exit $rc
