#!/bin/sh
# trace_names.sh — every image and every session keeps a trace of its own,
# each report names the trace before it, output folders are the user's own
# and reports are private (docs/host-safety.md):
#   - a program that execs itself 3 times (preloaded, MLPROF_OUTPUT naming a
#     file): 4 readable traces, x.mlpt then x.1..x.3.mlpt, each naming the
#     one before it as previous_trace (JSON report and text report);
#   - the same under `mlprof run -o DIR/`: 4 traces, the launcher reports
#     the last one;
#   - one process that loads and unloads libmlprof 3 times with one
#     MLPROF_OUTPUT file: 3 traces, chained;
#   - `mlprof run -o FILE` twice: the first trace stays as it was, the second
#     run gets its own trace and report;
#   - `mlprof run -o DIR/` twice in fresh pid namespaces (the same pid each
#     time, as in containers): two traces (skipped without unshare);
#   - as root: a folder owned by another user (nobody) at the trace path,
#     named as a file, a folder, or through another user's symlink, is
#     refused with one message, nothing is written in it and the program
#     runs as bare (skipped when not root);
#   - report files, exports and `mlprof report -o` files are created 0600.
#
# usage: trace_names.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR
set -u
if [ $# -ne 4 ]; then
  echo "usage: trace_names.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR" >&2
  exit 2
fi
MLPROF=$1
LIB=$2
PROGS=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/names.XXXXXX") || exit 2
WORK=$(cd "$WORK" && pwd -P)
chmod 755 "$WORK"
LC_ALL=C
export LC_ALL
umask 022 # files are private by their creation mode, not by the umask
unset MLPROF_OUTPUT MLPROF_TRIGGER_SIGNAL MLPROF_MODULES LD_PRELOAD MLPROF_PRELOAD MLPROF_RUN_PID MLPROF_PREV_TRACE
MLPROF_LIVE_DIR=$WORK/live
export MLPROF_LIVE_DIR
mkdir -p "$MLPROF_LIVE_DIR"
MLPROF_SAMPLE_HZ=0
export MLPROF_SAMPLE_HZ
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS
if ldd "$LIB" 2>/dev/null | grep -q libtsan; then
  echo "trace_names: skipped under ThreadSanitizer (a preloaded TSan library must come first in programs built without it)"
  exit 77
fi
ASAN_RT=$(ldd "$LIB" 2>/dev/null | awk '/libasan/ {print $3}')
PRE=$LIB
[ -n "$ASAN_RT" ] && PRE=$ASAN_RT:$LIB
# `mlprof run` preloads the library first, where the ASan runtime must be:
# under ASan the launcher's checks are left to the plain build.
RUN=1
if [ -n "$ASAN_RT" ]; then
  RUN=0
  echo "trace_names: ASan build; the mlprof run checks are skipped (the plain build runs them)"
fi
FAILS=0

fail() {
  echo "trace_names: FAIL $*"
  FAILS=$((FAILS + 1))
}

# readable TRACE: `mlprof info` reads it (an image that exec'd leaves its
# trace without a footer, readable up to its last flush).
readable() {
  "$MLPROF" info "$1" >"$1.info" 2>&1 && grep -q '^state: ' "$1.info"
}

# prev TRACE: the previous_trace of its JSON report ("null" when none).
prev() {
  "$MLPROF" report -q -f json "$1" 2>/dev/null | tr ',' '\n' |
    sed -n 's/^ *"previous_trace": *\(null\|"\(.*\)"\)$/\1/p' | head -1 | sed 's/^"\(.*\)"$/\1/'
}

# mode FILE: its permission bits in octal.
mode() { stat -c %a "$1"; }

# chain DESC T0 T1 ...: each trace readable, the first without a
# predecessor, each later one naming the one before it (JSON and text).
chain() {
  desc=$1
  shift
  before=null
  for t in "$@"; do
    if [ ! -f "$t" ]; then
      fail "$desc: no trace $t ($(ls "$(dirname "$t")" | tr '\n' ' '))"
      return
    fi
    readable "$t" || fail "$desc: $t unreadable: $(head -3 "$t.info")"
    p=$(prev "$t")
    [ "$p" = "$before" ] || fail "$desc: $t: previous_trace '$p', expected '$before'"
    if [ "$before" != null ]; then
      "$MLPROF" report -q "$t" 2>/dev/null | grep -q "^previous trace: $before " ||
        fail "$desc: the text report of $t does not name $before"
    fi
    before=$t
  done
}

# ---- an image that execs itself, preloaded, MLPROF_OUTPUT naming a file ------------------
D=$WORK/exec_file
mkdir -p "$D"
MLPROF_REPORT=0 MLPROF_PRELOAD=1 LD_PRELOAD=$PRE MLPROF_OUTPUT=$D/es.mlpt \
  "$PROGS/exec_self" 3 >"$D/out.txt" 2>"$D/err.txt"
rc=$?
[ $rc -eq 3 ] || fail "exec_self (file): exit $rc, expected 3: $(cat "$D/err.txt")"
[ "$(grep -c '^image' "$D/out.txt")" -eq 4 ] || fail "exec_self (file): $(cat "$D/out.txt")"
n=$(ls "$D" | grep -c '\.mlpt$')
[ "$n" -eq 4 ] || fail "exec_self (file): $n traces, expected 4: $(ls "$D" | tr '\n' ' ')"
chain "exec_self (file)" "$D/es.mlpt" "$D/es.1.mlpt" "$D/es.2.mlpt" "$D/es.3.mlpt"
for t in "$D"/*.mlpt; do
  [ "$(mode "$t")" = 600 ] || fail "exec_self (file): $t has mode $(mode "$t")"
done

# ---- the same under `mlprof run -o DIR/` ---------------------------------------------------
run_exec_self() {
  D=$WORK/exec_run
  "$MLPROF" run --library "$LIB" -o "$D/" -- "$PROGS/exec_self" 3 >"$D.out" 2>"$D.err"
  rc=$?
  [ $rc -eq 3 ] || fail "exec_self (run): exit $rc, expected 3: $(cat "$D.err")"
  first=$(ls "$D" 2>/dev/null | grep '^exec_self\.[0-9]*\.mlpt$' | head -1)
  if [ -z "$first" ]; then
    fail "exec_self (run): no trace: $(ls "$D" 2>/dev/null | tr '\n' ' ')"
    return
  fi
  s=$D/${first%.mlpt}
  n=$(ls "$D" | grep -c '\.mlpt$')
  [ "$n" -eq 4 ] || fail "exec_self (run): $n traces, expected 4: $(ls "$D" | tr '\n' ' ')"
  chain "exec_self (run)" "$s.mlpt" "$s.1.mlpt" "$s.2.mlpt" "$s.3.mlpt"
  grep -q "^mlprof: trace $s.3.mlpt\$" "$D.err" || fail "exec_self (run): the launcher did not report the last trace: $(cat "$D.err")"
  for f in "$s.3.mlpt.report.txt" "$s.3.mlpt.report.json" "$s.3.mlpt.report.html"; do
    if [ -f "$f" ]; then
      [ "$(mode "$f")" = 600 ] || fail "report $f has mode $(mode "$f"), expected 600"
    else
      fail "exec_self (run): no report $f"
    fi
  done
}
[ $RUN = 1 ] && run_exec_self

# ---- libmlprof loaded and unloaded 3 times in one process ----------------------------------
D=$WORK/dlopen
mkdir -p "$D"
LD_PRELOAD=$ASAN_RT MLPROF_REPORT=0 MLPROF_OUTPUT=$D/dl.mlpt "$PROGS/dlopen_cycles" "$LIB" 3 >"$D/out.txt" 2>"$D/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "dlopen_cycles: exit $rc: $(cat "$D/out.txt" "$D/err.txt")"
n=$(ls "$D" | grep -c '\.mlpt$')
[ "$n" -eq 3 ] || fail "dlopen_cycles: $n traces, expected 3: $(ls "$D" | tr '\n' ' ')"
chain "dlopen_cycles" "$D/dl.mlpt" "$D/dl.1.mlpt" "$D/dl.2.mlpt"

# ---- `mlprof run -o FILE` twice ------------------------------------------------------------
run_twice() {
  D=$WORK/run_twice
  mkdir -p "$D"
  "$MLPROF" run -q --library "$LIB" -o "$D/r.mlpt" -- "$PROGS/exec_self" 0 >/dev/null 2>"$D/err1.txt"
  sum1=$(cksum <"$D/r.mlpt" 2>/dev/null)
  "$MLPROF" run --library "$LIB" -o "$D/r.mlpt" -- "$PROGS/exec_self" 0 >/dev/null 2>"$D/err2.txt"
  [ "$(cksum <"$D/r.mlpt" 2>/dev/null)" = "$sum1" ] || fail "run -o FILE twice: the first trace was changed"
  for t in "$D/r.mlpt" "$D/r.1.mlpt"; do
    readable "$t" || fail "run -o FILE twice: $t missing or unreadable ($(ls "$D" | tr '\n' ' '))"
  done
  grep -q "^mlprof: trace $D/r.1.mlpt\$" "$D/err2.txt" || fail "run -o FILE twice: second run reported: $(cat "$D/err2.txt")"
  [ -f "$D/r.1.mlpt.report.json" ] || fail "run -o FILE twice: no report for the second trace: $(ls "$D" | tr '\n' ' ')"
  # the second trace is the second run's (previous_trace: none, another process)
  [ "$(prev "$D/r.1.mlpt")" = null ] || fail "run -o FILE twice: the second run names a predecessor"
}
[ $RUN = 1 ] && run_twice

# ---- `mlprof run -o DIR/` twice with the same pid (fresh pid namespaces) ------------------------
D=$WORK/ns
mkdir -p "$D"
NS=""
if unshare -pf --mount-proc true 2>/dev/null; then NS="unshare -pf --mount-proc"
elif unshare -Urpf --mount-proc true 2>/dev/null; then NS="unshare -Urpf --mount-proc"
fi
if [ -z "$NS" ]; then
  echo "trace_names: pid namespaces unavailable (unshare); the same-pid run -o DIR/ check is skipped"
elif [ $RUN = 1 ]; then
  $NS "$MLPROF" run -q --library "$LIB" -o "$D/out/" -- "$PROGS/exec_self" 0 >/dev/null 2>"$D/err1.txt"
  $NS "$MLPROF" run -q --library "$LIB" -o "$D/out/" -- "$PROGS/exec_self" 0 >/dev/null 2>"$D/err2.txt"
  n=$(ls "$D/out" 2>/dev/null | grep -c '\.mlpt$')
  [ "$n" -eq 2 ] || fail "run -o DIR/ twice, same pid: $n traces, expected 2: $(ls "$D/out" | tr '\n' ' ')"
  for t in "$D"/out/*.mlpt; do
    [ -f "$t" ] || continue
    readable "$t" || fail "run -o DIR/ twice, same pid: $t unreadable"
    [ -f "$t.report.json" ] || fail "run -o DIR/ twice, same pid: no report for $t"
  done
fi

# ---- another user's folder ------------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
  echo "trace_names: not root; the other-user folder checks are skipped (they chown a folder to nobody)"
else
  D=$WORK/foreign
  mkdir -p "$D"
  "$PROGS/exec_self" 0 >"$D/bare.out" 2>/dev/null
  bare=$?
  mkdir "$D/f.mlpt" "$D/real"
  chown nobody "$D/f.mlpt" "$D/real"
  ln -s "$D/real" "$D/l.mlpt"
  chown -h nobody "$D/l.mlpt"
  k=0
  for out in "$D/f.mlpt" "$D/f.mlpt/" "$D/l.mlpt"; do
    k=$((k + 1))
    MLPROF_REPORT=1 MLPROF_PRELOAD=1 LD_PRELOAD=$PRE MLPROF_OUTPUT=$out \
      "$PROGS/exec_self" 0 >"$D/out$k.txt" 2>"$D/err$k.txt"
    rc=$?
    [ $rc -eq $bare ] && cmp -s "$D/bare.out" "$D/out$k.txt" || fail "foreign folder $out: the program changed (exit $rc)"
    [ "$(grep -c 'refusing output folder' "$D/err$k.txt")" -eq 1 ] || fail "foreign folder $out: $(cat "$D/err$k.txt")"
    [ "$(grep -c '^mlprof' "$D/err$k.txt")" -eq 1 ] || fail "foreign folder $out: not one message: $(cat "$D/err$k.txt")"
    [ $RUN = 1 ] || continue
    "$MLPROF" run --library "$LIB" -o "$out" -- "$PROGS/exec_self" 0 >"$D/rout$k.txt" 2>"$D/rerr$k.txt"
    rc=$?
    [ $rc -eq $bare ] && cmp -s "$D/bare.out" "$D/rout$k.txt" || fail "run -o $out (foreign): the program changed (exit $rc)"
    [ "$(grep -c '^mlprof' "$D/rerr$k.txt")" -eq 1 ] && grep -q 'refusing output folder' "$D/rerr$k.txt" ||
      fail "run -o $out (foreign): $(cat "$D/rerr$k.txt")"
  done
  left="$(ls -A "$D/f.mlpt")$(ls -A "$D/real")"
  [ -z "$left" ] || fail "files written in another user's folder: $left"
fi

# ---- report and export file modes ------------------------------------------------------------
D=$WORK/modes
mkdir -p "$D"
# MLPROF_REPORT_WAIT: the reports are written by the detached mlprof command;
# the exit waits for it, so they are there to be checked
MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_PRELOAD=1 LD_PRELOAD=$PRE MLPROF_OUTPUT=$D/m.mlpt "$PROGS/exec_self" 0 >/dev/null 2>"$D/err.txt"
for f in "$D/m.mlpt.report.txt" "$D/m.mlpt.report.json" "$D/m.mlpt.report.html"; do
  if [ -f "$f" ]; then
    [ "$(mode "$f")" = 600 ] || fail "report $f has mode $(mode "$f"), expected 600"
  else
    fail "no report $f: $(cat "$D/err.txt")"
  fi
done
"$MLPROF" export -q --chrome -o "$D/m.json.gz" "$D/m.mlpt" 2>/dev/null
"$MLPROF" export -q --tensorboard "$D/tb" "$D/m.mlpt" 2>/dev/null
"$MLPROF" report -q -o "$D/r.txt" "$D/m.mlpt" 2>/dev/null
for f in "$D/m.json.gz" "$D"/tb/events.out.tfevents.* "$D/r.txt"; do
  if [ -f "$f" ]; then
    [ "$(mode "$f")" = 600 ] || fail "output $f has mode $(mode "$f"), expected 600"
  else
    fail "no output $f"
  fi
done

if [ $FAILS -eq 0 ]; then
  echo "trace_names: all checks passed"
  rm -rf "$WORK"
  exit 0
fi
echo "trace_names: $FAILS failure(s); files kept in $WORK"
exit 1
