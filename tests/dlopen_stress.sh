#!/bin/sh
# dlopen_stress.sh — a program that dlopens many of the system's shared
# libraries from its main thread while profiling starts (dlopen_stress.c)
# must behave as bare under `mlprof run`, every time: the profiler may not
# initialise a dependency that is unsafe beside the loader on one of its
# own threads. The race shows only sometimes, so it runs many times.
#
# usage: dlopen_stress.sh MLPROF LIBMLPROF_SO DLOPEN_STRESS TMP_DIR
# MLPROF_DLOPEN_REPEAT=N sets the number of profiled runs (default 30).
set -u
if [ $# -ne 4 ]; then
  echo "usage: dlopen_stress.sh MLPROF LIBMLPROF_SO DLOPEN_STRESS TMP_DIR" >&2
  exit 2
fi
MLPROF=$1
LIB=$2
PROG=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/dlopen_stress.XXXXXX") || exit 2
REPEAT=${MLPROF_DLOPEN_REPEAT:-30}
unset MLPROF_OUTPUT MLPROF_SAMPLE_HZ MLPROF_MODULES LD_PRELOAD
ulimit -c 0 2>/dev/null

if ! "$PROG" list "$WORK/libs" 150 >/dev/null 2>&1; then
  echo "dlopen_stress: no loadable shared libraries found; skipped"
  exit 77
fi
"$PROG" keep "$WORK/libs" >"$WORK/bare.out" 2>/dev/null
bare=$?
echo "dlopen_stress: $(wc -l <"$WORK/libs") libraries, bare exit $bare"
FAILS=0
i=0
while [ $i -lt "$REPEAT" ]; do
  i=$((i + 1))
  mkdir -p "$WORK/t$i"
  timeout 120 "$MLPROF" run -q --no-report --library "$LIB" -o "$WORK/t$i" -- \
    "$PROG" keep "$WORK/libs" >"$WORK/run$i.out" 2>"$WORK/run$i.err"
  st=$?
  if [ $st != $bare ] || ! cmp -s "$WORK/bare.out" "$WORK/run$i.out"; then
    echo "dlopen_stress: FAIL run $i: exit $st (bare $bare)"
    tail -5 "$WORK/run$i.err"
    FAILS=$((FAILS + 1))
  fi
done
if [ $FAILS -ne 0 ]; then
  echo "dlopen_stress: $FAILS of $REPEAT runs differ from the bare run"
  exit 1
fi
echo "dlopen_stress: $REPEAT runs as bare"
rm -rf "$WORK"
exit 0
