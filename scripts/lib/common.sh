# scripts/lib/common.sh - the helpers the bash scripts of scripts/ share (issue 38). A script
# sources it by its own path, so it works from any directory:
#
#   . "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/common.sh"
#
# It defines functions only: no options (set -e/-u stay the script's choice), no traps, no
# variables. Output conventions: progress and errors on stderr (log, die), figures on stdout
# as key=value lines (res). Every wait is bounded by a deadline in whole seconds.
# The Python scripts share scripts/lib/sluice_scripts.py.

# log MESSAGE...: a timestamped progress line on stderr.
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# die MESSAGE...: "SCRIPT: MESSAGE" on stderr, then exit 1.
die() { echo "${0##*/}: $*" >&2; exit 1; }

# res KEY VALUE: one figure, "KEY=VALUE", on stdout.
res() { printf '%s=%s\n' "$1" "$2"; }

# now: the wall clock in seconds with microseconds (for differences through calc).
now() { printf '%s' "$EPOCHREALTIME"; }

# calc EXPRESSION [DIGITS]: EXPRESSION evaluated by awk, printed with DIGITS decimals (3).
calc() { awk "BEGIN{ printf \"%.${2:-3}f\", ($1) }"; }

# The wall clock in whole microseconds (EPOCHREALTIME without its locale's decimal point).
now_us() { printf '%s' "${EPOCHREALTIME//[!0-9]/}"; }

# free_port: a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# poll_until SECONDS STEP COMMAND...: runs COMMAND every STEP seconds until it succeeds
# (returns 0) or SECONDS have passed (returns 1).
poll_until() {
  local end=$(( $(now_us) + $1 * 1000000 )) step=$2
  shift 2
  until "$@"; do
    [ "$(now_us)" -lt "$end" ] || return 1
    sleep "$step"
  done
}

# all_exited PID...: succeeds when none of the processes exists any more.
all_exited() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 1; done
  return 0
}

# stop_pids SECONDS PID...: SIGTERM to each process, up to SECONDS for all of them to exit,
# then SIGKILL to any left. Only the PIDs given are signalled.
stop_pids() {
  local seconds=$1 pid
  shift
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  poll_until "$seconds" 0.1 all_exited "$@" || true
  for pid in "$@"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# wait_listening OUT PID [SECONDS]: prints the address a `sluice server --listen HOST:0`
# writes to its stdout file OUT ("listening on ADDR"). Fails when PID exits first or nothing
# is printed within SECONDS (20).
wait_listening() {
  local out=$1 pid=$2 end=$(( $(now_us) + ${3:-20} * 1000000 )) addr
  while true; do
    addr=$(sed -n 's/^listening on //p' "$out" 2>/dev/null | head -1 || true)
    if [ -n "$addr" ]; then
      echo "$addr"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    [ "$(now_us)" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# metric_sum NAME [LABELS] [FORMAT] < METRICS: the sum of the samples of the Prometheus family
# NAME whose labels match the regex LABELS (e.g. 'state="RUNNING"'), printed with FORMAT (%d).
metric_sum() {
  awk -v name="$1" -v sel="${2:-}" -v fmt="${3:-%d}" '
    $1 ~ "^"name"({|$)" && $1 ~ sel { s += $2 } END { printf fmt, s }'
}

# run_or_die SECONDS OUT COMMAND...: runs COMMAND, capped at SECONDS (timeout), with its stdout
# in OUT and its stderr in OUT.err; when it fails, shows that stderr and dies.
run_or_die() {
  local seconds=$1 out=$2 rc=0
  shift 2
  timeout "$seconds" "$@" > "$out" 2> "$out.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$out.err" >&2
    die "run failed (exit $rc): $*"
  fi
}

# emit_report REPORT OUT: copies the file REPORT to OUT (and says so on stderr), or prints it
# when OUT is empty.
emit_report() {
  if [ -n "$2" ]; then
    cp "$1" "$2"
    echo "${0##*/}: wrote $2" >&2
  else
    cat "$1"
  fi
}
