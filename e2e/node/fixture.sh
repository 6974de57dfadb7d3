#!/usr/bin/env bash
# CTest fixture of the node tier (label `node`): `start DIR` installs the node's Debian packages,
# builds the node binaries (cached outside the clone), writes the images (the leasehold image is
# the one e2e_ship_image built; pause and the test app are built here) and brings the node up;
# `stop DIR` tears it down and fails if the host differs from before the start
# (node.sh snapshot: links, netns, iptables, mounts, sysctls, cgroups, processes, host paths).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cmd=$1 dir=$2
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# diff_snapshots BEFORE AFTER: 0 when nothing of the node's is left. Lines that name none of the
# node's things are changes by other work on this shared machine: shown, not failed.
diff_snapshots() {
  local ours='leasehold-node|lh-node|/run/netns|lhnode|lhcni|10\.244\.|10\.250\.|kubepods|cni-|kubelet|containerd|kube-proxy|kube-controller|kube-scheduler|KUBE-|LH-NODE|/var/log/pods|/var/log/containers|/var/lib/cni|/etc/cni|leasehold-etcd|^[<>] [a-z/_]+=[0-9]+$|^[<>] [0-9]+$'
  local d
  d=$(diff "$1" "$2" | grep -E '^[<>]' || true)
  [[ -z "$d" ]] && { echo "teardown diff: clean"; return 0; }
  if grep -Eq "$ours" <<<"$d"; then
    echo "teardown diff: LEFT BEHIND:"; grep -E "$ours" <<<"$d"; return 1
  fi
  echo "teardown diff: only changes that are not the node's (other work on this machine):"
  echo "$d"
}

case "$cmd" in
  start)
    t=$SECONDS
    bash "$here/setup.sh"
    bin=$(nice -n 5 bash "$here/build.sh" | tail -1)
    echo "node binaries ready in $((SECONDS - t))s: $bin"
    bash "$here/node.sh" reclaim
    rm -f "$dir/before.snapshot"
    bash "$here/node.sh" snapshot "$dir/before.snapshot" "$dir"
    t=$SECONDS
    (cd "$repo" && python3 -m e2e.node.images "$dir/images")
    echo "images ready in $((SECONDS - t))s"
    t=$SECONDS
    bash "$here/node.sh" up "$dir"
    echo "node up in $((SECONDS - t))s"
    ;;
  stop)
    t=$SECONDS
    bash "$here/node.sh" down "$dir"
    bash "$here/node.sh" snapshot "$dir/after.snapshot" "$dir"
    echo "node down in $((SECONDS - t))s"
    [[ -f "$dir/before.snapshot" ]] || { echo "no before.snapshot: nothing to compare"; exit 0; }
    diff_snapshots "$dir/before.snapshot" "$dir/after.snapshot"
    ;;
  diff) diff_snapshots "$dir/before.snapshot" "$dir/after.snapshot" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
