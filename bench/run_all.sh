#!/usr/bin/env bash
# run_all.sh — run every mlprof benchmark built in a build's bench folder:
# the core ones first, then any other bench_* program (feature benchmarks).
#   bench/run_all.sh [BUILD_BENCH_DIR]   (default: build/bench)
# Extra options for bench_analyze can be given in BENCH_ANALYZE_ARGS.
# Never fails: a benchmark that exits non-zero is reported and skipped.
set -u
dir=${1:-build/bench}
core=(bench_range bench_throughput bench_bytes bench_analyze)
run() {
  local b=$1
  echo "== $b"
  if [ "$b" = bench_analyze ]; then
    # shellcheck disable=SC2086
    "$dir/$b" ${BENCH_ANALYZE_ARGS:-} || echo "$b exited with status $?"
  else
    "$dir/$b" || echo "$b exited with status $?"
  fi
}
for b in "${core[@]}"; do
  if [ -x "$dir/$b" ]; then run "$b"; else echo "== $b: not built"; fi
done
for path in "$dir"/bench_*; do
  b=$(basename "$path")
  if [ ! -f "$path" ] || [ ! -x "$path" ]; then continue; fi
  case " ${core[*]} " in *" $b "*) continue ;; esac
  run "$b"
done
exit 0
