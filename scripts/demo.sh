#!/usr/bin/env bash
# The local demo: a real control plane, three agents, a leader, a failover. Cleans up after itself.
#
# Cold start (docs/building.md "Cold start"): the Go build of etcd, kube-apiserver and kubectl is
# the longest step (~5 min of both cores) and needs neither the Debian packages nor the C++ build,
# so it starts first, in the background, and the package install (network and dpkg bound) runs
# beside it. The C++ build waits for it: run at the same time the two only shared the two cores
# (measured: 18 s slower in all, 76 s more CPU, than one after the other). Its progress and
# errors go to the terminal as they come.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

go_out=$(mktemp "${TMPDIR:-/tmp}/leasehold-demo-go.XXXXXX")  # build.sh's stdout: the bin dir
go_pid=""
cleanup() {
  # An interrupted or failed demo must not leave the Go build running.
  if [[ -n "$go_pid" ]] && kill -0 "$go_pid" 2>/dev/null; then
    kill -- "-$go_pid" 2>/dev/null || kill "$go_pid" 2>/dev/null || true
    wait "$go_pid" 2>/dev/null || true
  fi
  rm -f "$go_out"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM

echo "== building etcd, kube-apiserver and kubectl from Go modules, in the background (cached after the first run)"
# Its own process group (set -m), so that cleanup stops the go commands it started too.
set -m
SKIP_HELM=1 bash e2e/controlplane/build.sh >"$go_out" &
go_pid=$!
set +m

echo "== installing build dependencies (Debian packages)"
bash scripts/setup.sh demo

echo "== waiting for the Go build"
rc=0
wait "$go_pid" || rc=$?
go_pid=""
if ((rc != 0)); then
  echo "demo: building the control plane failed (exit $rc; its errors are above)" >&2
  exit 1
fi
echo "== building leasehold"
# Only what the demo runs: the leasehold binary (not the tests), and no helm.
BUILD_TARGETS=leasehold bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
bin=$(tail -1 "$go_out")
CONTROLPLANE_BIN="$bin" LEASEHOLD_BIN="$PWD/build/leasehold" python3 -m e2e.demo
