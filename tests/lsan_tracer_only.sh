#!/bin/sh
# lsan_tracer_only.sh — the rule that lets the ASan step rerun a test: every
# failed test must show LeakSanitizer's tracer crashing itself and nothing
# else a sanitizer reports. Checked on ctest logs laid out as ctest writes
# them (LastTestsFailed.log, LastTest.log), including a test whose name is
# the prefix of another's.
#
# usage: lsan_tracer_only.sh SCRIPT TMP_DIR
set -u
[ $# -eq 2 ] || { echo "usage: lsan_tracer_only.sh SCRIPT TMP_DIR" >&2; exit 2; }
SCRIPT=$1
rm -rf "$2" && mkdir -p "$2" || exit 2
fails=0

section() { # NAME BODY: one test's part of LastTest.log
  printf '1/2 Testing: %s\n1/2 Test: %s\nOutput:\n----\n%s\n<end of output>\n"%s" end time: Dec 05 09:19 UTC\n"%s" time elapsed: 00:00:01\n\n' \
    "$1" "$1" "$2" "$1" "$1"
}
TRACER='[ RUN      ] protoc_decodes_against_the_schema
Tracer caught signal 11: addr=0x120 pc=0x7fe8b92e80f0 sp=0x7fe8b57fad10
==2480==LeakSanitizer has encountered a fatal error.
==2480==HINT: LeakSanitizer does not work under ptrace (strace, gdb, etc)
[  FAILED  ] protoc_decodes_against_the_schema'
LEAK='==77==ERROR: LeakSanitizer: detected memory leaks
Direct leak of 24 byte(s) in 1 object(s) allocated from:'
PLAIN='[  ERROR   ] --- 0x1 != 0
[  FAILED  ] ranges_steps_and_threads'

case_() { # NAME WANT FAILED-LIST, then the log on stdin
  d="$2/$1"; mkdir -p "$d"
  cat >"$d/LastTest.log"
  printf '%s' "$4" >"$d/LastTestsFailed.log"
  "$SCRIPT" "$d"; got=$?
  if [ "$got" -ne "$3" ]; then echo "FAIL $1: exit $got, want $3"; fails=$((fails + 1)); else echo "ok   $1"; fi
}
T=$2
{ section test_export "$PLAIN"; section test_export_perfetto "$TRACER"; } |
  case_ tracer_only "$T" 0 '17:test_export_perfetto
'
{ section test_export "$TRACER"; section test_export_perfetto "$PLAIN"; } |
  case_ prefix_name_other_failure "$T" 1 '17:test_export_perfetto
'
{ section a "$TRACER"; section b "$PLAIN"; } |
  case_ one_real_failure_among_two "$T" 1 '1:a
2:b
'
section a "$TRACER
$LEAK" | case_ tracer_and_leak_report "$T" 1 '1:a
'
section a "$TRACER
/x.c:3:5: runtime error: signed integer overflow" | case_ tracer_and_ubsan_report "$T" 1 '1:a
'
section a "$PLAIN" | case_ no_tracer "$T" 1 '1:a
'
section a "$TRACER" | case_ nothing_failed "$T" 1 ''
section a "$TRACER" | case_ failed_test_missing_from_log "$T" 1 '9:zz
'
[ "$fails" -eq 0 ] || exit 1
echo "all cases agree"
