#!/bin/sh
# stacks.sh — readable stacks of a C++ program under `mlprof run`: the text
# and JSON reports, the folded export, the pprof export and the HTML report
# name the member function template demangled (JSON keeps the linked name
# as "mangled"), the function inlined into it as a frame of its own marked
# inlined, its hottest line (the loop marked "HOT LINE" in the source), and
# libm's internal functions by name when libm's separate debug information
# is installed (libc6-dbg).
#
# usage: stacks.sh MLPROF LIBMLPROF_SO CXX_STACKS CXX_SOURCE TMP_DIR
set -u
MLPROF=$1
LIB=$2
PROG=$3
SRC=$4
mkdir -p "$5"
WORK=$(mktemp -d "$5/stacks.XXXXXX") || exit 2
unset MLPROF_OUTPUT MLPROF_MODULES LD_PRELOAD
MLPROF_SAMPLE_HZ=997
export MLPROF_SAMPLE_HZ
FAILS=0
fail() {
  echo "stacks: FAIL $*"
  FAILS=$((FAILS + 1))
}

"$MLPROF" run -q --library "$LIB" -o "$WORK" -- "$PROG" >"$WORK/out" 2>"$WORK/err" || fail "mlprof run: $(cat "$WORK/err")"
TRACE=$(ls "$WORK"/*.mlpt 2>/dev/null | head -n 1)
[ -n "$TRACE" ] || { fail "no trace"; exit 1; }
"$MLPROF" export --folded -q -o "$WORK/folded.txt" "$TRACE" >/dev/null 2>&1 || fail "export --folded"
"$MLPROF" export --pprof -q -o "$WORK/profile.pb.gz" "$TRACE" >/dev/null 2>&1 || fail "export --pprof"
"$MLPROF" export --flamegraph "$WORK/flame.svg" -q "$TRACE" >/dev/null 2>&1 || fail "export --flamegraph"
"$MLPROF" report --format json -o "$WORK/report.json" "$TRACE" >/dev/null 2>&1 || fail "report json"
"$MLPROF" report --format text -o "$WORK/report.txt" "$TRACE" >/dev/null 2>&1 || fail "report text"
"$MLPROF" report --format html -o "$WORK/report.html" "$TRACE" >/dev/null 2>&1 || fail "report html"

METHOD='double ns::Klass::method<double>(double, double)'
MANGLED='_ZN2ns5Klass6methodIdEET_S2_d'
INLINED='ns::inlined_kernel'
HOT=$(grep -n 'HOT LINE' "$SRC" | head -n 1 | cut -d: -f1)

grep -F -q "$(echo "$METHOD" | tr ' ' _)" "$WORK/folded.txt" || fail "folded lacks the demangled template method"
grep -F -q "$(echo "$INLINED [inlined]" | tr ' ' _)" "$WORK/folded.txt" || fail "folded lacks the inlined frame"
if grep -q '_ZN' "$WORK/folded.txt"; then fail "folded has mangled names: $(grep -o '_ZN[A-Za-z0-9_]*' "$WORK/folded.txt" | head -n 3)"; fi
grep -F -q "$METHOD" "$WORK/report.txt" || fail "text report lacks the demangled template method"
grep -F -q "$INLINED [inlined]" "$WORK/report.txt" || fail "text report lacks the inlined frame"
grep -F -q "cxx_stacks.cpp:$HOT" "$WORK/report.txt" || fail "text report does not name the hot line $HOT"
grep -F -q 'title="double ns::Klass::method&lt;double&gt;(double, double)' "$WORK/report.html" ||
  fail "HTML report lacks the full name on hover"
grep -F -q 'double ns::Klass::method&lt;double&gt;(double, double)' "$WORK/flame.svg" ||
  fail "the flame graph lacks the demangled template method"
grep -F -q "$INLINED [inlined]" "$WORK/flame.svg" || fail "the flame graph lacks the inlined frame"

# libm's debug file, found the way libdw finds it (by build id)
LIBM=$(ldd "$PROG" | awk '/libm\.so/ {print $3}')
BID=$(readelf -n "$LIBM" 2>/dev/null | awk '/Build ID/ {print $3}')
DEBUG=/usr/lib/debug/.build-id/$(echo "$BID" | cut -c1-2)/$(echo "$BID" | cut -c3-).debug
if [ -n "$BID" ] && [ -f "$DEBUG" ]; then WITH_DBG=1; else WITH_DBG=0; echo "stacks: no debug file for libm ($DEBUG): libm names not checked"; fi

python3 - "$WORK/report.json" "$METHOD" "$MANGLED" "$INLINED" "$HOT" "$WITH_DBG" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
path, method, mangled, inlined, hot, with_dbg = sys.argv[1:]
fn = json.load(open(path))["functions"]
funcs = {f["name"]: f for f in fn["top_self"] + fn["top_total"]}
bad = []
# GCC may make a clone of the method ("[clone .isra.0]", linked as "<mangled>.isra.0")
m = [f for n, f in funcs.items() if n.startswith(method)]
if not m: bad.append("no %r among %r" % (method, list(funcs)[:10]))
elif not m[0].get("mangled", "").startswith(mangled): bad.append("mangled of the method is %r" % m[0].get("mangled"))
i = funcs.get(inlined)
if not i: bad.append("no inlined frame %r" % inlined)
else:
    if not i.get("inlined"): bad.append("inlined frame not marked")
    if i.get("line") != int(hot): bad.append("inlined frame's line %r, hot line %s" % (i.get("line"), hot))
    if not i.get("hot_lines") or i["hot_lines"][0]["line"] != int(hot): bad.append("hot_lines %r" % i.get("hot_lines"))
libm = [f for f in fn["top_self"] if f.get("module", "").startswith("libm")]
if not libm: bad.append("no libm function among the top self functions")
if with_dbg == "1":
    raw = [f["name"] for f in libm if f["name"].startswith("libm")]
    if raw: bad.append("libm frames without a name: %r" % raw)
for b in bad: print("stacks: FAIL", b)
sys.exit(1 if bad else 0)
PY

# pprof: functions carry the demangled name and the linked one (system_name);
# the inlined function is a line of the same location as its caller.
python3 - "$WORK/profile.pb.gz" "$METHOD" "$MANGLED" "$INLINED" <<'PY' || FAILS=$((FAILS + 1))
import gzip, sys
path, method, mangled, inlined = sys.argv[1:]
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise SystemExit("stacks: FAIL pprof wire type %d" % w)
        yield f, v
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80: return v, i
p = gzip.open(path).read()
strings, funcs, locs = [], {}, []
for f, v in fields(p):
    if f == 6: strings.append(v.decode())
    elif f == 5: funcs[dict(fields(v)).get(1)] = dict(fields(v))
    elif f == 4: locs.append([dict(fields(l)).get(1) for ff, l in fields(v) if ff == 4])
bad = []
names = {i: (strings[fn.get(2, 0)], strings[fn.get(3, 0)]) for i, fn in funcs.items()}
m = [n for n in names.values() if n[0].startswith(method)]
if not m or not m[0][1].startswith(mangled): bad.append("pprof method names %r" % m)
if any(n[0].startswith("_Z") for n in names.values()): bad.append("pprof has mangled names")
pair = [l for l in locs if len(l) >= 2 and names[l[0]][0] == inlined and names[l[1]][0].startswith(method)]
if not pair: bad.append("no pprof location with the inlined function as a line above the method")
for b in bad: print("stacks: FAIL", b)
sys.exit(1 if bad else 0)
PY

if [ $FAILS -ne 0 ]; then
  echo "stacks: $FAILS failure(s); files in $WORK"
  exit 1
fi
echo "stacks: all checks passed"
rm -rf "$WORK"
exit 0
