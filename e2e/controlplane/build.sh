#!/usr/bin/env bash
# Build the e2e control-plane binaries (kube-apiserver, kubectl, etcd, helm)
# from the Go modules in this directory into a cache outside the clone:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/<versions>/bin/
#
# Does nothing when the binaries are already there. The last line of stdout
# is always the bin directory:   BIN=$(e2e/controlplane/build.sh | tail -1)
#
# Env:
#   LEASEHOLD_E2E_CACHE  cache root (default $HOME/.cache/leasehold-e2e)
#   SKIP_HELM=1          do not build helm (it is not needed by controlplane.sh)
#   FORCE=1              rebuild even if the binaries exist
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "build.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../go_cache.sh"

# Version of the single module a sub-module requires (read from its go.mod).
modver() { # DIR MODULE
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$HERE/$1/go.mod"
}

K8S_VERSION="$(modver k8s k8s.io/kubernetes)"
ETCD_VERSION="$(modver etcd go.etcd.io/etcd/server/v3)"
HELM_VERSION="$(modver helm helm.sh/helm/v3)"
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" && -n "$HELM_VERSION" ]] || {
  log "could not read versions from go.mod files (k8s=$K8S_VERSION etcd=$ETCD_VERSION helm=$HELM_VERSION)"; exit 1; }

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}"
OUT="$CACHE_ROOT/$KEY"
BIN="$OUT/bin"

BINARIES=(kube-apiserver kubectl etcd)
[[ "${SKIP_HELM:-0}" == 1 ]] || BINARIES+=(helm)

# Bump RECIPE when the build flags below change; together with the go.mod /
# go.sum contents it forms a stamp, and a changed stamp rebuilds everything.
RECIPE=1
STAMP="recipe=$RECIPE $(cat "$HERE"/{k8s,etcd,helm}/go.{mod,sum} | sha256sum | cut -c1-16)"

all_present() {
  local b
  [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" ]] || return 1
  for b in "${BINARIES[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done
}

go_cache_current all_present
need_go

mkdir -p "$BIN"
if [[ ! -f "$BIN/.stamp" || "$(cat "$BIN/.stamp")" != "$STAMP" ]]; then
  # go.mod/go.sum or the recipe changed since the last build: drop all
  # binaries (also those this run skips, e.g. helm with SKIP_HELM=1)
  rm -f "$BIN/.stamp" "$BIN"/*
fi
STAGE="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

export CGO_ENABLED=0
# Keep whatever GOFLAGS the machine sets (e.g. -buildvcs=false); go.sum is
# committed, so the default -mod=readonly is enough.
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
BUILD=(go build -trimpath)

start=$SECONDS

# The version shown by /version and kubectl/helm comes from ldflags, exactly
# as hack/lib/version.sh does it (otherwise it is v0.0.0-master+$Format$).
k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"
K8S_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  K8S_LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
  K8S_LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

for b in kube-apiserver kubectl; do
  if [[ "${FORCE:-0}" == 1 || ! -x "$BIN/$b" ]]; then
    log "building $b $K8S_VERSION ..."
    (cd "$HERE/k8s" && "${BUILD[@]}" -ldflags="$K8S_LDFLAGS" -o "$STAGE/$b" "k8s.io/kubernetes/cmd/$b") >&2
    mv -f "$STAGE/$b" "$BIN/$b"
  fi
done

if [[ "${FORCE:-0}" == 1 || ! -x "$BIN/etcd" ]]; then
  log "building etcd $ETCD_VERSION ..."
  (cd "$HERE/etcd" && "${BUILD[@]}" -ldflags="-s -w" -o "$STAGE/etcd" go.etcd.io/etcd/server/v3) >&2
  mv -f "$STAGE/etcd" "$BIN/etcd"
fi

if [[ "${SKIP_HELM:-0}" != 1 ]] && [[ "${FORCE:-0}" == 1 || ! -x "$BIN/helm" ]]; then
  log "building helm $HELM_VERSION ..."
  # Like helm's Makefile: version, and the k8s version that `helm template`
  # / `helm lint` assume offline (.Capabilities.KubeVersion; else v1.20.0).
  helm_k8s_minor=$(cd "$HERE/helm" && go list -m -f '{{.Version}}' k8s.io/client-go) # v0.34.2
  helm_k8s_minor=${helm_k8s_minor#v0.}; helm_k8s_minor=${helm_k8s_minor%%.*}
  HELM_LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    HELM_LDFLAGS+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$helm_k8s_minor"
  done
  (cd "$HERE/helm" && "${BUILD[@]}" -ldflags="$HELM_LDFLAGS" -o "$STAGE/helm" helm.sh/helm/v3/cmd/helm) >&2
  mv -f "$STAGE/helm" "$BIN/helm"
fi

echo "$STAMP" >"$BIN/.stamp"
log "built in $((SECONDS - start))s: $BIN"
echo "$BIN"
