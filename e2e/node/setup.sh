#!/usr/bin/env bash
# Debian packages the one-node cluster needs (e2e/node): the container runtime, its OCI runtime,
# the CNI plugins and iptables (for kube-proxy and the node's forwarding drops). Only the node
# tier calls this; `make demo` and scripts/setup.sh never do. Idempotent: when every package is
# installed it changes nothing and does not touch the network.
#
# The containerd package ships a systemd unit but no init script; nothing here enables or starts
# a machine-wide containerd: the node's launcher (node.sh) runs its own, with its own config and
# state directories, inside the node's mount and network namespaces.
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables iproute2 util-linux procps
  python3-yaml gcc libc6-dev)  # the scenarios read kustomize output; images.py builds static C

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "node setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
