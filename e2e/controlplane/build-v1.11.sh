#!/usr/bin/env bash
# Build kube-apiserver v1.11.10 (the Kubernetes of OpenShift 3.11) from pinned Go modules into
# the same cache as the v1.34 control plane, under its own key:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/k8s-v1.11.10/bin/kube-apiserver
#
# Only the apiserver is built: etcd (v3.6.16) and kubectl come from build.sh, so the e2e swaps
# nothing but the server under test. Does nothing when the binary is there with the current
# stamp. The last line of stdout is the bin directory.
#
# Why this is not `go build k8s.io/kubernetes/cmd/kube-apiserver` in a module like k8s/: the
# v1.11.10 module zip has no go.mod and no vendor/ (module zips never carry one), its staging
# repositories are only inside the tree, the generated OpenAPI file is not in git, and one
# vendored codec panics at init under current Go. So the source tree is extracted into the
# cache and given the pinned go.mod/go.sum of k8s-1.11/ (see its header), then:
#   - staging/src/k8s.io/* get a one-line go.mod each (they are replace targets);
#   - the cloud providers whose modules the proxy does not serve are left out of
#     pkg/cloudprovider/providers/providers.go (the e2e uses no --cloud-provider);
#   - github.com/ugorji/go gets a unique last symbol in gen.go's base64 alphabet;
#   - the vendored openapi-gen writes pkg/generated/openapi/zz_generated.openapi.go over the
#     packages tagged +k8s:openapi-gen=, as the v1.11 Makefile did.
# Every input is pinned: the source zip's hash (SOURCE_SUM below, checked against what the go
# command verified), go.sum for every dependency, and the stamp covers go.mod, go.sum and this
# script.
#
# Env: LEASEHOLD_E2E_CACHE (cache root), FORCE=1 (rebuild), KEEP_SRC=1 (keep the extracted
# tree after the build; it is removed otherwise, ~0.2 GB).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "build-v1.11.sh: $*" >&2; }
# shellcheck source=e2e/go_cache.sh
source "$HERE/../go_cache.sh"

K8S_VERSION=v1.11.10
SOURCE_SUM="h1:wCo67+wmguioiYv0ipIiTaXbVPfFBBjOTgIngeGGG+A="
UGORJI_VERSION=v0.0.0-20170107133203-ded73eae5db7
UGORJI_SUM="h1:BPPUhSq7uU6E9lFzyb81vjwVOhiWwMXp0EpKL75NX+8="
MOD="$HERE/k8s-1.11"

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/k8s-$K8S_VERSION"
BIN="$OUT/bin"
STAMP="$(cat "$MOD/go.mod" "$MOD/go.sum" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"

present() { [[ -f "$BIN/.stamp" && "$(cat "$BIN/.stamp")" == "$STAMP" && -x "$BIN/kube-apiserver" ]]; }

go_cache_current present
need_go

start=$SECONDS
rm -f "$BIN/.stamp" "$BIN/kube-apiserver"
mkdir -p "$BIN"
SRC="$OUT/src"
STAGE="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$STAGE"; [[ "${KEEP_SRC:-0}" == 1 ]] || rm -rf "$SRC"' EXIT

export CGO_ENABLED=0 GO111MODULE=on
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

# A module's source as the go command downloaded and verified it (sum database / go.sum);
# compared with the hash pinned here so that a different zip cannot slip in.
fetch() { # MODULE VERSION WANT_SUM -> prints the module directory
  local json dir sum
  json=$(cd "$STAGE" && GOFLAGS=-mod=mod go mod download -json "$1@$2")
  dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$json")
  sum=$(sed -n 's/^\t"Sum": "\(.*\)",$/\1/p' <<<"$json")
  [[ "$sum" == "$3" ]] || { log "$1@$2: hash $sum, pinned $3"; return 1; }
  [[ -d "$dir" ]] || { log "$1@$2: no directory in: $json"; return 1; }
  echo "$dir"
}

log "source k8s.io/kubernetes@$K8S_VERSION ..."
dir=$(fetch k8s.io/kubernetes "$K8S_VERSION" "$SOURCE_SUM")
rm -rf "$SRC"
cp -r "$dir" "$SRC"
chmod -R u+w "$SRC"
# The zip's vendor/ holds only BUILD and OWNERS, but its presence alone would make the go
# command build in vendor mode; the dependencies come from go.mod/go.sum instead.
rm -rf "$SRC/vendor"
cp "$MOD/go.mod" "$SRC/"
if [[ "${UPDATE_SUM:-0}" == 1 ]]; then
  # Maintainers only, after editing k8s-1.11/go.mod: resolve and record the hashes, then
  # copy go.mod/go.sum back (the stamp then changes, and the next plain run rebuilds).
  export GOFLAGS="$GOFLAGS -mod=mod"
  trap 'cp "$SRC/go.mod" "$SRC/go.sum" "$MOD/" 2>/dev/null; rm -rf "$STAGE"; [[ "${KEEP_SRC:-0}" == 1 ]] || rm -rf "$SRC"' EXIT
else
  cp "$MOD/go.sum" "$SRC/"
  export GOFLAGS="$GOFLAGS -mod=readonly"
fi

for d in "$SRC"/staging/src/k8s.io/*/; do
  printf 'module k8s.io/%s\n' "$(basename "$d")" >"$d/go.mod"
done

sed -i -E '/providers\/(azure|cloudstack|openstack|ovirt|photon|vsphere)"/d' \
  "$SRC/pkg/cloudprovider/providers/providers.go"
grep -q 'providers/gce"' "$SRC/pkg/cloudprovider/providers/providers.go" || { log "providers.go not as expected"; exit 1; }

dir=$(fetch github.com/ugorji/go "$UGORJI_VERSION" "$UGORJI_SUM")
mkdir -p "$SRC/_patched"
cp -r "$dir" "$SRC/_patched/ugorji-go"
chmod -R u+w "$SRC/_patched/ugorji-go"
echo 'module github.com/ugorji/go' >"$SRC/_patched/ugorji-go/go.mod"
# base64.NewEncoding panics on a repeated symbol since Go 1.22; the alphabet only names
# generated identifiers (codecgen), which nothing here runs.
sed -i 's/0123456789__")/0123456789_$")/' "$SRC/_patched/ugorji-go/codec/gen.go"
grep -q '0123456789_\$")' "$SRC/_patched/ugorji-go/codec/gen.go" || { log "gen.go patch did not apply"; exit 1; }

t=$SECONDS
log "openapi-gen ..."
(cd "$SRC" && go build -trimpath -o "$STAGE/openapi-gen" k8s.io/code-generator/cmd/openapi-gen) >&2
# The packages the v1.11 Makefile fed to openapi-gen: every Go package carrying the tag, with
# staging paths as their import paths (k8s.io/<repo>/...), not test data or examples.
mapfile -t pkgs < <(cd "$SRC" && grep -rl --include='*.go' '+k8s:openapi-gen=' pkg cmd plugin staging/src/k8s.io 2>/dev/null |
  grep -vE '/(_[^/]*|testdata|examples?|sample-apiserver|sample-controller|code-generator)/' |
  xargs -n1 dirname | LC_ALL=C sort -u |
  sed -E 's#^staging/src/##; t; s#^#k8s.io/kubernetes/#')
log "openapi-gen over ${#pkgs[@]} packages"
mkdir -p "$STAGE/openapi"
(cd "$SRC" && "$STAGE/openapi-gen" --logtostderr \
  -i "$(IFS=,; echo "${pkgs[*]}")" \
  -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
  -o "$STAGE/openapi" -h hack/boilerplate/boilerplate.generatego.txt) >&2
mv "$STAGE/openapi/k8s.io/kubernetes/pkg/generated/openapi/zz_generated.openapi.go" \
  "$SRC/pkg/generated/openapi/"
log "openapi-gen done in $((SECONDS - t))s"

# /version as hack/lib/version.sh sets it (else v0.0.0-master+$Format$): the fixture checks it.
LDFLAGS="-s -w"
for pkg in k8s.io/kubernetes/pkg/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=11"
  LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
t=$SECONDS
log "building kube-apiserver $K8S_VERSION ..."
(cd "$SRC" && go build -trimpath -ldflags="$LDFLAGS" -o "$STAGE/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) >&2
log "kube-apiserver compiled in $((SECONDS - t))s"
mv -f "$STAGE/kube-apiserver" "$BIN/kube-apiserver"
echo "$STAMP" >"$BIN/.stamp"
log "built in $((SECONDS - start))s: $BIN"
echo "$BIN"
