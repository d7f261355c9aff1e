# mlprof.bash - bash completion for the mlprof command (installed as
# share/bash-completion/completions/mlprof; or `source` it from ~/.bashrc).
# Completes the commands, each command's options and their values, traces
# (*.mlpt and folders) for the commands that read them, the pids of running
# jobs with a live page for top, trigger and resume, and the program after
# `mlprof run ... --`. Needs only bash; bash-completion is not required.
# tests/cli_docs.sh checks that every command and option of `mlprof --help`
# is here: keep one `name) opts="..."` line per command.

_mlprof_reply() { # the words compgen "$@" gives, one per line, into COMPREPLY
  mapfile -t COMPREPLY < <(compgen "$@")
}

_mlprof_pids() { # pids of the live pages (mlprof.<pid>) in the live folder
  local dir=${MLPROF_LIVE_DIR:-/dev/shm/mlprof-${EUID:-$(id -u)}} f pids=
  for f in "$dir"/mlprof.[0-9]*; do
    [ -e "$f" ] && pids="$pids ${f##*/mlprof.}"
  done
  _mlprof_reply -W "$pids" -- "$1"
}

_mlprof_traces() { # *.mlpt files and folders (a folder of rank traces)
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -X '!*.mlpt' -- "$1"; compgen -d -- "$1")
}

_mlprof() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local commands="report info export diff top trigger resume run write-reports"
  local cmd= at=0 i opts
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=${COMP_WORDS[i]} at=$i; break ;;
    esac
  done
  if [ -z "$cmd" ]; then
    _mlprof_reply -W "$commands --help --version" -- "$cur"
    return
  fi
  if [ "$cmd" = run ]; then # after `--`: the program, then its arguments
    for ((i = at + 1; i < COMP_CWORD; i++)); do
      [ "${COMP_WORDS[i]}" = -- ] || continue
      compopt -o filenames 2>/dev/null
      if [ $((i + 1)) -eq "$COMP_CWORD" ]; then _mlprof_reply -c -- "$cur"; else _mlprof_reply -f -- "$cur"; fi
      return
    done
  fi
  case $cmd in
    report) opts="--format -f --output -o --quiet -q --help" ;;
    info) opts="--help" ;;
    export) opts="--chrome --perfetto --tensorboard --folded --pprof --pprof-heap --flamegraph --dot --output -o --max-events --window --quiet -q --help" ;;
    diff) opts="--format -f --output -o --fail-if-slower --top --quiet -q --help" ;;
    top) opts="--once -1 --interval -n --help" ;;
    trigger) opts="--steps -n --timeout -t --no-wait --help" ;;
    resume) opts="--help" ;;
    run) opts="--output -o --mem --max-mb --no-children --mpi --library --format -f --no-report --quiet -q --help --" ;;
    write-reports) opts="--by --status-fd --help" ;;
    *) return ;;
  esac
  case $prev in # an option's value
    --format | -f)
      if [ "$cmd" = run ]; then _mlprof_reply -W "text json" -- "$cur"; else _mlprof_reply -W "text json html" -- "$cur"; fi
      return ;;
    --mem) _mlprof_reply -W "off counts sampled full" -- "$cur"; return ;;
    --tensorboard) compopt -o filenames 2>/dev/null; _mlprof_reply -d -- "$cur"; return ;;
    --output | -o | --flamegraph | --library) compopt -o filenames 2>/dev/null; _mlprof_reply -f -- "$cur"; return ;;
    --max-events | --max-mb | --window | --fail-if-slower | --top | --interval | --steps | --timeout | -n | -t) return ;;
  esac
  if [ "${cur#-}" != "$cur" ]; then
    _mlprof_reply -W "$opts" -- "$cur"
    return
  fi
  case $cmd in
    report | info | export | diff | write-reports) _mlprof_traces "$cur" ;;
    top | trigger | resume) _mlprof_pids "$cur" ;;
    run) _mlprof_reply -W "--" -- "$cur" ;;
  esac
}

complete -F _mlprof mlprof
