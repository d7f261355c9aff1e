#!/bin/sh
# report_paths.sh — who writes the reports, and what that costs the program
# (README "Reports"):
#   - a linked program starts the mlprof command, detached: its exit does not
#     wait (a command held at a gate writes the reports after the program
#     ended), it gets no SIGCHLD, wait(-1) finds no child, libdw is never
#     mapped into it, and the command runs without the profiler's preload or
#     MLPROF_ settings; MLPROF_REPORT_WAIT=1 waits for it, and so does a
#     child subreaper (the command would be its child); the reports say
#     written_by "cli" (the program preloads the library without starting
#     it from the preload, so `timeout` before it records nothing);
#   - no command (MLPROF_CLI names none): the reports are written in-process,
#     say so, and one message tells why;
#   - under `mlprof run` the launcher writes them ("launcher"), also for the
#     trace of an image the program exec'd in another folder;
#   - `mlprof run --no-report` writes the trace only;
#   - MLPROF_SCHEDULE=active=1,repeat=0 on tiny steps: one message, and no
#     more captures than PROF_CAPTURES_IN_FLIGHT (4) while none can finish.
#
# usage: report_paths.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR
set -u
if [ $# -ne 4 ]; then
  echo "usage: report_paths.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR" >&2
  exit 2
fi
MLPROF=$1
LIB=$2
HOST=$3/report_host
mkdir -p "$4"
WORK=$(mktemp -d "$4/run.XXXXXX") || exit 2
WORK=$(cd "$WORK" && pwd)
LC_ALL=C
export LC_ALL
unset MLPROF_OUTPUT MLPROF_TRIGGER_SIGNAL MLPROF_MODULES LD_PRELOAD MLPROF_PRELOAD MLPROF_RUN_PID MLPROF_CLI \
  MLPROF_REPORT_WAIT MLPROF_SCHEDULE MLPROF_VERBOSE MLPROF_RUN_TRACES
MLPROF_LIVE_DIR=$WORK/live
export MLPROF_LIVE_DIR
mkdir -p "$MLPROF_LIVE_DIR"
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS
ASAN_RT=$(ldd "$LIB" 2>/dev/null | awk '/libasan/ {print $3}')
PRE=$LIB
[ -n "$ASAN_RT" ] && PRE=$ASAN_RT:$LIB
# A ThreadSanitizer library cannot be preloaded into programs built without
# it (timeout, the shell, mlprof run's preload): those parts are left out.
TSAN_RT=$(ldd "$LIB" 2>/dev/null | awk '/libtsan/ {print $3}')
[ -n "$TSAN_RT" ] && PRE=
FAILS=0
GATES=""
trap 'for g in $GATES; do touch "$g/open"; done' EXIT

fail() {
  echo "report_paths: FAIL $*"
  FAILS=$((FAILS + 1))
}

# by JSON: the report's written_by value.
by() {
  sed -n 's/^  "written_by": "\([a-z-]*\)",$/\1/p' "$1" 2>/dev/null
}

# settle FILE...: wait (at most 60 s) until every file exists.
settle() {
  for f in "$@"; do
    i=0
    while [ ! -e "$f" ] && [ $i -lt 600 ]; do
      sleep 0.1
      i=$((i + 1))
    done
  done
}

# gate DIR: a stand-in for the mlprof command that saves its environment in
# DIR/cli.env, then waits for DIR/open before running the real one.
gate() {
  mkdir -p "$1"
  cat >"$1/gate.sh" <<EOF
#!/bin/sh
env >"$1/cli.env.\$\$"
while [ ! -e "$1/open" ]; do sleep 0.05; done
exec "$MLPROF" "\$@"
EOF
  chmod +x "$1/gate.sh"
  GATES="$GATES $1"
}

# ---- the command, waited for ---------------------------------------------------
D=$WORK/wait
mkdir -p "$D"
MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_OUTPUT=$D/w.mlpt "$HOST" 50 >"$D/out.txt" 2>"$D/err.txt" ||
  fail "waited: exit $?"
for s in txt json html; do [ -s "$D/w.mlpt.report.$s" ] || fail "waited: no $s report right after the exit"; done
[ "$(by "$D/w.mlpt.report.json")" = cli ] || fail "waited: written_by '$(by "$D/w.mlpt.report.json")', expected cli"
grep -q '^report written by: cli$' "$D/w.mlpt.report.txt" || fail "waited: the text report does not say who wrote it"
grep -q "sigchld=0 wait=none libdw=0" "$D/out.txt" || fail "waited: the program saw $(cat "$D/out.txt")"
grep -qF "; report $D/w.mlpt.report.{txt,json,html}" "$D/err.txt" || fail "waited: summary $(cat "$D/err.txt")"

# ---- the command by hand ------------------------------------------------------------
rm -f "$D"/w.mlpt.report.*
"$MLPROF" write-reports --by launcher "$D/w.mlpt" 2>"$D/hand.txt" || fail "by hand: exit $?"
[ "$(by "$D/w.mlpt.report.json")" = launcher ] || fail "by hand: written_by '$(by "$D/w.mlpt.report.json")'"
grep -qF "mlprof: reports $D/w.mlpt.report.{txt,json,html}" "$D/hand.txt" || fail "by hand: $(cat "$D/hand.txt")"
"$MLPROF" write-reports "$D/none.mlpt" 2>/dev/null
[ $? -eq 2 ] || fail "by hand: a missing trace is not exit status 2"

# ---- the command, detached: the exit does not wait -------------------------------
D=$WORK/detached
gate "$D"
GATE_ENV=$D LD_PRELOAD=$PRE MLPROF_CLI=$D/gate.sh MLPROF_REPORT=1 MLPROF_OUTPUT=$D/d.mlpt \
  timeout 30 "$HOST" 50 >"$D/out.txt" 2>"$D/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "detached: exit $rc (124: the exit waited for the reports)"
grep -q "sigchld=0 wait=none libdw=0" "$D/out.txt" || fail "detached: the program saw $(cat "$D/out.txt")"
ls "$D" | grep -q 'd\.mlpt\.report' && fail "detached: a report exists while the command is held at its gate"
grep -qF "; report $D/d.mlpt.report.{txt,json,html} being written by the mlprof command" "$D/err.txt" ||
  fail "detached: summary $(cat "$D/err.txt")"
touch "$D/open"
settle "$D/d.mlpt.report.txt" "$D/d.mlpt.report.json" "$D/d.mlpt.report.html"
[ "$(by "$D/d.mlpt.report.json")" = cli ] || fail "detached: written_by '$(by "$D/d.mlpt.report.json")', expected cli"
ENVF=$(ls "$D"/cli.env.* 2>/dev/null | head -1)
[ -n "$ENVF" ] || fail "detached: the command never started"
if [ -n "$ENVF" ]; then
  bad=$(grep '^MLPROF_' "$ENVF" | grep -v '^MLPROF_DISABLE=1$')
  [ -z "$bad" ] || fail "detached: the command got $bad"
  grep '^LD_PRELOAD=' "$ENVF" | grep -q libmlprof && fail "detached: the command preloads the profiler"
  grep -q '^GATE_ENV=' "$ENVF" || fail "detached: the command lost the program's other variables"
fi

# ---- SIGCHLD ignored by the program ------------------------------------------------
D=$WORK/ignchld
mkdir -p "$D"
REPORT_HOST_IGNCHLD=1 MLPROF_REPORT=1 MLPROF_REPORT_WAIT=1 MLPROF_OUTPUT=$D/i.mlpt timeout 60 "$HOST" 20 \
  >"$D/out.txt" 2>"$D/err.txt" || fail "SIGCHLD ignored: exit $?"
[ "$(by "$D/i.mlpt.report.json")" = cli ] || fail "SIGCHLD ignored: written_by '$(by "$D/i.mlpt.report.json")'"

# ---- a subreaper waits: the command would be its child ------------------------------
D=$WORK/subreaper
mkdir -p "$D"
REPORT_HOST_SUBREAPER=1 MLPROF_REPORT=1 MLPROF_OUTPUT=$D/r.mlpt timeout 60 "$HOST" 20 >"$D/out.txt" 2>"$D/err.txt" ||
  fail "subreaper: exit $?"
[ "$(by "$D/r.mlpt.report.json")" = cli ] || fail "subreaper: no report by the command right after the exit"

# ---- no command: in-process ----------------------------------------------------------
D=$WORK/inproc
mkdir -p "$D"
MLPROF_CLI=$D/none MLPROF_REPORT=1 MLPROF_OUTPUT=$D/p.mlpt "$HOST" 20 >"$D/out.txt" 2>"$D/err.txt" ||
  fail "in-process: exit $?"
[ "$(by "$D/p.mlpt.report.json")" = in-process ] || fail "in-process: written_by '$(by "$D/p.mlpt.report.json")'"
[ "$(grep -c "MLPROF_CLI='$D/none' is not an executable file" "$D/err.txt")" = 1 ] ||
  fail "in-process: not one message naming MLPROF_CLI: $(cat "$D/err.txt")"

# ---- the launcher ------------------------------------------------------------------------
if [ -z "$ASAN_RT" ] && [ -z "$TSAN_RT" ]; then # mlprof run puts libmlprof first in LD_PRELOAD
  D=$WORK/launcher
  mkdir -p "$D"
  MLPROF_REPORT=1 "$MLPROF" run -q --library "$LIB" -o "$D/l.mlpt" -- "$HOST" 20 >"$D/out.txt" 2>"$D/err.txt" ||
    fail "launcher: exit $?"
  [ "$(by "$D/l.mlpt.report.json")" = launcher ] || fail "launcher: written_by '$(by "$D/l.mlpt.report.json")'"
  grep -q "libdw=0" "$D/out.txt" || fail "launcher: the program saw $(cat "$D/out.txt")"
  # An image exec'd in another folder: the launcher learns its trace from the library.
  (cd "$D" && MLPROF_REPORT=1 "$MLPROF" run -q --library "$LIB" -o e.mlpt -- "$HOST" 20 exec-in sub) \
    >"$D/eout.txt" 2>"$D/eerr.txt" || fail "launcher, exec: exit $?"
  [ "$(by "$D/e.mlpt.report.json")" = launcher ] || fail "launcher, exec: first image: $(cat "$D/eerr.txt")"
  [ "$(by "$D/sub/e.mlpt.report.json")" = launcher ] || fail "launcher, exec: the exec'd image's trace has no report"
fi

# ---- a schedule on tiny steps ---------------------------------------------------------------
D=$WORK/flood
gate "$D"
MLPROF_SCHEDULE=active=1,repeat=0 MLPROF_CLI=$D/gate.sh MLPROF_REPORT=1 MLPROF_OUTPUT=$D/s.mlpt \
  timeout 60 "$HOST" 3000 >"$D/out.txt" 2>"$D/err.txt" || fail "flood: exit $?"
n=$(grep -c 'capture\|cycle' "$D/err.txt")
[ "$(grep -c 'mlprof: MLPROF_SCHEDULE: cycle 5 not captured' "$D/err.txt")" = 1 ] && [ "$n" = 2 ] ||
  fail "flood: not one message (and the summary): $(head -c 2000 "$D/err.txt")"
grep -q "; 4 cycles captured, 2996 skipped" "$D/err.txt" || fail "flood: summary $(tail -1 "$D/err.txt")"
caps=$(ls "$D" | grep -c '^s\.cycle[0-9]*\.mlpt$')
[ "$caps" = 4 ] || fail "flood: $caps capture files, expected the 4 in flight"
touch "$D/open"
settle "$D/s.mlpt.report.json" "$D"/s.cycle4.mlpt.report.html
for c in 1 2 3 4; do
  settle "$D/s.cycle$c.mlpt.report.json"
  [ "$(by "$D/s.cycle$c.mlpt.report.json")" = cli ] || fail "flood: cycle $c has no report by the command"
done
D=$WORK/flood0
mkdir -p "$D"
MLPROF_SCHEDULE=active=1,repeat=0 MLPROF_REPORT=0 MLPROF_OUTPUT=$D/s.mlpt "$HOST" 3000 >/dev/null 2>"$D/err.txt" ||
  fail "flood without reports: exit $?"
[ "$(grep -c 'capture\|cycle' "$D/err.txt")" -le 1 ] || fail "flood without reports: $(head -c 2000 "$D/err.txt")"

# `mlprof run --no-report`: the trace only, no analysis and no report files
# (it used to write all three), and -f beside it is refused.
D=$WORK/noreport
mkdir -p "$D"
if [ -z "$ASAN_RT" ] && [ -z "$TSAN_RT" ]; then # mlprof run puts libmlprof first in LD_PRELOAD
  "$MLPROF" run -q --no-report --library "$LIB" -o "$D/n.mlpt" -- "$HOST" 3 >/dev/null 2>"$D/err.txt" ||
    fail "--no-report: exit $?: $(cat "$D/err.txt")"
  [ -s "$D/n.mlpt" ] || fail "--no-report: no trace"
  ls "$D" | grep -q 'report' && fail "--no-report: report files written: $(ls "$D")"
  # with -q too the program replaces mlprof (exec in place): the same
  # process, its own exit status, and its trace where -o says
  "$MLPROF" run -q --no-report --library "$LIB" -o "$D/x.mlpt" -- /bin/sh -c "echo \$\$ >'$D/pid.txt'; exit 5" \
    >/dev/null 2>"$D/err.txt" &
  launcher=$!
  wait "$launcher"
  st=$?
  [ "$st" = 5 ] || fail "-q --no-report: exit $st, not the program's 5: $(cat "$D/err.txt")"
  [ "$(cat "$D/pid.txt")" = "$launcher" ] || fail "-q --no-report: the program ran as $(cat "$D/pid.txt"), not in place of $launcher"
  [ -s "$D/x.mlpt" ] || fail "-q --no-report: no trace at -o"
  # without -q mlprof waits and names the trace
  "$MLPROF" run --no-report --library "$LIB" -o "$D/y.mlpt" -- /bin/sh -c "exit 6" >/dev/null 2>"$D/err.txt"
  st=$?
  [ "$st" = 6 ] || fail "--no-report: exit $st, not the program's 6"
  grep -q "trace $D/y.mlpt" "$D/err.txt" || fail "--no-report: trace not named: $(cat "$D/err.txt")"
fi
"$MLPROF" run --no-report -f text --library "$LIB" -o "$D/f.mlpt" -- "$HOST" 3 >/dev/null 2>&1 &&
  fail "--no-report -f text: accepted"

# Every report names its generator as `mlprof --version` prints it: the
# text, JSON and HTML reports and the diff's three formats.
MLPROF_REPORT=0 MLPROF_OUTPUT=$D/g.mlpt "$HOST" 3 >/dev/null 2>"$D/err.txt" || fail "generator: exit $?: $(cat "$D/err.txt")"
ver=$("$MLPROF" --version)
case $ver in "mlprof "[0-9]*) ;; *) fail "--version: '$ver'" ;; esac
for f in text json html; do
  "$MLPROF" report -q -f "$f" "$D/g.mlpt" >"$D/r.$f" 2>/dev/null || fail "report -f $f: exit $?"
  "$MLPROF" diff -f "$f" "$D/g.mlpt" "$D/g.mlpt" >"$D/d.$f" 2>/dev/null || fail "diff -f $f: exit $?"
done
grep -q "^generator: $ver\$" "$D/r.text" || fail "text report: no 'generator: $ver'"
grep -q "\"version\": *\"${ver#mlprof }\"" "$D/r.json" || fail "JSON report: no generator version ${ver#mlprof }"
grep -q "name=\"generator\" content=\"$ver\"" "$D/r.html" || fail "HTML report: no generator $ver"
grep -q "($ver)" "$D/d.text" || fail "diff text: no ($ver)"
grep -q "\"version\": *\"${ver#mlprof }\"" "$D/d.json" || fail "diff JSON: no generator version"
grep -q "name=\"generator\" content=\"$ver\"" "$D/d.html" || fail "diff HTML: no generator $ver"

[ $FAILS -eq 0 ] && rm -rf "$WORK"
echo "report_paths: $FAILS failure(s)"
exit $((FAILS > 0))
