#!/usr/bin/env bash
# The local demo: a real control plane, three agents, a leader, a failover. Cleans up after itself.
#
# Cold start (docs/building.md "Cold start"): the Go build of etcd, kube-apiserver and kubectl is
# the longest step, and needs neither the Debian packages nor the C++ build, so it starts first,
# in the background: its module download and single-threaded link steps overlap the package
# install (network and dpkg bound) and the C++ build. Its output goes to a log file, printed only
# if it fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

go_log=$(mktemp "${TMPDIR:-/tmp}/leasehold-demo-go.XXXXXX")
go_pid=""
cleanup() {
  # An interrupted or failed demo must not leave the Go build running.
  if [[ -n "$go_pid" ]] && kill -0 "$go_pid" 2>/dev/null; then
    kill -- "-$go_pid" 2>/dev/null || kill "$go_pid" 2>/dev/null || true
    wait "$go_pid" 2>/dev/null || true
  fi
  rm -f "$go_log" "$go_log.out"
}
trap cleanup EXIT

echo "== building etcd, kube-apiserver and kubectl from Go modules, in the background (cached after the first run)"
# Its own process group (set -m), so that cleanup stops the go commands it started too.
set -m
SKIP_HELM=1 bash e2e/controlplane/build.sh >"$go_log.out" 2>"$go_log" &
go_pid=$!
set +m

echo "== installing build dependencies (Debian packages) and building leasehold"
bash scripts/setup.sh demo
# Only what the demo runs: the leasehold binary (not the tests), and no helm.
BUILD_TARGETS=leasehold bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

echo "== waiting for the Go build"
rc=0
wait "$go_pid" || rc=$?
go_pid=""
if ((rc != 0)); then
  echo "demo: building the control plane failed (exit $rc):" >&2
  cat "$go_log" >&2
  exit 1
fi
bin=$(tail -1 "$go_log.out")
CONTROLPLANE_BIN="$bin" LEASEHOLD_BIN="$PWD/build/leasehold" python3 -m e2e.demo
