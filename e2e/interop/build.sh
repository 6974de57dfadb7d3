#!/usr/bin/env bash
# Build the client-go interop peers (see README.md here) into a cache outside the clone:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/interop-client-go-<current>_<old>/bin/
#     peer-current   client-go of current/go.mod (Lease lock)
#     peer-v0.23     client-go of v0.23/go.mod   (configmaps, configmapsleases, leases, ...)
#
# Does nothing when the binaries are there and were built from the same sources (go.mod, go.sum,
# peer.go). The last line of stdout is always the bin directory:
#   BIN=$(e2e/interop/build.sh | tail -1)
#
# Env: LEASEHOLD_E2E_CACHE (cache root), FORCE=1 (rebuild).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "interop/build.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../go_cache.sh"

modver() { # DIR MODULE: the version DIR/go.mod requires
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$HERE/$1/go.mod"
}
CURRENT="$(modver current k8s.io/client-go)"
OLD="$(modver v0.23 k8s.io/client-go)"
[[ -n "$CURRENT" && -n "$OLD" ]] || { log "cannot read client-go versions from go.mod"; exit 1; }

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/interop-client-go-${CURRENT}_${OLD}"
BIN="$OUT/bin"
PEERS=(current v0.23)

# Bump RECIPE when the build flags change. A changed stamp rebuilds.
RECIPE=1
STAMP="recipe=$RECIPE $(cat "$HERE"/common/peer.go "$HERE"/{current,v0.23}/go.{mod,sum} | sha256sum | cut -c1-16)"

all_present() {
  local p
  [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" ]] || return 1
  for p in "${PEERS[@]}"; do [[ -x "$BIN/peer-$p" ]] || return 1; done
}

go_cache_current all_present
need_go
mkdir -p "$BIN"
rm -f "$BIN/.stamp" "$BIN"/peer-*
STAGE="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"   # go.sum is committed: -mod=readonly suffices

start=$SECONDS
for p in "${PEERS[@]}"; do
  t=$SECONDS
  log "building peer-$p (client-go $(modver "$p" k8s.io/client-go)) ..."
  (cd "$HERE/$p" && go build -trimpath -ldflags="-s -w" -o "$STAGE/peer-$p" .) >&2
  mv -f "$STAGE/peer-$p" "$BIN/peer-$p"
  log "peer-$p built in $((SECONDS - t))s"
done
echo "$STAMP" >"$BIN/.stamp"
log "built in $((SECONDS - start))s: $BIN"
echo "$BIN"
