#!/usr/bin/env bash
# Build Prometheus from its Go module (go.mod here: a `tool` requirement of
# github.com/prometheus/prometheus/cmd/prometheus) into a cache outside the clone, as
# e2e/crmanager/build.sh builds the controller-runtime manager:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/prometheus-<version>/bin/prometheus
#
# Why not Debian's `prometheus` (the e2e tier's, e2e/lib/prometheus.py): Debian builds it without
# the Kubernetes service discovery (its config has no kubernetes_sd_configs), and the node tier's
# prometheus_discovery scenario runs the documented pod-role job against the node's apiserver.
# Static (CGO off), no web UI assets (the HTTP API is all the scenario uses), and of the service
# discoveries only Kubernetes' (Prometheus's own build tags, plugins/plugin_*.go): the cloud
# SDKs of the others are most of a cold build's downloads and compile time.
#
# Does nothing when the binary is there and was built from the same go.mod and go.sum. The last
# line of stdout is always the bin directory:   BIN=$(e2e/node/prometheus/build.sh | tail -1)
#
# Env: LEASEHOLD_E2E_CACHE (cache root), FORCE=1 (rebuild).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "prometheus/build.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../../go_cache.sh"

VERSION="$(awk '$1 == "github.com/prometheus/prometheus" && $2 ~ /^v/ { print $2; exit }' "$HERE/go.mod")"
[[ -n "$VERSION" ]] || { log "cannot read the prometheus version from go.mod"; exit 1; }

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/prometheus-$VERSION"
BIN="$OUT/bin"

# Bump RECIPE when the build flags change. A changed stamp rebuilds.
RECIPE=2
STAMP="recipe=$RECIPE $(cat "$HERE"/go.{mod,sum} | sha256sum | cut -c1-16)"

all_present() {
  [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" && -x "$BIN/prometheus" ]]
}

go_cache_current all_present
log "building prometheus ($VERSION) ..."
# The version its build info reports (/api/v1/status/buildinfo): the module's.
GOFLAGS="${GOFLAGS:-} -tags=remove_all_sd,enable_kubernetes_sd" \
  go_one_binary prometheus github.com/prometheus/prometheus/cmd/prometheus \
  "-X github.com/prometheus/common/version.Version=$VERSION"
