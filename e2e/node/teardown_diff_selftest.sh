#!/usr/bin/env bash
# fixture.sh's teardown diff on made-up snapshots: any difference fails but the other tests' own
# (fixture.sh `others`), and a missing snapshot fails. Needs no node and no root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base='## ip -d link
lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
## mountinfo
  254:0 / / rw,relatime - ext4 /dev/vda rw
## cgroups
## processes'
fails=0
# case NAME WANT(pass|fail) BEFORE AFTER: AFTER "-" = no after snapshot, BEFORE "-" = no before.
case_() {
  local name=$1 want=$2 d="$tmp/$1" got=pass out
  mkdir -p "$d"
  [[ "$3" == - ]] || printf '%s\n' "$3" >"$d/before.snapshot"
  [[ "$4" == - ]] || printf '%s\n' "$4" >"$d/after.snapshot"
  out=$(bash "$here/fixture.sh" diff "$d" 2>&1) || got=fail
  if [[ $got == "$want" ]]; then echo "ok   $name"; else
    echo "FAIL $name: wanted $want, got $got:"; echo "$out"; fails=$((fails + 1)); fi
}
case_ same pass "$base" "$base"
case_ a_link_not_named_like_the_node fail "$base" "$base
dummy7: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN mode DEFAULT"
case_ the_nodes_cgroup_left fail "$base" "$base
/sys/fs/cgroup/pids/leasehold-node"
case_ something_gone fail "$base
stray: <LOOPBACK> mtu 1500" "$base"
case_ image_smoke_mount_is_another_tests pass "$base" "$base
  0:40 / /tmp/leasehold-image-ro.AbC123 ro,relatime - ext4 /dev/vda rw"
case_ the_image_mount_beside_a_node_leftover fail "$base" "$base
  0:40 / /tmp/leasehold-image-ro.AbC123 ro,relatime - ext4 /dev/vda rw
exists /var/lib/kubelet"
case_ no_before_snapshot fail - "$base"
case_ no_after_snapshot fail "$base" -
((fails == 0)) || { echo "$fails case(s) failed"; exit 1; }
echo "all cases as wanted"
