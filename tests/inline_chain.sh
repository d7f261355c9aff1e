#!/bin/sh
# inline_chain.sh — symbols of code inlined two levels deep and of a
# stripped program, under `mlprof run`.
#
# inline_chain's hot loop is layer_kernel, inlined into model_forward,
# itself inlined into main: the folded export, the call paths of the text
# report and the JSON report must show the whole chain
# main -> model_forward [inlined] -> layer_kernel [inlined], each inlined
# frame with the line of its call. A stripped copy of the program must
# name its code after the function that holds it (main's start, from
# .eh_frame: one name, nearly all the samples), and the report must say
# which code has no symbols and how to get them.
#
# usage: inline_chain.sh MLPROF LIBMLPROF_SO INLINE_CHAIN SOURCE STRIP TMP_DIR
set -u
MLPROF=$1
LIB=$2
PROG=$3
SRC=$4
STRIP=$5
mkdir -p "$6"
WORK=$(mktemp -d "$6/inline_chain.XXXXXX") || exit 2
unset MLPROF_OUTPUT MLPROF_MODULES LD_PRELOAD
MLPROF_SAMPLE_HZ=997
export MLPROF_SAMPLE_HZ
FAILS=0
fail() {
  echo "inline_chain: FAIL $*"
  FAILS=$((FAILS + 1))
}

# profile PROGRAM NAME: trace, folded export, text and JSON reports in $WORK/NAME.*
profile() {
  "$MLPROF" run -q --library "$LIB" -o "$WORK/$2.mlpt" -- "$1" 0.5 >/dev/null 2>"$WORK/$2.err" ||
    fail "mlprof run $2: $(cat "$WORK/$2.err")"
  "$MLPROF" export --folded -q -o "$WORK/$2.folded" "$WORK/$2.mlpt" >/dev/null 2>&1 || fail "export --folded $2"
  "$MLPROF" report --format text -o "$WORK/$2.txt" "$WORK/$2.mlpt" >/dev/null 2>&1 || fail "report text $2"
  "$MLPROF" report --format json -o "$WORK/$2.json" "$WORK/$2.mlpt" >/dev/null 2>&1 || fail "report json $2"
}

# ---- two levels of inlining ----
profile "$PROG" chain
grep -q ';main;model_forward_\[inlined\];layer_kernel_\[inlined\] ' "$WORK/chain.folded" ||
  fail "folded lacks main;model_forward_[inlined];layer_kernel_[inlined]: $(sort -k2 -n -r "$WORK/chain.folded" | head -n 2)"
grep -F -q 'main -> model_forward [inlined]' "$WORK/chain.txt" || fail "text call paths lack main -> model_forward [inlined]"
grep -F -q 'model_forward [inlined] -> layer_kernel [inlined]' "$WORK/chain.txt" ||
  fail "text call paths lack model_forward [inlined] -> layer_kernel [inlined]"
if grep -q 'Missing symbols' "$WORK/chain.txt"; then fail "a program with symbols is reported without them"; fi
CALL_FWD=$(grep -n 'x = model_forward(' "$SRC" | head -n 1 | cut -d: -f1)
CALL_KERNEL=$(grep -n 'x = layer_kernel(' "$SRC" | head -n 1 | cut -d: -f1)
HOT=$(grep -n 'HOT LINE' "$SRC" | head -n 1 | cut -d: -f1)
python3 - "$WORK/chain.json" "$CALL_FWD" "$CALL_KERNEL" "$HOT" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
path, call_fwd, call_kernel, hot = sys.argv[1], *map(int, sys.argv[2:])
fn = json.load(open(path))["functions"]
tot = {f["name"]: f for f in fn["top_total"]}
bad = []
for name, line in (("main", call_fwd), ("model_forward", call_kernel), ("layer_kernel", hot)):
    f = tot.get(name)
    if not f: bad.append("%s not among the functions by total: %r" % (name, list(tot)[:8])); continue
    if f.get("line") != line: bad.append("%s at line %r, expected %d" % (name, f.get("line"), line))
    if name != "main" and not f.get("inlined"): bad.append("%s not marked inlined" % name)
    if f["total_pct"] < 80: bad.append("%s holds %.1f%% by total" % (name, f["total_pct"]))
for b in bad: print("inline_chain: FAIL", b)
sys.exit(1 if bad else 0)
PY

# ---- a stripped copy ----
"$STRIP" -o "$WORK/chain_stripped" "$PROG" || fail "strip"
MAIN=$(nm "$PROG" | awk '$3 == "main" { sub(/^0+/, "", $1); print $1 }')
profile "$WORK/chain_stripped" stripped
grep -F -q 'Missing symbols' "$WORK/stripped.txt" || fail "the text report does not say that symbols are missing"
grep -F -q 'chain_stripped' "$WORK/stripped.txt" && grep -F -q 'build it with -g' "$WORK/stripped.txt" ||
  fail "the text report does not name the stripped program and how to get its symbols"
python3 - "$WORK/stripped.json" "chain_stripped+0x$MAIN" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
path, main = sys.argv[1:]
r = json.load(open(path))
top = r["functions"]["top_self"]
bad = []
if not top or top[0]["name"] != main: bad.append("top self function %r, expected %s" % (top[0]["name"] if top else None, main))
elif top[0]["self_pct"] < 80: bad.append("%s holds only %.1f%% by self: addresses not grouped" % (main, top[0]["self_pct"]))
miss = [m for m in r["stacks"].get("unsymbolized", []) if m["module"] == "chain_stripped"]
if not miss: bad.append("no unsymbolized entry for chain_stripped: %r" % r["stacks"].get("unsymbolized"))
elif miss[0]["pct"] < 80: bad.append("unsymbolized share %.1f%%" % miss[0]["pct"])
for b in bad: print("inline_chain: FAIL", b)
sys.exit(1 if bad else 0)
PY

if [ $FAILS -ne 0 ]; then
  echo "inline_chain: $FAILS failure(s); files in $WORK"
  exit 1
fi
echo "inline_chain: all checks passed"
rm -rf "$WORK"
exit 0
