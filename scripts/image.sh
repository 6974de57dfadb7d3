#!/usr/bin/env bash
# Builds the leasehold image from ./Dockerfile and smoke-runs it, without Docker: buildah with
# chroot isolation and the vfs storage driver, and a local debian:bookworm-slim base made with
# debootstrap from this machine's Debian mirror, so nothing is pulled from a registry.
#
# Usage: scripts/image.sh [all|build|smoke|size|measure [SECONDS]|base]   (default: all = build + smoke + size)
#   base    make docker.io/library/debian:bookworm-slim in the local store (skipped if present)
#   build   base, then `buildah bud --isolation chroot --pull-never -t leasehold:dev .`
#   smoke   the image's root filesystem holds /leasehold and nothing else, and readelf shows
#           no INTERP and no NEEDED; `/leasehold --version` through `buildah run`; then ONE agent
#           run from that root (read-only, uid 65532, chroot) against a real control plane: it
#           must become leader and answer /leader; `leasehold gate -- /leasehold --version` run
#           there too must start its CMD, POST /release when CMD exits and exit 0 (the Lease is
#           free); SIGTERM must stop the agent cleanly.
#   size    uncompressed and gzip -9 size of the image's root filesystem
#   measure one agent from the image leading for SECONDS (default 30): VmRSS, VmHWM, CPU
#
# Env: LEASEHOLD_IMAGE (default localhost/leasehold:dev), LEASEHOLD_E2E_CP (a running
# control-plane dir, e.g. the e2e fixture's; else smoke starts and stops its own),
# CONTROLPLANE_BIN (else e2e/controlplane/build.sh), DEBIAN_MIRROR (else read from the apt
# sources), LEASEHOLD_IMAGE_REBUILD_BASE=1 (make the base image again).
# Needs root (debootstrap, chroot, mount). Installs buildah and debootstrap with apt-get if missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
IMAGE=${LEASEHOLD_IMAGE:-localhost/leasehold:dev}
BASE=docker.io/library/debian:bookworm-slim
export BUILDAH_ISOLATION=chroot
start=$SECONDS

log() { echo "image.sh [$((SECONDS - start))s]: $*" >&2; }
die() { echo "image.sh: $*" >&2; exit 1; }
bah() { buildah --storage-driver vfs "$@"; }

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot, mount)"

ensure_tools() {
  local missing=() p
  for p in buildah debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# debian_mirror [security]: the machine's Debian archives (scripts/debian-mirror.sh).
# shellcheck source=scripts/debian-mirror.sh
source scripts/debian-mirror.sh

cmd_base() {
  ensure_tools
  if [[ "${LEASEHOLD_IMAGE_REBUILD_BASE:-0}" != 1 ]] &&
     bah inspect --type image "$BASE" >/dev/null 2>&1; then
    log "$BASE is in the local store"
    return 0
  fi
  local mirror security tmp ctr mnt t=$SECONDS
  mirror=$(debian_mirror) || die "no Debian mirror in the apt sources; set DEBIAN_MIRROR"
  security=$(debian_mirror security)
  tmp=$(mktemp -d /var/tmp/leasehold-debootstrap.XXXXXX)
  BASE_TMP=$tmp
  log "debootstrap --variant=minbase bookworm from $mirror"
  if ! debootstrap --variant=minbase bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
    tail -20 "$tmp/debootstrap.log" >&2
    rm -rf "$tmp"
    die "debootstrap failed"
  fi
  log "debootstrap done in $((SECONDS - t))s"
  # Like the official image: updates and security next to the release.
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [[ -z "$security" ]] || echo "deb $security bookworm-security main"
  } >"$tmp/rootfs/etc/apt/sources.list"
  # What the official -slim image also leaves out.
  rm -rf "$tmp"/rootfs/var/cache/apt/archives/*.deb "$tmp"/rootfs/var/lib/apt/lists/* \
         "$tmp"/rootfs/usr/share/{doc,man,info}/* "$tmp"/rootfs/var/log/*.log
  ctr=$(bah from scratch)
  mnt=$(bah mount "$ctr")
  cp -a "$tmp/rootfs/." "$mnt/"
  bah umount "$ctr" >/dev/null
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
             --cmd '["bash"]' "$ctr"
  bah commit --rm -q "$ctr" "$BASE" >/dev/null
  rm -rf "$tmp"
  BASE_TMP=""
  log "committed $BASE in $((SECONDS - t))s"
}

cmd_build() {
  cmd_base
  log "buildah bud -t $IMAGE"
  local t=$SECONDS
  # The host's ccache (scripts/ccache.sh) at the build stage's default cache path: an image
  # build compiles only what changed since the last one. A bind mount for the RUN steps only;
  # nothing of it reaches the image.
  local ccache_dir=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
  mkdir -p "$ccache_dir"
  bah bud --isolation chroot --pull-never --volume "$ccache_dir:/root/.cache/ccache" \
    -t "$IMAGE" -f Dockerfile . >&2
  # The image it replaced, if any, is now dangling.
  bah rmi --prune >/dev/null 2>&1 || true
  log "image built in $((SECONDS - t))s"
}

# Runs `buildah from IMAGE` and mounts it; sets CTR and MNT. Cleaned up by cleanup().
CTR="" MNT="" CP_DIR="" CP_OWNED=0 AGENT_PID="" RO="" BASE_TMP=""
cleanup() {
  if [[ -n "$BASE_TMP" ]]; then rm -rf "$BASE_TMP"; fi
  if [[ -n "$AGENT_PID" ]]; then
    pkill -KILL -P "$AGENT_PID" 2>/dev/null || true
    kill -KILL "$AGENT_PID" 2>/dev/null || true
  fi
  if [[ -n "${LOGF:-}" ]]; then rm -f "$LOGF"; fi
  if [[ -n "$RO" ]]; then
    umount "$RO" 2>/dev/null || umount -l "$RO" 2>/dev/null || true
    rmdir "$RO" 2>/dev/null || true
  fi
  if [[ -n "$CTR" ]]; then bah rm "$CTR" >/dev/null 2>&1 || true; fi
  if ((CP_OWNED)); then
    bash e2e/controlplane/controlplane.sh stop "$CP_DIR" >/dev/null 2>&1 || true
    rm -rf "$CP_DIR"
  fi
}
trap cleanup EXIT

open_container() {
  bah inspect --type image "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE; run '$0 build' first"
  CTR=$(bah from --pull-never "$IMAGE")
  MNT=$(bah mount "$CTR")
}

cmd_size() {
  [[ -n "$MNT" ]] || open_container
  local bytes gz bin
  bytes=$(du -sb "$MNT" | cut -f1)
  gz=$(tar -C "$MNT" -cf - . | gzip -9 | wc -c)
  bin=$(stat -c %s "$MNT/leasehold")
  log "size: rootfs $bytes bytes ($((bytes / 1024)) KiB), tar|gzip -9 $gz bytes ($((gz / 1024)) KiB), /leasehold $bin bytes"
  echo "image_bytes=$bytes image_gzip_bytes=$gz binary_bytes=$bin"
}

kubectl_cp() { bash e2e/controlplane/controlplane.sh kubectl "$CP_DIR" "$@"; }

# Buildah's own view of the image: user 65532:65532, entrypoint /leasehold, no shell; then
# `/leasehold --version` through `buildah run` (which ignores ENTRYPOINT: it is passed
# explicitly, as read from the image config).
smoke_version() {
  local cfg entry out
  cfg=$(bah inspect --type image "$IMAGE" | python3 -c '
import json, sys
c = json.load(sys.stdin)["OCIv1"]["config"]
print(c.get("User", ""), json.dumps(c.get("Entrypoint")), json.dumps(c.get("Cmd")))')
  [[ "$cfg" == '65532:65532 ["/leasehold"] null' ]] ||
    die "image config: want user 65532:65532, entrypoint [\"/leasehold\"], no cmd; got $cfg"
  # Before `buildah run`, which adds its own mount points (dev, proc, sys, etc/hosts...).
  local files
  files=$(cd "$MNT" && find . -mindepth 1 | sort | tr '\n' ' ')
  [[ "$files" == "./leasehold " ]] || die "the image must hold /leasehold alone; it holds: $files"
  if readelf -lW "$MNT/leasehold" | grep -q INTERP || readelf -dW "$MNT/leasehold" | grep -q NEEDED; then
    die "/leasehold is not fully static: $(readelf -lW "$MNT/leasehold" | grep -A1 INTERP) $(readelf -dW "$MNT/leasehold" | grep NEEDED)"
  fi
  log "the image holds /leasehold alone: no INTERP, no NEEDED ($(readelf -hW "$MNT/leasehold" | sed -n 's/ *Type: *//p'))"
  entry=${cfg#* \[\"}
  entry=${entry%%\"*}
  out=$(bah run --isolation chroot "$CTR" -- "$entry" --version)
  [[ "$out" == "leasehold "* ]] || die "unexpected --version output: $out"
  log "buildah run $entry --version: $out"
}

# `leasehold gate` from the same root, beside the leading agent: CMD is /leasehold --version (the
# root holds nothing else to run). The gate must start it as leader, and when it exits by itself
# POST /release and exit with its code, 0; the Lease is then free.
smoke_gate() {
  local out rc=0 holder
  out=$(timeout 20 env -i "$(command -v chroot)" --userspec=65532:65532 "$RO" /leasehold gate \
          --address="127.0.0.1:$HPORT" --stop-grace=500ms --status-file=off -- \
          /leasehold --version 2>&1) || rc=$?
  ((rc == 0)) || { echo "$out" >&2; die "leasehold gate exited $rc"; }
  [[ "$out" == *"leasehold "[0-9]* ]] || { echo "$out" >&2; die "the gate's CMD did not run"; }
  grep -q "started CMD" <<<"$out" || { echo "$out" >&2; die "the gate did not log its start"; }
  holder=$(lease_holder)
  [[ -z "$holder" ]] || { echo "$out" >&2; die "the gate's POST /release left holder $holder"; }
  log "leasehold gate in the same root: started CMD as leader, CMD exited 0, released, exit 0"
}

# A control plane (LEASEHOLD_E2E_CP's, else a new one), a namespace with deploy/rbac for lock
# $LOCK, and the service-account mount at its default path inside the image's root; then a
# read-only bind mount of that root (as readOnlyRootFilesystem). Sets CP_DIR, NS, HOST, PORT, RO.
LOCK=leasehold-image NS="" HOST="" PORT="" LOGF=""
prepare_agent() {
  if [[ -n "${LEASEHOLD_E2E_CP:-}" && -f "${LEASEHOLD_E2E_CP}/env" ]]; then
    CP_DIR=$LEASEHOLD_E2E_CP
  else
    CP_DIR=$(mktemp -d /tmp/leasehold-image-cp.XXXXXX)
    CP_OWNED=1
    export CONTROLPLANE_OWNER_PID=$$
    if [[ -z "${CONTROLPLANE_BIN:-}" ]]; then
      CONTROLPLANE_BIN=$(bash e2e/controlplane/build.sh | tail -1)
      export CONTROLPLANE_BIN
    fi
    bash e2e/controlplane/controlplane.sh start "$CP_DIR" >/dev/null
  fi
  NS=image-smoke-$$-$RANDOM
  HOST=$(sed -n 's/^APISERVER_HOST=//p' "$CP_DIR/env" | tr -d "'\"")
  PORT=$(sed -n 's/^APISERVER_PORT=//p' "$CP_DIR/env" | tr -d "'\"")
  bash e2e/controlplane/controlplane.sh ensure-ns "$CP_DIR" "$NS" >/dev/null
  kubectl_cp kustomize deploy/rbac | sed "s/leasehold-lock/$LOCK/g" |
    kubectl_cp apply -n "$NS" -f - >/dev/null
  local sa_dir=$MNT/var/run/secrets/kubernetes.io/serviceaccount
  mkdir -p "$(dirname "$sa_dir")"
  bash e2e/controlplane/controlplane.sh sa-dir "$CP_DIR" "$NS" leasehold "$sa_dir" >/dev/null
  chmod -R a+rX "$MNT/var"
  RO=$(mktemp -d /tmp/leasehold-image-ro.XXXXXX)
  mount --bind "$MNT" "$RO"
  mount -o remount,bind,ro "$RO"
  LOGF=$(mktemp /tmp/leasehold-image-agent.XXXXXX)
}

# Starts /leasehold from the read-only root as uid 65532, in-cluster (nothing but the pod's
# environment), with any PREFIX command (e.g. /usr/bin/time -v) in front. Sets AGENT_PID (the
# prefix's, or leasehold's), LEASEHOLD_PID and HPORT; waits until /leader says isLeader and keeps
# that answer in BODY.
HPORT="" BODY="" LEASEHOLD_PID=""
start_agent() {
  # A port from e2e.lib.common.free_port's range, not bind(0)'s ephemeral one, where outgoing
  # connections take their source ports (free_port says why). Its machine-wide reservation ends
  # with that python process: another test could be handed the port before the agent binds it,
  # a window of about a second in 12,000 ports, and the agent would then fail to listen, loudly.
  HPORT=$(PYTHONPATH=$PWD python3 -c 'from e2e.lib.common import free_port; print(free_port())')
  "$@" env -i KUBERNETES_SERVICE_HOST="$HOST" KUBERNETES_SERVICE_PORT="$PORT" \
      POD_NAME=image-smoke POD_NAMESPACE="$NS" LEASEHOLD_LOCK_NAME="$LOCK" \
      "$(command -v chroot)" --userspec=65532:65532 "$RO" /leasehold \
      --http-address="127.0.0.1:$HPORT" --lease-duration=4s --renew-deadline=3s \
      --retry-period=1s --release-on-shutdown=immediate >"$LOGF" 2>&1 &
  AGENT_PID=$!
  local body="" i
  for ((i = 0; i < 200; i++)); do
    body=$(curl -s --max-time 1 "http://127.0.0.1:$HPORT/leader" || true)
    [[ "$body" == *'"isLeader":true'* ]] && break
    kill -0 "$AGENT_PID" 2>/dev/null || { cat "$LOGF" >&2; die "the agent exited"; }
    sleep 0.1
  done
  [[ "$body" == *'"isLeader":true'* ]] || { cat "$LOGF" >&2; die "the agent did not become leader: $body"; }
  BODY=$body
  LEASEHOLD_PID=$AGENT_PID
  if (($# > 0)); then LEASEHOLD_PID=$(pgrep -P "$AGENT_PID" | head -1); fi
  [[ -n "$LEASEHOLD_PID" ]] || die "cannot find the agent's pid"
}

lease_holder() { kubectl_cp get lease "$LOCK" -n "$NS" -o 'jsonpath={.spec.holderIdentity}'; }

stop_agent() { # expects a clean exit on SIGTERM and the Lease released
  kill -TERM "$LEASEHOLD_PID"
  wait "$AGENT_PID" || { cat "$LOGF" >&2; die "the agent did not exit cleanly on SIGTERM"; }
  AGENT_PID=""
  local holder
  holder=$(lease_holder)
  [[ -z "$holder" ]] || die "the Lease was not released on SIGTERM: holder $holder"
}

cmd_smoke() {
  [[ -n "$MNT" ]] || open_container
  smoke_version
  prepare_agent
  local holder
  start_agent
  log "agent from the image's rootfs (uid 65532, read-only root, in-cluster) leads: $BODY"
  holder=$(lease_holder)
  [[ "$BODY" == *"\"name\":\"$holder\""* ]] || die "Lease holder $holder is not the agent: $BODY"
  smoke_gate
  stop_agent
  log "SIGTERM stopped the agent cleanly; smoke test passed"
}

# measure [SECONDS]: RSS and CPU of one agent from the image that leads for SECONDS (default 30)
# while a "main container" asks /leader once a second: /proc/PID/status VmRSS and VmHWM, CPU
# from /proc/PID/stat, and /usr/bin/time -v's summary after SIGTERM.
cmd_measure() {
  local secs=${1:-30} pid i rss hwm anon file ticks hz
  [[ -n "$MNT" ]] || open_container
  prepare_agent
  start_agent /usr/bin/time -v
  pid=$LEASEHOLD_PID
  log "leading (pid $pid); measuring for ${secs}s"
  for ((i = 0; i < secs; i++)); do
    curl -s --max-time 1 -o /dev/null "http://127.0.0.1:$HPORT/leader" || true
    sleep 1
  done
  [[ $(curl -s --max-time 1 "http://127.0.0.1:$HPORT/leader") == *'"isLeader":true'* ]] ||
    die "the agent stopped leading during the measurement"
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  anon=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
  file=$(awk '/^RssFile/ {print $2}' "/proc/$pid/status")
  ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  hz=$(getconf CLK_TCK)
  log "after ${secs}s leading: VmRSS ${rss} kB (anon ${anon}, file ${file}), VmHWM ${hwm} kB, CPU $((ticks * 1000 / hz)) ms" \
      "($(awk -v t="$ticks" -v h="$hz" -v s="$secs" 'BEGIN {printf "%.3f", 100 * t / h / s}')% of a core)"
  stop_agent
  grep -E 'Maximum resident|User time|System time|Elapsed|context switches' "$LOGF" >&2 || true
  echo "vmrss_kb=$rss vmhwm_kb=$hwm rss_anon_kb=$anon rss_file_kb=$file cpu_ms=$((ticks * 1000 / hz)) seconds=$secs"
}

cmd=${1:-all}
case "$cmd" in
  base) cmd_base ;;
  build) cmd_build ;;
  smoke) cmd_smoke ;;
  size) cmd_size ;;
  measure) shift; cmd_measure "$@" ;;
  all) cmd_build; cmd_smoke; cmd_size ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
log "done ($cmd) in $((SECONDS - start))s"
