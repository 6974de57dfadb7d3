# Sourced by scripts/test.sh: run the suite as named stages, some of them in the background, and
# print a table of every stage with its start and wall time when the script exits, passed or not.
# The table is printed, never asserted: it makes the suite's time budget visible on every run
# (docs/building.md, "Where make test's time goes").
#
#   stage NAME CMD...      run CMD; its output goes where the caller's goes. Inside a background
#                          stage it is a row of its own, listed under that stage. CMD is a
#                          program, never a shell function: it runs on the left of `||`, where
#                          bash turns `set -e` off inside a function (a failure in its middle
#                          would pass unseen); stage refuses one.
#   stage_bg NAME CMD...   start CMD in the background, in a process group of its own; its output
#                          goes to a log that stage_wait prints (a background stage's lines would
#                          interleave with the foreground's)
#   stage_wait NAME        wait for a background stage, print its log, return its exit status
#                          (its row ends when the stage ended, not when it was waited for)
#   stage_skip NAME WHY    a row for a stage that a LEASEHOLD_SKIP_* variable left out
#   stage_note < TEXT      lines printed under the table (e.g. what one stage's tests took)
#
# Every stage writes its start and its end as a line of STAGES_DIR/events (appends of one short
# line: a background stage's subshell writes there too), and the table is read from that file.
# On exit, background stages still running are stopped (their process groups get SIGTERM).

STAGES_T0=$SECONDS
STAGES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-stages.XXXXXX")
STAGES_PARENT=""          # inside a background stage: its name
declare -A STAGE_PID=() STAGE_LOG=()

_stage_event() { # start|end NAME [STATUS]
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$((SECONDS - STAGES_T0))" "$2" "${3:-}" "$STAGES_PARENT" \
    >>"$STAGES_DIR/events"
}
_stage_status() { # RC
  if (($1 == 0)); then echo ok; else echo "FAILED (exit $1)"; fi
}

stage() { # NAME CMD...
  local name=$1 rc=0
  shift
  if declare -F "$1" >/dev/null; then
    echo "stages.sh: stage '$name' runs the shell function $1; set -e would be off in it" >&2
    return 2
  fi
  echo
  echo "=== $name ($((SECONDS - STAGES_T0))s)"
  _stage_event start "$name"
  "$@" || rc=$?
  _stage_event end "$name" "$(_stage_status "$rc")"
  return "$rc"
}

stage_bg() { # NAME CMD...
  local name=$1
  shift
  STAGE_LOG[$name]=$STAGES_DIR/bg-${#STAGE_LOG[@]}.log
  echo
  echo "=== $name ($((SECONDS - STAGES_T0))s, in the background)"
  _stage_event start "$name"
  # A process group of its own (set -m), so that an early exit stops the go commands, ctest and
  # the tests it started, not only the shell. Its stages are listed under it in the table. The
  # subshell writes its own end when it exits (set -e stays on for CMD: it is not left of ||).
  set -m
  (
    trap 'rc=$?; STAGES_PARENT=""; _stage_event end "$name" "$(_stage_status "$rc")"' EXIT
    STAGES_PARENT=$name
    "$@"
  ) >"${STAGE_LOG[$name]}" 2>&1 </dev/null &
  STAGE_PID[$name]=$!
  set +m
}

stage_wait() { # NAME
  local name=$1 rc=0
  [[ -n "${STAGE_PID[$name]:-}" ]] || { echo "stages.sh: no background stage '$name'" >&2; exit 2; }
  echo
  echo "=== waiting for $name ($((SECONDS - STAGES_T0))s)"
  wait "${STAGE_PID[$name]}" || rc=$?
  STAGE_PID[$name]=""
  sed 's/^/  | /' "${STAGE_LOG[$name]}"
  return "$rc"
}

stage_skip() { # NAME WHY
  _stage_event start "$1"
  _stage_event end "$1" "skipped: $2"
}

stage_note() { cat >>"$STAGES_DIR/notes"; }

stage_table() {
  echo
  echo "=== stages: wall seconds from the start; indented rows ran inside the background stage above"
  awk -F'\t' -v now="$((SECONDS - STAGES_T0))" '
    $1 == "start" { n++; name[n] = $3; start[$3] = $2; parent[$3] = $5 }
    $1 == "end" && !($3 in end) { end[$3] = $2; status[$3] = $4 }
    function row(s, indent,   e) {
      e = (s in end) ? end[s] : now
      printf "%-64s %6d %6d  %s\n", indent s, start[s], e - start[s], \
        (s in status) ? status[s] : "did not end"
    }
    END {
      printf "%-64s %6s %6s  %s\n", "stage", "start", "wall", "status"
      for (i = 1; i <= n; i++) {
        if (parent[name[i]] != "") continue
        row(name[i], "")
        for (j = 1; j <= n; j++) if (parent[name[j]] == name[i]) row(name[j], "  ")
      }
      printf "%-64s %6s %6d\n", "total", "", now
    }' "$STAGES_DIR/events" 2>/dev/null || true
  [[ ! -s "$STAGES_DIR/notes" ]] || cat "$STAGES_DIR/notes"
}

_stages_exit() {
  local rc=$? name pid
  # Background stages not waited for: those still running are stopped (their own end, written
  # after this, is ignored: a row keeps its first end); the log of each is printed whole.
  for name in "${!STAGE_PID[@]}"; do
    pid=${STAGE_PID[$name]}
    [[ -n "$pid" ]] || continue
    if kill -0 "$pid" 2>/dev/null; then
      _stage_event end "$name" "stopped: the run ended first"
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    echo "--- the log of $name:"
    sed 's/^/  | /' "${STAGE_LOG[$name]}"
  done
  stage_table
  rm -rf "$STAGES_DIR"
  exit "$rc"
}
trap _stages_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
