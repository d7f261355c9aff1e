#!/bin/sh
# long_runs.sh — bounded traces (MLPROF_MAX_MB, docs/long-runs.md): a
# 60 000-step run with MLPROF_MAX_MB=1 leaves a trace of at most 1 MiB that
# decodes clean and whose report counts all 60 000 steps (JSON and text)
# and gives each, the summarised ones too, its CPU time and memory peaks,
# consistent with the steps of the detail window;
# a bounded run killed with SIGKILL leaves a readable trace.
# Usage: long_runs.sh MLPROF_CLI PROGS_DIR WORK_DIR
set -u
cli=$1 progs=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

t=$work/bounded.mlpt
# A ring that holds the whole run (16 MiB, about 500 000 events): a writer
# kept off the CPU for long (ThreadSanitizer on a loaded machine) would
# otherwise drop events, steps among them, which the report then counts as
# lost rather than as steps.
MLPROF_RING_KB=16384 MLPROF_REPORT=0 MLPROF_MAX_MB=1 MLPROF_OUTPUT=$t "$progs/long_steps" 60000 ||
  fail "the program failed"
size=$(wc -c < "$t")
[ "$size" -le 1048576 ] || fail "trace is $size bytes, above 1 MiB"
"$cli" info "$t" > "$work/info.txt" || fail "mlprof info: $(cat "$work/info.txt")"
grep -q "complete (footer present)" "$work/info.txt" || fail "trace not complete"
"$cli" report "$t" -f json -o "$work/r.json" > /dev/null 2>&1 || fail "report failed"
grep -q '"count": *60000' "$work/r.json" || grep -q '"count":60000' "$work/r.json" || fail "JSON step count is not 60000"
grep -q '"steps_summary_only": *[1-9]' "$work/r.json" || fail "no step known from summaries only: nothing was bounded"
"$cli" report "$t" -f text > "$work/r.txt" 2>&1 || fail "text report failed"
grep -q "all  *60000 steps" "$work/r.txt" || fail "text report does not count 60000 steps"
grep -q "bounded trace" "$work/r.txt" || fail "text report does not say the trace was bounded"
# CPU time and memory of every step, the summarised ones too.
grep -q "step thread CPU: .* known for 60000 of 60000 steps" "$work/r.txt" || fail "text report lacks the CPU time of every step"
grep -q "peak RSS during a step: .* known for 60000 of 60000 steps" "$work/r.txt" || fail "text report lacks the RSS of every step"
if command -v python3 > /dev/null 2>&1; then
  python3 - "$work/r.json" <<'PY' || fail "per-step CPU time or memory missing or inconsistent (above)"
import json, sys
r = json.load(open(sys.argv[1]))
st = r["steps"]
ps = st["per_step"]
def find(o, key):
    if isinstance(o, dict):
        if key in o: return o[key]
        for v in o.values():
            x = find(v, key)
            if x is not None: return x
    return None
n_sum = find(r, "steps_summary_only")
assert n_sum and 0 < n_sum < len(ps), n_sum
# the live heap needs the allocator interposer (not under sanitizers): all or none
keys = ("cpu_ns", "rss_peak_bytes") + (("live_peak_bytes",) if any("live_peak_bytes" in p for p in ps) else ())
bad = [p["number"] for p in ps if not all(k in p for k in keys)]
lost = find(r, "lost_events")
assert not bad, "%d steps without CPU time or memory (%d events lost), first %s: %s" % (
    len(bad), lost or 0, bad[:5], [sorted(p.keys()) for p in ps if p["number"] == bad[0]])
# one thread: the summarised steps come first (by begin), the window's after
ps.sort(key=lambda p: p["begin_ns"])
summ, det = ps[:n_sum], ps[n_sum:]
# a thread runs at most as long as the step (2 us: microsecond rounding)
over = [p["number"] for p in ps if p["cpu_ns"] > p["duration_ns"] + 2000]
assert not over, "CPU time above the step's length: %s" % over[:5]
med = lambda xs: sorted(xs)[len(xs) // 2]
cs, cd = med([p["cpu_ns"] for p in summ]), med([p["cpu_ns"] for p in det])
# the same work per step (same random lengths) in both parts of the run
assert cd / 3 <= cs <= cd * 3, "median CPU per step: summarised %d ns, detail %d ns" % (cs, cd)
rs = [p["rss_peak_bytes"] for p in summ]
rd = [p["rss_peak_bytes"] for p in det]
assert min(rs) > 0 and max(rs) <= 2 * max(rd) and min(rd) <= 2 * max(rs), (min(rs), max(rs), min(rd), max(rd))
m = st["memory"]
assert m["rss_steps"] == len(ps) and m["peak_rss_bytes"] == max(rs + rd), m
c = st["cpu"]
assert c["steps"] == len(ps) and 0 < c["share"] <= 1.01, c
mr = r["memory"]["run"]  # the memory section's whole-run peaks of a bounded trace
assert mr["rss_steps"] == len(ps) and mr["rss_peak_bytes"] == m["peak_rss_bytes"], mr
print("per-step CPU and memory: %d steps (%d summarised), median CPU %d / %d ns, peak RSS %d"
      % (len(ps), n_sum, cs, cd, m["peak_rss_bytes"]))
PY
fi
echo "bounded: $size bytes, 60000 steps"

# SIGKILL in the middle of a bounded run: the trace stays readable.
k=$work/killed.mlpt
MLPROF_REPORT=0 MLPROF_MAX_MB=1 MLPROF_OUTPUT=$k "$progs/long_steps" 1000000 60000 > "$work/ready" &
pid=$!
i=0
while ! grep -q ready "$work/ready" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 600 ] || { kill -KILL $pid; fail "the program never got ready"; }
  sleep 0.1
done
sleep 0.5
kill -KILL $pid
wait $pid 2>/dev/null
size=$(wc -c < "$k")
[ "$size" -le 1048576 ] || fail "killed trace is $size bytes, above 1 MiB"
"$cli" info "$k" > "$work/kinfo.txt" 2>&1 || fail "killed trace unreadable: $(cat "$work/kinfo.txt")"
grep -qi "truncated" "$work/kinfo.txt" || fail "killed trace not reported as truncated"
"$cli" report "$k" -f json -o "$work/k.json" > /dev/null 2>&1 # a truncated trace has an exit status of its own
[ -s "$work/k.json" ] || fail "no report of the killed trace"
n=$(sed -n 's/.*"steps_summary_only": *\([0-9]*\).*/\1/p' "$work/k.json" | head -1)
[ "${n:-0}" -gt 0 ] || fail "the killed trace holds no step summaries"
echo "killed: $size bytes, readable"

# `mlprof run --max-mb N` bounds the program's trace as MLPROF_MAX_MB does;
# a bad value is refused before the program runs. (Left out in sanitizer
# builds: their runtime would have to come before the preloaded library.)
lib=$(dirname "$cli")/libmlprof.so
if ldd "$lib" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  echo "run --max-mb: skipped (sanitizer build)"
else
  r=$work/run.mlpt
  "$cli" run -q --no-report --max-mb 1 -o "$r" -- "$progs/long_steps" 60000 > /dev/null 2>&1 ||
    fail "mlprof run --max-mb 1 failed"
  size=$(wc -c < "$r")
  [ "$size" -le 1048576 ] || fail "mlprof run --max-mb 1: trace is $size bytes, above 1 MiB"
  "$cli" report "$r" -f json -o "$work/run.json" > /dev/null 2>&1 || fail "report of the run's trace failed"
  grep -q '"steps_summary_only": *[1-9]' "$work/run.json" || fail "mlprof run --max-mb 1: nothing was bounded"
  if "$cli" run -q --no-report --max-mb 0 -- "$progs/long_steps" 1 > /dev/null 2> "$work/bad.txt"; then
    fail "--max-mb 0 was accepted"
  fi
  grep -q -- "--max-mb wants a whole number" "$work/bad.txt" || fail "--max-mb 0: $(cat "$work/bad.txt")"
  echo "run --max-mb: $size bytes"
fi
echo "PASS"
