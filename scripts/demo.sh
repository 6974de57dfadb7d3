#!/usr/bin/env bash
# The local demo: a real control plane, three agents, a leader, a failover. Cleans up after itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "== installing build dependencies (Debian packages) and building leasehold"
bash scripts/setup.sh
# Only what the demo runs: the leasehold binary (not the tests), and no helm.
BUILD_TARGETS=leasehold bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "== building etcd, kube-apiserver and kubectl from Go modules (cached after the first run)"
bin=$(SKIP_HELM=1 bash e2e/controlplane/build.sh | tail -1)
CONTROLPLANE_BIN="$bin" LEASEHOLD_BIN="$PWD/build/leasehold" exec python3 -m e2e.demo
