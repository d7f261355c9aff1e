#!/usr/bin/env bash
# run_all.sh — run every mlprof benchmark found in a build's bench folder.
#   bench/run_all.sh [BUILD_BENCH_DIR]   (default: build/bench)
# Extra options for bench_analyze can be given in BENCH_ANALYZE_ARGS.
set -u
dir=${1:-build/bench}
for b in bench_range bench_throughput bench_bytes bench_analyze; do
  if [ -x "$dir/$b" ]; then
    echo "== $b"
    if [ "$b" = bench_analyze ]; then
      # shellcheck disable=SC2086
      "$dir/$b" ${BENCH_ANALYZE_ARGS:-} || echo "$b exited with status $?"
    else
      "$dir/$b" || echo "$b exited with status $?"
    fi
  else
    echo "== $b: not built"
  fi
done
exit 0
