#!/usr/bin/env bash
# Helm post-renderer: adds leasehold to K8up's chart output (stdin -> stdout) with the same
# Kustomize patches as ../lease (default) or ../no-lease (LEASEHOLD_VARIANT=no-lease).
#
#   helm upgrade --install k8up k8up-io/k8up -n k8up -f deploy/examples/k8up/helm/values.yaml \
#     --post-renderer deploy/examples/k8up/helm/post-render.sh
#
# It copies this example into a temporary directory, puts the chart's output where the
# stand-in chart-output/k8up.yaml was, and runs `kubectl kustomize` (or `kustomize build`).
# The patches address the Deployment `k8up` and ServiceAccount `k8up`: the names the chart
# gives them for a release called k8up (fullnameOverride: k8up keeps them for any release name).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
variant=${LEASEHOLD_VARIANT:-lease}
case "$variant" in lease | no-lease) ;; *) echo "post-render.sh: LEASEHOLD_VARIANT must be lease or no-lease" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$here/chart-output" "$here/leasehold" "$here/$variant" "$tmp/"
cat >"$tmp/chart-output/k8up.yaml"
if command -v kubectl >/dev/null 2>&1; then
  kubectl kustomize "$tmp/$variant"
else
  kustomize build "$tmp/$variant"
fi
