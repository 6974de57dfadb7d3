#!/usr/bin/env bash
# Helm post-renderer: adds leasehold to K8up's chart output (stdin -> stdout) with the same
# Kustomize patches as ../lease (default), ../no-lease (LEASEHOLD_VARIANT=no-lease) or
# ../observe (LEASEHOLD_VARIANT=observe: K8up keeps its own election, an observing sidecar).
#
#   helm upgrade --install k8up k8up-io/k8up -n k8up -f deploy/examples/k8up/helm/values.yaml \
#     --post-renderer deploy/examples/k8up/helm/post-render.sh
#
# It copies this example (and, for observe, deploy/components/observe-watch, at the same relative
# place) into a temporary directory, puts the chart's output where the stand-in
# chart-output/k8up.yaml was, and runs `kubectl kustomize` (or `kustomize build`).
# The patches address the Deployment `k8up` and ServiceAccount `k8up`: the names the chart
# gives them for a release called k8up (fullnameOverride: k8up keeps them for any release name).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
variant=${LEASEHOLD_VARIANT:-lease}
case "$variant" in lease | no-lease | observe) ;; *) echo "post-render.sh: LEASEHOLD_VARIANT must be lease, no-lease or observe" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# deploy/'s layout, so that observe/'s ../../../components/observe-watch resolves.
ex="$tmp/examples/k8up"
mkdir -p "$ex" "$tmp/components"
cp -r "$here/chart-output" "$here/leasehold" "$here/$variant" "$ex/"
cp -r "$here/../../components/observe-watch" "$tmp/components/"
cat >"$ex/chart-output/k8up.yaml"
if command -v kubectl >/dev/null 2>&1; then
  kubectl kustomize "$ex/$variant"
else
  kustomize build "$ex/$variant"
fi
