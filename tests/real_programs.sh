#!/bin/sh
# real_programs.sh — ordinary programs that know nothing of mlprof must
# behave the same under `mlprof run` as when run bare: the same stdout, the
# same stderr apart from mlprof's own lines, the same exit status (also when
# they die by a signal). Covers GNU sort on a large file (its own signal
# handlers, threads, temporary files), gzip both ways, a script without
# "#!", a bash pipeline, a
# program that forks and execs, one with its own SIGPROF/ITIMER_PROF and
# SIGUSR2 handlers, one that aborts, and a small PyTorch training loop when
# torch can be imported.
#
# usage: real_programs.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR
# MLPROF_REAL_REPEAT=N runs every check N times (races show only sometimes).
set -u
if [ $# -ne 4 ]; then
  echo "usage: real_programs.sh MLPROF LIBMLPROF_SO PROGS_DIR TMP_DIR" >&2
  exit 2
fi
MLPROF=$1
LIB=$2
PROGS=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/real_programs.XXXXXX") || exit 2
REPEAT=${MLPROF_REAL_REPEAT:-1}
LC_ALL=C
export LC_ALL
unset MLPROF_OUTPUT MLPROF_SAMPLE_HZ MLPROF_TRIGGER_SIGNAL MLPROF_MODULES LD_PRELOAD
ulimit -c 0 2>/dev/null # the aborting program leaves no core file
FAILS=0
N=0

fail() {
  echo "real_programs: FAIL $*"
  FAILS=$((FAILS + 1))
}

# mlprof's own stderr lines ("mlprof: ...", "mlprof run: ...") are not the program's.
program_stderr() { grep -v '^mlprof[: ]' "$1" || true; }

# check NAME [report] -- COMMAND ARGS...: run COMMAND bare, then under
# `mlprof run` with its traces in a folder of its own, and compare. With
# "report", mlprof also writes the report files and names them on stderr
# (stdout stays the program's alone).
check() {
  name=$1
  shift
  report=0
  if [ "$1" = report ]; then
    report=1
    shift
  fi
  shift # --
  N=$((N + 1))
  d=$WORK/$N.$name
  mkdir -p "$d/traces"
  # (the subshell keeps the shell's own "Aborted"-style notice out of bare.err)
  ( (timeout 60 "$@" >"$d/bare.out" 2>"$d/bare.err"); exit $?) 2>/dev/null
  bare=$?
  # (the same subshell: with -q --no-report the program replaces mlprof and
  # dies of its own signal, as the bare run does)
  if [ $report = 1 ]; then
    ( (MLPROF_REPORT=1 timeout 90 "$MLPROF" run -q --library "$LIB" -o "$d/traces" -- "$@" >"$d/run.out" 2>"$d/run.err"); exit $?) 2>/dev/null
  else
    ( (timeout 90 "$MLPROF" run -q --no-report --library "$LIB" -o "$d/traces" -- "$@" >"$d/run.out" 2>"$d/run.err"); exit $?) 2>/dev/null
  fi
  run=$?
  ok=1
  if [ $bare != $run ]; then
    fail "$name: exit status $run under mlprof run, $bare bare"
    ok=0
  fi
  if [ $report = 1 ] && ! grep -q '^mlprof: reports .*\.report\.txt, .*\.report\.json, .*\.report\.html$' "$d/run.err"; then
    fail "$name: the report files are not named on stderr"
    ok=0
  fi
  if ! cmp -s "$d/bare.out" "$d/run.out"; then
    fail "$name: stdout differs"
    ok=0
  fi
  program_stderr "$d/bare.err" >"$d/bare.err2"
  program_stderr "$d/run.err" >"$d/run.err2"
  if ! cmp -s "$d/bare.err2" "$d/run.err2"; then
    fail "$name: stderr differs"
    ok=0
  fi
  if [ $ok = 0 ]; then
    echo "  command: $*"
    echo "  stdout bare / under mlprof (first lines):"
    head -5 "$d/bare.out" | sed 's/^/    bare: /'
    head -5 "$d/run.out" | sed 's/^/    run:  /'
    echo "  stderr under mlprof:"
    head -8 "$d/run.err" | sed 's/^/    /'
  else
    echo "real_programs: ok $name (exit $bare)"
  fi
  LAST=$d
}

# The main trace of the last check (the one mlprof run reports).
main_trace() { ls "$LAST"/traces/"$1".*.mlpt 2>/dev/null | head -1; }

# ---- inputs -------------------------------------------------------------------
BIG=$WORK/numbers.txt
awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) printf "%d\n", int(rand() * 1000000000) - 500000000 }' >"$BIG"
gzip -c -6 "$BIG" >"$BIG.gz"

r=0
while [ $r -lt "$REPEAT" ]; do
  r=$((r + 1))

  # GNU sort installs handlers for SIGPROF among others, resets and re-raises.
  check sort -- sort -n -S 1M --parallel=2 -T "$WORK" "$BIG"
  t=$(main_trace sort)
  if [ -z "$t" ]; then
    fail "sort: no trace written under mlprof run (was the library preloaded?)"
  fi

  check gzip -- gzip -c -6 "$BIG"
  check gunzip -- gzip -dc "$BIG.gz"

  # A script without "#!" runs under /bin/sh, as the shell or execvp runs
  # it (POSIX), found by path or through PATH: the start-up front, when built
  # against musl (whose execvp does not), does it itself.
  printf 'echo "script: $# args: $*"\nexit 4\n' >"$WORK/noshebang"
  chmod +x "$WORK/noshebang"
  check noshebang -- "$WORK/noshebang" a 'b c'
  check noshebang_report report -- "$WORK/noshebang" a
  saved_path=$PATH
  PATH=$WORK:$PATH
  check noshebang_path -- noshebang d
  PATH=$saved_path

  # A program that has not allocated when the preloaded library starts (its
  # constructor runs before main) still has its heap tracked: the header
  # says the interposer is in effect, and the report does not say the
  # library was loaded too late.
  check true report -- /bin/true
  t=$(main_trace true)
  if [ -z "$t" ] || ! "$MLPROF" info "$t" 2>/dev/null | grep -q 'mem.interposer *1$'; then
    fail "true: the trace does not say the malloc interposer was in effect"
  fi
  if grep -q 'heap not tracked' "$t.report.txt" 2>/dev/null; then
    fail "true: the report says the heap was not tracked under mlprof run"
  fi

  check pipeline report -- bash -c "seq 1 200000 | awk '{ s += \$1 % 7 } END { print s }'; \
sort -n -S 1M '$BIG' | tail -3; gzip -c '$BIG' | gzip -dc | wc -l; exit 3"

  # A note every process of a run would print (no hardware counters: forced
  # here by MLPROF_PAPI_EVENTS=off) is said once, by the top process, not
  # again by each program a script runs, nor by the images the top process
  # execs (a shim, `env`, a script's last command).
  MLPROF_PAPI_EVENTS=off
  export MLPROF_PAPI_EVENTS
  check notes_once -- bash -c "seq 1 1000 | sort -n | tail -1; /bin/true; exit 0"
  notes=$(grep -c 'no hardware counters' "$LAST/run.err")
  if [ "$notes" -ne 1 ]; then
    fail "notes_once: the hardware-counter note was printed $notes times, once expected"
  fi
  check notes_once_exec -- env A=1 sh -c "seq 1 1000 | sort -n | tail -1; exec env B=2 /bin/echo done"
  unset MLPROF_PAPI_EVENTS
  notes=$(grep -c 'no hardware counters' "$LAST/run.err")
  if [ "$notes" -ne 1 ]; then
    fail "notes_once_exec: the hardware-counter note was printed $notes times, once expected"
  fi

  check fork_exec -- "$PROGS/fork_exec"

  # Its own SIGPROF (ITIMER_PROF) and SIGUSR2: the counts it prints must
  # match. Fast sampling, so the sampler's timers run beside its itimer.
  MLPROF_SAMPLE_HZ=1000
  export MLPROF_SAMPLE_HZ
  check sig_host -- "$PROGS/sig_host"
  unset MLPROF_SAMPLE_HZ
  t=$(main_trace sig_host)
  if [ -n "$t" ]; then
    samples=$("$MLPROF" info "$t" 2>/dev/null | awk '$1 == "cpu.samples" { print $2 }')
    if [ "${samples:-0}" -eq 0 ]; then
      fail "sig_host: the trace has no CPU samples (the sampler did not run beside the program's timer)"
    fi
  else
    fail "sig_host: no trace written under mlprof run"
  fi

  # Exit status by signal must match; the trace, when written, must open.
  check abort -- "$PROGS/aborter"
  t=$(main_trace aborter)
  if [ -n "$t" ] && ! "$MLPROF" info "$t" >"$LAST/info.out" 2>&1; then
    fail "abort: 'mlprof info' cannot read the trace of the aborted program: $(head -1 "$LAST/info.out")"
  fi
done

# ---- PyTorch --------------------------------------------------------------------
# The first python3 that imports torch: the one on PATH, else the system's
# (Debian's python3-torch installs for /usr/bin/python3 only).
PY=
for cand in python3 /usr/bin/python3; do
  if "$cand" -c 'import torch' >/dev/null 2>&1; then PY=$cand; break; fi
done
if [ -n "$PY" ]; then
  TRAIN='
import torch
torch.manual_seed(0)
torch.set_num_threads(2)
x = torch.randn(256, 16)
y = (x[:, :1] * 2 + 1)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(30):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print("final loss %.4f" % loss.item())
'
  k=0
  while [ $k -lt 5 ]; do
    k=$((k + 1))
    check torch -- "$PY" -c "$TRAIN"
  done
else
  echo "real_programs: skip torch: no python3 here can import torch"
fi

if [ $FAILS -ne 0 ]; then
  echo "real_programs: $FAILS check(s) failed; outputs kept in $WORK"
  exit 1
fi
rm -rf "$WORK"
echo "real_programs: all $N checks passed"
exit 0
