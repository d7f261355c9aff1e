#!/bin/sh
# alloc_samples.sh — CPU samples that land inside glibc's malloc or free
# keep only the interrupted instruction (the sampler's handler must not
# unwind there: libunwind may allocate and the allocator holds its lock),
# while samples elsewhere keep their whole stack. A program doing nothing
# but malloc/free pairs runs under `mlprof run` at about 1 kHz; in the
# folded export no stack may hold both an allocator frame and a frame of
# the program. Exits 77 (skipped) when libc's frames carry no names (no
# libc6-dbg), since the check would then see nothing.
#
# usage: alloc_samples.sh MLPROF LIBMLPROF_SO MEM_PROG TMP_DIR
set -u
MLPROF=$1
LIB=$2
PROG=$3
mkdir -p "$4"
WORK=$(mktemp -d "$4/alloc_samples.XXXXXX") || exit 2
unset MLPROF_OUTPUT MLPROF_MODULES LD_PRELOAD
MLPROF_SAMPLE_HZ=997
export MLPROF_SAMPLE_HZ
FAILS=0
fail() {
  echo "alloc_samples: FAIL $*"
  FAILS=$((FAILS + 1))
}

# Frames of glibc's allocator, as libc6-dbg names them (inlined helpers of
# one instruction included), and the frames of the program and its start
# (which a sample inside the allocator must not reach).
ALLOC='^(_int_[a-z_]+|malloc[a-z_]*|free|cfree|__libc_[a-z]*alloc|__libc_free|__GI___libc_[a-z_]+|tcache_[a-z_]+|arena_[a-z_]+|chunk_[a-z_]+|checked_request2size|unlink_chunk|mremap_chunk|munmap_chunk|sysmalloc[a-z_]*)( \[inlined\]|_\[inlined\])?$'
PROGRAM='^(_start|__libc_start_main|__libc_start_call_main|main|churn|churn_leak)$'

for mode in counts sampled; do
  out="$WORK/$mode"
  mkdir -p "$out"
  "$MLPROF" run -q --mem "$mode" --library "$LIB" -o "$out" -- "$PROG" churn 20000000 >"$out/stdout" 2>"$out/stderr" ||
    fail "$mode: mlprof run: $(cat "$out/stderr")"
  trace=$(ls "$out"/*.mlpt 2>/dev/null | head -n 1)
  [ -n "$trace" ] || { fail "$mode: no trace"; continue; }
  "$MLPROF" export --folded -q -o "$out/folded.txt" "$trace" >/dev/null 2>&1 || { fail "$mode: export --folded"; continue; }
  # Each folded line: frames joined by ';', a space, the count.
  awk -v re="$ALLOC" -v prog="$PROGRAM" -v mode="$mode" '
    {
      n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
      k = split(line, f, ";"); in_alloc = 0; other = ""
      for (i = 1; i <= k; i++) {
        if (f[i] ~ re) in_alloc = 1
        else if (f[i] ~ prog) other = f[i]
      }
      if (in_alloc) { inside += n; if (other != "") { bad += n; if (!shown++) print mode ": unwound through the allocator: " $0 } }
      total += n
    }
    END { printf "%s: %d samples, %d inside the allocator, %d unwound through it\n", mode, total, inside, bad
          if (bad) exit 1; if (inside < 5) exit 77 }' "$out/folded.txt"
  rc=$?
  if [ $rc -eq 1 ]; then fail "$mode: a sample inside malloc or free was unwound"; fi
  if [ $rc -eq 77 ]; then
    echo "alloc_samples: skipping: no named samples inside glibc's allocator (libc6-dbg not installed?)"
    exit 77
  fi
done

if [ $FAILS -ne 0 ]; then
  echo "alloc_samples: $FAILS failure(s); files in $WORK"
  exit 1
fi
rm -rf "$WORK"
echo "alloc_samples: ok"
