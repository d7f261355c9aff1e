#!/bin/sh
# check_structure.sh — the dependency rules of the source tree, checked from
# the code's own #include lines, the line limit of a source file, and the
# libraries the mlprof command loads. docs/architecture.md explains the rooms.
#
# usage: check_structure.sh SOURCE_DIR [MLPROF_CLI]
#
# Include rules (a quoted include is resolved against the including file's
# folder, then src/, then include/):
#   src/trace    includes only src/trace and include/mlprof.h
#   src/core     includes only src/core and src/trace
#   producers    (src/mem cpu stack gpu res health mpi live) include their own
#                folder, src/trace, and of the core only the producer
#                interface: core/producer.h and the headers it names
#                (session, clock, ring, config, bgwriter, crash, procfile,
#                guard); the stack producer's capture service stack/stack.h
#                is part of it
#   src/analyze  includes only src/analyze and src/trace
#   src/lib      may include everything
#   tools/       includes only tools/, src/analyze and src/trace
# No file under src/ or tools/ is longer than 800 lines. `ldd MLPROF_CLI`
# shows no libpapi and no libunwind, and the command defines no malloc.
# The recorder library (LIB) links no PAPI, libpfm, libdw or libelf: the
# first two are opened at run time where the machine has hardware
# counters, the others only by the reader.
# No weak symbols join the project's own rooms (an interface is included
# and called): only src/gpu/nvtx.c may declare one, as NVTX's injection
# requires.
# The engine's private state (src/analyze/engine/an_internal.h) is included
# only by the engine: sections, writers and exports use analyze.h.
# The event contract is written once, in src/trace (one header per event
# family): outside it no code compares an event's aux or cat with a bare
# number, and no file keeps its own table of memory-mode names.
# The reader library (READER_LIB, libmlprof_reader.a) keeps no mutable
# file-scope state: no object of it has a symbol in .data or .bss (constant
# tables live in .rodata / .data.rel.ro), except what is built once under
# pthread_once, named *_once or once_*.
# MLPROF_* settings are read one way, prof__env (src/trace/settings.h): no
# getenv("MLPROF_...") in src/ or tools/ outside src/trace/settings.c (the
# PMPI wrappers, a library of their own on the public API, and the
# analyzer's sections excepted). Error-message buffers have one size,
# PROF_ERR_MAX (src/trace/errbuf.h): no err/note/msg buffer of a bare 256.
# The core's objects (CORE_OBJS, ':'-separated; TRACE_OBJS likewise): each
# internal name family prof__<word>_ is defined in one file of the core (one
# owner per prefix), and the core uses no internal name defined outside
# src/core and src/trace (the assembly hands it the producers and the report
# writer at prof_init: core/assembly.h).
#
# usage: check_structure.sh SOURCE_DIR [MLPROF_CLI [READER_LIB [CORE_OBJS TRACE_OBJS]]]
set -u
ROOT=$1
CLI=${2:-}
READER=${3:-}
CORE_OBJS=${4:-}
TRACE_OBJS=${5:-}
LIB=${6:-}
HAVE_PAPI=${7:-}
MAXLINES=800
fail=0
TMPF=$(mktemp) || exit 1
trap 'rm -f "$TMPF"' EXIT

err() {
  echo "check_structure: $*"
  fail=1
}

# The room of a resolved path: trace, core, mem, ..., analyze, lib, tools,
# public (include/), or other.
room_of() {
  case $1 in
  "$ROOT"/include/*) echo public ;;
  "$ROOT"/tools/*) echo tools ;;
  "$ROOT"/src/*)
    r=${1#"$ROOT"/src/}
    echo "${r%%/*}"
    ;;
  *) echo other ;;
  esac
}

# allowed FROM_ROOM TO_ROOM TO_PATH: 0 when the include is allowed.
allowed() {
  from=$1 to=$2 path=${3#"$ROOT"/src/}
  [ "$to" = public ] && return 0
  [ "$from" = "$to" ] && return 0
  case $from in
  trace) return 1 ;;
  core) [ "$to" = trace ] ;;
  mem | cpu | stack | gpu | res | health | mpi | live)
    [ "$to" = trace ] && return 0
    case $path in
    core/producer.h | core/session.h | core/clock.h | core/ring.h | core/config.h | core/bgwriter.h | \
      core/crash.h | core/procfile.h | core/guard.h | stack/stack.h) return 0 ;;
    esac
    return 1
    ;;
  analyze) [ "$to" = trace ] ;;
  lib) return 0 ;;
  tools) [ "$to" = analyze ] || [ "$to" = trace ] ;;
  *) return 1 ;;
  esac
}

files=$(find "$ROOT/src" "$ROOT/tools" -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
[ -n "$files" ] || {
  echo "check_structure: no sources under $ROOT/src"
  exit 1
}

for f in $files; do
  n=$(wc -l <"$f")
  [ "$n" -le "$MAXLINES" ] || err "${f#"$ROOT"/} has $n lines (at most $MAXLINES)"
  from=$(room_of "$f")
  dir=$(dirname "$f")
  # Quoted includes only: <...> are the system's and the dependencies'.
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
    target=
    for base in "$dir" "$ROOT/src" "$ROOT/include"; do
      if [ -f "$base/$inc" ]; then
        target=$(realpath -m "$base/$inc")
        break
      fi
    done
    if [ -z "$target" ]; then
      # __has_include() guards may name optional headers; those count once present.
      grep -q "__has_include(\"$inc\")" "$f" && continue
      echo "check_structure: ${f#"$ROOT"/} includes \"$inc\", which is not in the tree"
      echo FAIL >>"$TMPF"
      continue
    fi
    to=$(room_of "$target")
    if ! allowed "$from" "$to" "$target"; then
      echo "check_structure: ${f#"$ROOT"/} ($from) may not include ${target#"$ROOT"/} ($to)"
      echo FAIL >>"$TMPF"
    fi
  done
done

weak=$(grep -rnE '#[[:space:]]*pragma[[:space:]]+weak|__attribute__[[:space:]]*\(\([^)]*weak' \
  "$ROOT/src" "$ROOT/tools" "$ROOT/include" 2>/dev/null | grep -v "^$ROOT/src/gpu/nvtx.c:" | grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)')
[ -z "$weak" ] || err "weak symbols between the project's rooms (include the interface instead):
$weak"

private=$(grep -rln '"analyze/engine/an_internal.h"' "$ROOT/src" "$ROOT/tools" 2>/dev/null | grep -v "^$ROOT/src/analyze/engine/")
[ -z "$private" ] || err "the engine's private header is included outside the engine:
$private"

copies=$(grep -rnE '(\.|->)(aux|cat)[[:space:]]*(==|!=|>=|<=|&)[[:space:]]*[0-9]|"counts",[[:space:]]*"sampled"' \
  "$ROOT/src" "$ROOT/tools" 2>/dev/null | grep -v "^$ROOT/src/trace/")
[ -z "$copies" ] || err "copies of the event contract's constants (use the family header in src/trace):
$copies"

envs=$(grep -rn 'getenv("MLPROF_' "$ROOT/src" "$ROOT/tools" 2>/dev/null |
  grep -vE "^$ROOT/src/(trace/settings\.c|mpi/pmpi/|analyze/)")
[ -z "$envs" ] || err "MLPROF_* settings read around prof__env (src/trace/settings.h):
$envs"

bufs=$(grep -rnE '\b(err|note|msg|why|cause)[A-Za-z_]*\[256\]|\b(err|note|msg|why|cause)[A-Za-z_]*, 256,' \
  "$ROOT/src" "$ROOT/tools" 2>/dev/null)
[ -z "$bufs" ] || err "error buffers of a bare 256 (use PROF_ERR_MAX, src/trace/errbuf.h):
$bufs"

if [ -n "$CORE_OBJS" ]; then
  core=$(echo "$CORE_OBJS" | tr ':' ' ')
  trace=$(echo "$TRACE_OBJS" | tr ':' ' ')
  # shellcheck disable=SC2086 # the lists are split on purpose
  owners=$(for o in $core; do
    nm --defined-only -g "$o" | awk -v f="${o##*/}" '$3 ~ /^prof__/ { n = $3; sub(/^prof__/, "", n); split(n, w, "_"); print w[1], f }'
  done | sort -u | awk '{ files[$1] = files[$1] " " $2; k[$1]++ } END { for (p in k) if (k[p] > 1) print "  prof__" p "_:" files[p] }')
  [ -z "$owners" ] || err "internal name families defined in several files of the core (one owner per prefix):
$owners"
  # shellcheck disable=SC2086
  defined=$(nm --defined-only -g $core $trace 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
  # shellcheck disable=SC2086
  used=$(nm -u $core 2>/dev/null | awk '$2 ~ /^prof__/ { print $2 }' | sort -u)
  outside=$(echo "$used" | while read -r sym; do
    [ -n "$sym" ] && ! echo "$defined" | grep -qx "$sym" && echo "  $sym"
  done)
  [ -z "$outside" ] || err "the core uses internal names defined outside src/core and src/trace (pass them through an interface: core/assembly.h, producer.h):
$outside"
fi

if [ -n "$CLI" ]; then
  libs=$(ldd "$CLI" 2>&1) || err "ldd $CLI failed: $libs"
  case $libs in
  *libpapi*) err "$CLI loads libpapi: $libs" ;;
  esac
  case $libs in
  *libunwind*) err "$CLI loads libunwind: $libs" ;;
  esac
  if nm "$CLI" 2>/dev/null | grep -Eq ' [TtWw] (malloc|calloc|realloc|free)$'; then
    err "$CLI defines its own malloc (the interposer is linked into the command)"
  fi
fi

if [ -n "$LIB" ]; then
  needed=$(readelf -d "$LIB" 2>&1 | awk '/NEEDED/ { print $NF }') || err "readelf -d $LIB failed"
  case $needed in
  *libpapi* | *libpfm* | *libdw* | *libelf* | *libz.so*) err "$LIB links what it opens at run time or never needs: $needed" ;;
  esac
  # PAPI is opened by its soname (libpapi.so.N), not by the development
  # symlink libpapi.so that only the -dev package installs.
  if [ "$HAVE_PAPI" = ON ] && ! strings -a "$LIB" | grep -q '^libpapi\.so\.[0-9]'; then
    err "$LIB does not name PAPI's versioned soname (it would dlopen libpapi.so, which only libpapi-dev installs)"
  fi
fi

if [ -n "$READER" ]; then
  # objdump -t columns: value, flags, section, size, name.
  state=$(objdump -t "$READER" 2>/dev/null | awk '
    /file format/ { obj = $1 }
    NF >= 5 && ($(NF-2) == ".data" || $(NF-2) == ".bss") && $NF != $(NF-2) &&
      $NF !~ /(_once$|^once_)/ { print "  " obj " " $NF " (" $(NF-2) ")" }')
  [ -z "$state" ] || err "the reader keeps mutable file-scope state (pass a context, make it const, or build it under pthread_once):
$state"
fi

[ -s "$TMPF" ] && fail=1
[ "$fail" -eq 0 ] && echo "check_structure: ok"
exit "$fail"
