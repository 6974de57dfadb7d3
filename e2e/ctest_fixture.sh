#!/usr/bin/env bash
# CTest fixture for the shared control plane: `start DIR` builds the binaries (cached outside
# the clone) and starts etcd + kube-apiserver; `stop DIR` stops them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd=$1 dir=$2
case "$cmd" in
  start)
    bash "$here/controlplane/controlplane.sh" stop "$dir" >/dev/null 2>&1 || true
    t=$SECONDS
    bin=$(bash "$here/controlplane/build.sh" | tail -1)
    echo "control-plane binaries ready in $((SECONDS - t))s: $bin"
    # No owner PID: this fixture process exits at once; the TTL is the backstop.
    CONTROLPLANE_BIN="$bin" CONTROLPLANE_TTL=5400 bash "$here/controlplane/controlplane.sh" start "$dir"
    ;;
  stop)
    bash "$here/controlplane/controlplane.sh" stop "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
