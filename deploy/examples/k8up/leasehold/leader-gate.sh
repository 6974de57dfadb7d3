#!/bin/bash
# FALLBACK (the example now uses `leasehold gate`; see ../README.md): for a leasehold image
# without the gate subcommand.
#
# leader-gate.sh COMMAND [ARGS...]: runs COMMAND only while this pod leads, as the leasehold
# sidecar says. For a main container that cannot ask /is-leader itself (K8up's operator schedules
# backups as soon as it runs): the gate is its entrypoint.
#
#   1. Wait until GET /is-leader answers 200 (anything else, or no answer, means "not leader").
#   2. Start COMMAND, then ask again every LEADER_GATE_POLL seconds. The first answer that is not
#      200 stops COMMAND (SIGTERM, SIGKILL after LEADER_GATE_STOP_TIMEOUT s) and goes back to 1.
#   3. On SIGTERM (pod shutdown): stop COMMAND the same way, then POST /release, so that with a
#      classic sidecar (--release-on-shutdown=safe) the next leader starts at once instead of
#      after renew-deadline. With a native sidecar it just releases a little earlier.
#   If COMMAND exits by itself, the gate exits with its status (the container restarts).
#
# Why polling is enough: the sidecar stops answering 200 at its validUntil, and no other replica
# can take the lock before lease-duration - renew-deadline (5 s with the defaults 15 s / 10 s)
# after that. The gate needs at most LEADER_GATE_POLL + 1 s (request timeout) to notice and
# LEADER_GATE_STOP_TIMEOUT to stop COMMAND: 0.5 + 1 + 2 = 3.5 s < 5 s. Keep that sum below
# lease-duration - renew-deadline if you change the timings.
#
# Needs bash and curl (K8up's image has both).
set -u
api=${LEADER_GATE_URL:-http://localhost:4040}
poll=${LEADER_GATE_POLL:-0.5}
stop_timeout=${LEADER_GATE_STOP_TIMEOUT:-2}
child=""

log() { echo "leader-gate: $*" >&2; }
is_leader() { curl -fsS -m 1 -o /dev/null "$api/is-leader" 2>/dev/null; }
nap() { sleep "$poll" & wait $!; }

stop_child() {
  [[ -n "$child" ]] || return 0
  kill -TERM "$child" 2>/dev/null
  local waited=0
  while kill -0 "$child" 2>/dev/null && ((waited < stop_timeout * 10)); do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL "$child" 2>/dev/null
  wait "$child" 2>/dev/null
  child=""
}

on_term() {
  log "SIGTERM: stopping $name, then releasing the lock"
  stop_child
  curl -fsS -m 2 -X POST -o /dev/null "$api/release" 2>/dev/null || true
  exit 0
}
(($# > 0)) || { log "usage: leader-gate.sh COMMAND [ARGS...]"; exit 2; }
name=$1
trap on_term TERM INT

while true; do
  until is_leader; do nap; done
  log "this pod leads: starting $*"
  "$@" &
  child=$!
  while kill -0 "$child" 2>/dev/null && is_leader; do nap; done
  if ! kill -0 "$child" 2>/dev/null; then
    wait "$child"
    rc=$?
    log "$name exited with status $rc"
    exit "$rc"
  fi
  log "leadership not confirmed: stopping $name"
  stop_child
done
