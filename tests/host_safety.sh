#!/bin/sh
# host_safety.sh — the profiler never breaks the program it runs in, nor
# loses or spoils its data (docs/host-safety.md):
#   - fork + exec with MLPROF_OUTPUT naming a file: the parent's trace stays
#     complete, each exec'd child writes <name>.<pid>.mlpt beside it;
#   - fork without exec (while other threads record): children write
#     nothing and never hang;
#   - a crash (abort, SIGSEGV, SIGFPE) in step 60: same exit status as bare,
#     every finished step in the trace, the signal named in the reports, the
#     live page removed;
#   - _exit() (also from a signal handler, also a dash script's `exit`) and
#     exec: the trace is closed with every finished step; a vforked child's
#     _exit leaves the parent's trace alone; a failed exec keeps the steps
#     before it;
#   - `ulimit -f` at exit: the program keeps its exit status and its
#     buffered stdout, the failed report is named, no .tmp is left;
#   - a full /dev/shm (a 64 KiB tmpfs filled up): no live page, one message,
#     the program and its trace unchanged;
#   - planted symlinks at the trace and report names are refused, never
#     followed; traces are 0600; stale live pages of dead processes go;
#   - `mlprof resume` / `trigger` refuse processes that are not mlprof jobs.
#
# usage: host_safety.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR
set -u
if [ $# -ne 4 ]; then
  echo "usage: host_safety.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR" >&2
  exit 2
fi
MLPROF=$1
LIB=$2
PROGS=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/run.XXXXXX") || exit 2
LC_ALL=C
export LC_ALL
unset MLPROF_OUTPUT MLPROF_TRIGGER_SIGNAL MLPROF_MODULES LD_PRELOAD MLPROF_PRELOAD MLPROF_RUN_PID
MLPROF_LIVE_DIR=$WORK/live
export MLPROF_LIVE_DIR
mkdir -p "$MLPROF_LIVE_DIR"
ulimit -c 0 2>/dev/null
# In a sanitizer build the crash signals stay the program's (as in a plain
# build), LeakSanitizer stays out of forked children (it can hang there on
# its own), and the sanitizer runtime is preloaded first.
ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:handle_sigill=0
export ASAN_OPTIONS
ASAN_RT=$(ldd "$LIB" 2>/dev/null | awk '/libasan/ {print $3}')
PRE=$LIB
[ -n "$ASAN_RT" ] && PRE=$ASAN_RT:$LIB
FAILS=0

fail() {
  echo "host_safety: FAIL $*"
  FAILS=$((FAILS + 1))
}

# complete TRACE: `mlprof info` reads it to its footer.
complete() {
  "$MLPROF" info "$1" >"$1.info" 2>&1 && grep -q 'state: complete' "$1.info"
}

# ---- fork + exec ------------------------------------------------------------
D=$WORK/fork_exec
mkdir -p "$D"
MLPROF_REPORT=0 MLPROF_PRELOAD=1 LD_PRELOAD=$PRE MLPROF_OUTPUT=$D/fe.mlpt \
  "$PROGS/fork_exec" >"$D/out.txt" 2>"$D/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "fork_exec: exit $rc"
grep -q 'self child: 7' "$D/out.txt" || fail "fork_exec: children did not run"
complete "$D/fe.mlpt" || fail "fork_exec: parent trace unreadable: $(cat "$D/fe.mlpt.info")"
n=0
for t in "$D"/fe.*.mlpt; do
  [ -e "$t" ] || continue
  n=$((n + 1))
  complete "$t" || fail "fork_exec: child trace $t unreadable"
done
[ $n -eq 2 ] || fail "fork_exec: $n child traces beside the parent's, expected 2 (echo, self)"

# ---- fork without exec --------------------------------------------------------
for i in 1 2 3 4 5; do
  D=$WORK/fork_noexec$i
  mkdir -p "$D"
  MLPROF_REPORT=0 MLPROF_OUTPUT=$D/fn.mlpt timeout 120 "$PROGS/fork_noexec" >"$D/out.txt" 2>"$D/err.txt"
  rc=$?
  [ $rc -eq 0 ] || fail "fork_noexec run $i: exit $rc (124: hung)"
  grep -q 'children ok: 40 of 40' "$D/out.txt" || fail "fork_noexec run $i: $(cat "$D/out.txt")"
  complete "$D/fn.mlpt" || fail "fork_noexec run $i: trace unreadable"
  grep -q 'steps: 40 complete' "$D/fn.mlpt.info" || fail "fork_noexec run $i: $(grep steps: "$D/fn.mlpt.info")"
  [ "$(ls "$D" | grep -c mlpt$)" -eq 1 ] || fail "fork_noexec run $i: a forked child wrote a trace: $(ls "$D")"
done

# ---- crashes ------------------------------------------------------------------
CRASHES="abort segv fpe"
# UBSan catches the null store and the division before they fault.
[ -n "$ASAN_RT" ] && CRASHES=abort
# against_bare HOW DIR TRACE: crash_steps HOW bare and profiled (reports
# written at its end, waited for); sets bare and rc, checks that the exit
# status and stdout are the bare run's.
against_bare() {
  mkdir -p "$2"
  MLPROF_DISABLE=1 "$PROGS/crash_steps" $1 >"$2/bare.txt" 2>/dev/null
  bare=$?
  MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_OUTPUT=$3 "$PROGS/crash_steps" $1 >"$2/out.txt" 2>"$2/err.txt"
  rc=$?
  [ $rc -eq $bare ] || fail "$1: exit $rc, bare $bare"
  cmp -s "$2/out.txt" "$2/bare.txt" || fail "$1: stdout differs from bare"
}

for how in $CRASHES; do
  D=$WORK/crash_$how
  against_bare $how "$D" "$D/c.mlpt"
  [ $rc -gt 128 ] || fail "crash $how: exit $rc is not a signal"
  complete "$D/c.mlpt" || fail "crash $how: trace not closed: $(cat "$D/c.mlpt.info")"
  grep -q 'steps: 60 complete' "$D/c.mlpt.info" || fail "crash $how: $(grep steps: "$D/c.mlpt.info")"
  case $how in abort) sig=SIGABRT ;; segv) sig=SIGSEGV ;; fpe) sig=SIGFPE ;; esac
  grep -q "CRASH: the program died of $sig" "$D/c.mlpt.report.txt" 2>/dev/null ||
    fail "crash $how: the text report does not name $sig"
  grep -q "\"crash_signal\": \"$sig\"" "$D/c.mlpt.report.json" 2>/dev/null ||
    fail "crash $how: the JSON report does not name $sig"
  # Under `mlprof run` the launcher reports; the status is still the program's.
  [ -n "$ASAN_RT" ] && continue # mlprof run puts libmlprof first in LD_PRELOAD
  MLPROF_REPORT=1 "$MLPROF" run --library "$LIB" -o "$D/run.mlpt" -- "$PROGS/crash_steps" $how >"$D/run.txt" 2>&1
  rc=$?
  [ $rc -eq $bare ] || fail "crash $how under mlprof run: exit $rc, bare $bare"
  grep -q "died of $sig" "$D/run.mlpt.report.txt" 2>/dev/null || fail "crash $how under mlprof run: no $sig in the report"
done
left=$(ls "$MLPROF_LIVE_DIR")
[ -z "$left" ] || fail "live pages left behind by crashed jobs: $left"

# ---- _exit and exec -------------------------------------------------------------
# An image that ends with _exit (in a signal handler too) or exec runs no
# exit handler: the trace is still closed, with every finished step and no
# "truncated" finding, and the status is the program's. A vforked child's
# _exit leaves the parent's trace alone; a failed exec leaves the session
# closed. A dash script ends with _exit too.
for how in _exit sigexit vfork exec execfail; do
  D=$WORK/exit_$how
  against_bare $how "$D" "$D/x.mlpt"
  complete "$D/x.mlpt" || fail "$how: trace not closed: $(cat "$D/x.mlpt.info")"
  if [ $how = execfail ]; then
    [ "$(grep -c 'recording stopped at an exec that failed' "$D/err.txt")" -eq 1 ] ||
      fail "execfail: not one line saying recording stopped: $(cat "$D/err.txt")"
  fi
  # an exec that fails leaves the session closed: the steps before it
  case $how in vfork) steps=100 ;; execfail) steps=30 ;; *) steps=60 ;; esac
  grep -q "steps: $steps complete" "$D/x.mlpt.info" || fail "$how: $(grep steps: "$D/x.mlpt.info")"
  grep -q truncated "$D/x.mlpt.report.txt" 2>/dev/null && fail "$how: the report calls the trace truncated"
  [ -s "$D/x.mlpt.report.txt" ] || fail "$how: no report"
  case $how in
  _exit | sigexit) line="mlprof: _exit($bare): trace" ;;
  exec | execfail) line="mlprof: exec: trace" ;;
  *) line="mlprof: trace" ;;
  esac
  grep -q "$line" "$D/err.txt" || fail "$how: no line '$line': $(cat "$D/err.txt")"
done
if [ -z "$ASAN_RT" ]; then
  D=$WORK/exit_sh
  mkdir -p "$D"
  "$MLPROF" run -q --no-report --library "$LIB" -o "$D/sh.mlpt" -- sh -c 'echo hi; exit 4' >"$D/out.txt" 2>&1
  rc=$?
  [ $rc -eq 4 ] || fail "sh -c 'exit 4' under mlprof run: exit $rc"
  complete "$D/sh.mlpt" || fail "sh -c 'exit 4': trace not closed: $(cat "$D/sh.mlpt.info")"
  # each image of a process that execs: its own complete trace
  "$MLPROF" run -q --no-report --library "$LIB" -o "$D/ex.mlpt" -- sh -c 'echo a; exec sh -c "echo b; exit 5"' \
    >"$D/ex.txt" 2>&1
  rc=$?
  [ $rc -eq 5 ] || fail "sh -c 'exec ...' under mlprof run: exit $rc"
  for t in "$D/ex.mlpt" "$D/ex.1.mlpt"; do
    complete "$t" || fail "sh -c 'exec ...': $t not closed: $(cat "$t.info" 2>/dev/null)"
  done
fi

# ---- ulimit -f at exit ------------------------------------------------------------
D=$WORK/fsize
mkdir -p "$D"
(ulimit -f 20 && MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_OUTPUT=$D/f.mlpt exec "$PROGS/crash_steps" exit) >"$D/out.txt" 2>"$D/err.txt"
rc=$?
[ $rc -eq 3 ] || fail "ulimit -f: exit $rc, expected the program's 3 (153: SIGXFSZ)"
grep -q 'this line still buffered' "$D/out.txt" || fail "ulimit -f: the program's buffered stdout was lost"
grep -q "cannot write report '$D/f.mlpt.report" "$D/err.txt" || fail "ulimit -f: no message naming the report: $(cat "$D/err.txt")"
ls "$D" | grep -q 'tmp' && fail "ulimit -f: temporary files left: $(ls "$D")"

# ---- a full /dev/shm -------------------------------------------------------------------
# The live page on a full tmpfs: no page and one message; the program's
# output, exit status and trace are as without it (it used to die of SIGBUS
# before its first step). The tmpfs is mounted in a mount namespace of its
# own (root, or an unprivileged user namespace); without either the check is
# skipped, with a note.
D=$WORK/fullshm
mkdir -p "$D/shm"
NS=
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  NS="unshare -m"
elif unshare -rm true 2>/dev/null; then
  NS="unshare -rm"
fi
rc=90
if [ -n "$NS" ]; then
  $NS sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 90
    dd if=/dev/zero of="$1/fill" bs=4096 2>/dev/null
    MLPROF_LIVE_DIR=$1 MLPROF_REPORT=0 MLPROF_OUTPUT=$2/s.mlpt exec "$3" exit' \
    sh "$D/shm" "$D" "$PROGS/crash_steps" >"$D/out.txt" 2>"$D/err.txt"
  rc=$?
fi
if [ $rc -eq 90 ]; then
  echo "host_safety: note: full /dev/shm not checked (no tmpfs can be mounted here: not root, no user namespaces)"
else
  [ $rc -eq 3 ] || fail "full /dev/shm: exit $rc, expected the program's 3 (135: SIGBUS)"
  grep -q 'this line still buffered' "$D/out.txt" || fail "full /dev/shm: the program's stdout was lost"
  [ "$(grep -c 'mlprof: no live page for mlprof top: .*No space left on device' "$D/err.txt")" -eq 1 ] ||
    fail "full /dev/shm: not one message: $(cat "$D/err.txt")"
  complete "$D/s.mlpt" || fail "full /dev/shm: trace not closed: $(cat "$D/s.mlpt.info")"
  grep -q 'steps: 60 complete' "$D/s.mlpt.info" || fail "full /dev/shm: $(grep steps: "$D/s.mlpt.info")"
fi

# ---- planted files and symlinks ------------------------------------------------------
D=$WORK/links
mkdir -p "$D"
echo victim >"$D/victim"
ln -s "$D/victim" "$D/t.mlpt"
MLPROF_REPORT=0 MLPROF_OUTPUT=$D/t.mlpt "$PROGS/crash_steps" exit >/dev/null 2>"$D/err.txt"
[ "$(cat "$D/victim")" = victim ] || fail "symlink at the trace name was followed"
[ -L "$D/t.mlpt" ] || fail "symlink at the trace name was replaced"
grep -q "refusing to replace '$D/t.mlpt': it is a symbolic link" "$D/err.txt" || fail "symlink trace: $(cat "$D/err.txt")"
rm -f "$D/t.mlpt"
ln -s "$D/victim" "$D/r.mlpt.report.txt"
MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_OUTPUT=$D/r.mlpt "$PROGS/crash_steps" exit >/dev/null 2>"$D/err.txt"
[ "$(cat "$D/victim")" = victim ] || fail "symlink at the report name was followed"
grep -q "refusing to replace '$D/r.mlpt.report.txt'" "$D/err.txt" || fail "symlink report: $(cat "$D/err.txt")"
[ "$(stat -c %a "$D/r.mlpt")" = 600 ] || fail "trace mode $(stat -c %a "$D/r.mlpt"), expected 600"
ls "$D" | grep -q 'tmp' && fail "symlinks: temporary files left: $(ls "$D")"

# ---- stale live pages -------------------------------------------------------------------
sh -c 'exit 0' &
dead=$!
wait $dead
echo stale >"$MLPROF_LIVE_DIR/mlprof.$dead"
MLPROF_REPORT=0 MLPROF_OUTPUT=$WORK/stale.mlpt "$PROGS/crash_steps" exit >/dev/null 2>&1
[ -e "$MLPROF_LIVE_DIR/mlprof.$dead" ] && fail "the stale live page of dead pid $dead was not removed"

# ---- resume / trigger only act on mlprof jobs ---------------------------------------------
sleep 30 &
other=$!
kill -STOP $other
# the stop takes effect asynchronously: wait for it (a loaded machine is slow)
i=0
while [ $i -lt 200 ] && [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$other/status)" != T ]; do
  sleep 0.01
  i=$((i + 1))
done
"$MLPROF" resume $other >"$WORK/resume.txt" 2>&1 && fail "mlprof resume acted on a process that is not an mlprof job"
state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$other/status)
[ "$state" = T ] || fail "mlprof resume continued a process that is not an mlprof job (state $state)"
"$MLPROF" trigger $other --no-wait >"$WORK/trigger.txt" 2>&1 && fail "mlprof trigger accepted a process that is not an mlprof job"
kill -KILL $other 2>/dev/null
wait $other 2>/dev/null

left=$(ls "$MLPROF_LIVE_DIR")
[ -z "$left" ] || fail "live pages left behind: $left"
if [ $FAILS -eq 0 ]; then
  echo "host_safety: all checks passed"
  rm -rf "$WORK"
  exit 0
fi
echo "host_safety: $FAILS failure(s); files kept in $WORK"
exit 1
