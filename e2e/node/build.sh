#!/usr/bin/env bash
# Build the node's Kubernetes commands (kubelet, kube-controller-manager, kube-scheduler,
# kube-proxy) from the Go module in k8s/ into a cache outside the clone:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/node-k8s-<version>/bin/
#
# The module is pinned to the same k8s.io/kubernetes as ../controlplane/k8s (checked below) but
# kept apart, with its own stamp: adding these commands to the control plane's module would
# change its stamp (rebuilding the apiserver) and pull ~40 modules into its graph.
# Does nothing when the binaries are there. The last line of stdout is the bin directory.
#
# Env: LEASEHOLD_E2E_CACHE (cache root), FORCE=1 (rebuild).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "node/build.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../go_cache.sh"

modver() { # GO.MOD MODULE
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}
K8S_VERSION="$(modver "$HERE/k8s/go.mod" k8s.io/kubernetes)"
CP_VERSION="$(modver "$HERE/../controlplane/k8s/go.mod" k8s.io/kubernetes)"
[[ -n "$K8S_VERSION" && "$K8S_VERSION" == "$CP_VERSION" ]] || {
  log "node k8s ($K8S_VERSION) must equal the control plane's ($CP_VERSION): bump both go.mod files"; exit 1; }

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/node-k8s-$K8S_VERSION"
BIN="$OUT/bin"
BINARIES=(kubelet kube-controller-manager kube-scheduler kube-proxy)

# Bump RECIPE when the build flags below change; with go.mod/go.sum it forms the stamp.
RECIPE=1
STAMP="recipe=$RECIPE $(cat "$HERE"/k8s/go.{mod,sum} | sha256sum | cut -c1-16)"

all_present() {
  local b
  [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" ]] || return 1
  for b in "${BINARIES[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done
}
go_cache_current all_present
need_go

mkdir -p "$BIN"
rm -f "$BIN/.stamp" "$BIN"/*
STAGE="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
start=$SECONDS
k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"
LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
  LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
pkgs=()
for b in "${BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
log "building ${BINARIES[*]} $K8S_VERSION ..."
# One `go build` for all four: they share most packages, so one link graph is cheapest.
(cd "$HERE/k8s" && go build -trimpath -ldflags="$LDFLAGS" -o "$STAGE/" "${pkgs[@]}") >&2
for b in "${BINARIES[@]}"; do mv -f "$STAGE/$b" "$BIN/$b"; done
echo "$STAMP" >"$BIN/.stamp"
log "built in $((SECONDS - start))s: $BIN"
echo "$BIN"
