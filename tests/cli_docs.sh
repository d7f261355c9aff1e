#!/bin/sh
# cli_docs.sh - the man page (docs/mlprof.1) and the bash completion
# (tools/completion/mlprof.bash) cannot drift from the command:
#   - the man page renders without warnings (groff, else man -l; skipped
#     with a message when neither is installed);
#   - every command `mlprof --help` lists has a section in the man page and
#     an options line in the completion, and every option its
#     `mlprof CMD --help` lists appears in both, for that command;
#   - every MLPROF_* variable of README.md's Environment table and of the
#     commands' help is in the man page's ENVIRONMENT section;
#   - the completion, sourced into bash, completes commands, options, option
#     values and traces.
# usage: cli_docs.sh MLPROF_BINARY SOURCE_DIR WORK_DIR
set -u
mlprof=$1 src=$(cd "$2" && pwd) work=$3/cli_docs.$$
man_src=$src/docs/mlprof.1 comp=$src/tools/completion/mlprof.bash
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT

[ -f "$man_src" ] || { echo "FAIL: no $man_src"; exit 1; }
[ -f "$comp" ] || { echo "FAIL: no $comp"; exit 1; }

# ---- the man page renders --------------------------------------------------
if command -v groff >/dev/null 2>&1; then # every troff warning on
  LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -P-cbou "$man_src" >"$work/man.txt" 2>"$work/man.err"
  rc=$?
  renderer="groff -man -ww"
elif command -v man >/dev/null 2>&1; then
  LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$man_src" >"$work/man.txt" 2>"$work/man.err"
  rc=$?
  renderer="man -l"
else
  rc=skip
  echo "SKIP: neither man nor groff is installed: the man page is not rendered"
fi
if [ "$rc" != skip ]; then
  [ "$rc" -eq 0 ] || fail "$renderer exited with $rc"
  if [ -s "$work/man.err" ]; then
    fail "$renderer warns:"
    cat "$work/man.err"
  fi
  for sec in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT; do
    grep -q "^$sec" "$work/man.txt" || fail "rendered man page has no $sec section"
  done
  echo "man page renders ($renderer, $(wc -l <"$work/man.txt") lines)"
fi

# The man source with roff escapes of '-' undone, for plain searches.
sed 's/\\-/-/g' "$man_src" >"$work/man.src"

# Section of the man source for command $1: from its .SS line to the next .SS/.SH.
man_section() {
  awk -v c="$1" '
    /^\.S[SH]/ { on = ($0 ~ "^\\.SS \"mlprof " c "( |\")") }
    on' "$work/man.src"
}

# ---- commands and options --------------------------------------------------
"$mlprof" --help >"$work/help.txt" 2>&1 || fail "mlprof --help exited with $?"
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$work/help.txt")
n=$(echo "$commands" | grep -c .)
[ "$n" -ge 5 ] || fail "found only $n commands in mlprof --help"
opt_count=0
for cmd in $commands; do
  man_section "$cmd" >"$work/sec.txt"
  [ -s "$work/sec.txt" ] || fail "man page: no section '.SS \"mlprof $cmd ...'"
  comp_line=$(grep -E "^ +$cmd\) opts=" "$comp")
  [ -n "$comp_line" ] || fail "completion: no '$cmd) opts=...' line"
  grep -q "^  *local commands=\".*\\<$cmd\\>" "$comp" || fail "completion: '$cmd' missing from its commands"
  "$mlprof" "$cmd" --help >"$work/cmd.txt" 2>&1 || fail "mlprof $cmd --help exited with $?"
  # the option column of the help: "  -f, --format F   text ..." -> -f --format
  opts=$(sed -nE 's/^[[:space:]]+((-[a-zA-Z0-9], )?--?[a-zA-Z0-9][a-zA-Z0-9-]*).*/\1/p' "$work/cmd.txt" |
    tr ',' ' ' | tr ' ' '\n' | grep . | sort -u)
  for o in $opts; do
    opt_count=$((opt_count + 1))
    grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" "$work/sec.txt" || fail "man page: 'mlprof $cmd' lacks $o"
    echo " $comp_line " | grep -qE -- "[\" ]$o[\" ]" || fail "completion: '$cmd' lacks $o"
  done
done
[ "$opt_count" -ge 20 ] || fail "found only $opt_count options in the commands' help"
echo "checked $n commands and $opt_count options"

# ---- environment variables -------------------------------------------------
awk '/^## Environment/ { on = 1; next } /^## / { on = 0 } on' "$src/README.md" >"$work/env.md"
cat "$work/help.txt" >>"$work/env.md"
for c in $commands; do "$mlprof" "$c" --help >>"$work/env.md" 2>&1; done
vars=$(grep -oE 'MLPROF_[A-Z0-9_]+' "$work/env.md" | sort -u)
awk '/^\.SH ENVIRONMENT/ { on = 1; next } /^\.SH/ { on = 0 } on' "$work/man.src" >"$work/env.man"
nv=0
for v in $vars; do
  nv=$((nv + 1))
  grep -qE "(^|[^A-Z0-9_])$v([^A-Z0-9_]|\$)" "$work/env.man" || fail "man page ENVIRONMENT lacks $v"
done
[ "$nv" -ge 10 ] || fail "found only $nv MLPROF_* variables in README.md and the help"
echo "checked $nv environment variables"

# ---- the completion at work ------------------------------------------------
if command -v bash >/dev/null 2>&1; then
  mkdir -p "$work/t/runs"
  : >"$work/t/a.mlpt"
  : >"$work/t/notes.txt"
  printf '#!/bin/sh\n' >"$work/t/train_prog"
  chmod +x "$work/t/train_prog"
  cat >"$work/complete.sh" <<'EOF'
# complete WORDS...: the replies for the last word, sorted, on one line
complete_line() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _mlprof
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
  echo
}
EOF
  got=$(cd "$work/t" && bash -c '. "$1"; . "$2"
    complete_line mlprof ""
    complete_line mlprof ex
    complete_line mlprof export --ch
    complete_line mlprof report --format ""
    complete_line mlprof run --format ""
    complete_line mlprof run --mem ""
    complete_line mlprof report ""
    complete_line mlprof trigger --no-w
    complete_line mlprof run -- ./train_p
    complete_line mlprof run -- ./train_prog no' _ "$comp" "$work/complete.sh" 2>&1)
  want="$(printf '%s\n' --help --version $commands | sort | tr '\n' ' ')
export 
--chrome 
html json text 
json text 
counts full off sampled 
a.mlpt runs 
--no-wait 
./train_prog 
notes.txt "
  if [ "$got" != "$want" ]; then
    fail "completion replies differ"
    printf 'got:\n%s\nwant:\n%s\n' "$got" "$want"
  else
    echo "completion replies as expected"
  fi
else
  echo "SKIP: no bash: the completion is not exercised"
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "ok"
