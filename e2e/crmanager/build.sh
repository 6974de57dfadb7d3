#!/usr/bin/env bash
# Build the controller-runtime manager of the observe-mode scenarios (main.go here) into a cache
# outside the clone, as e2e/interop/build.sh builds the client-go peers:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/crmanager-<controller-runtime>/bin/crmanager
#
# Does nothing when the binary is there and was built from the same sources (go.mod, go.sum,
# main.go). The last line of stdout is always the bin directory:
#   BIN=$(e2e/crmanager/build.sh | tail -1)
#
# Env: LEASEHOLD_E2E_CACHE (cache root), FORCE=1 (rebuild).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "crmanager/build.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../go_cache.sh"

CR="$(awk '$1 == "sigs.k8s.io/controller-runtime" && $2 ~ /^v/ { print $2; exit }' "$HERE/go.mod")"
[[ -n "$CR" ]] || { log "cannot read the controller-runtime version from go.mod"; exit 1; }

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/crmanager-$CR"
BIN="$OUT/bin"

# Bump RECIPE when the build flags change. A changed stamp rebuilds.
RECIPE=1
STAMP="recipe=$RECIPE $(cat "$HERE"/main.go "$HERE"/go.{mod,sum} | sha256sum | cut -c1-16)"

all_present() {
  [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" && -x "$BIN/crmanager" ]]
}

go_cache_current all_present
log "building crmanager (controller-runtime $CR) ..."
go_one_binary crmanager .
