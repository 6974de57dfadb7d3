#!/usr/bin/env bash
# CTest fixture of the node tier (label `node`): `start DIR` installs the node's Debian packages,
# builds the node binaries (cached outside the clone), writes the images (the leasehold image is
# the one e2e_ship_image built; pause and the test app are built here) and brings the node up;
# `stop DIR` tears it down and fails if the host differs from before the start
# (node.sh snapshot: links, netns, iptables, mounts, sysctls, cgroups, processes, host paths).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cmd=$1 dir=$2
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# others LINE: why a line of the snapshots' diff is another test's doing, not the node's; nothing
# when it is not known to be. The node tier runs beside the e2e tier (one `ctest -j`), and of the
# e2e tests only the image's build and smoke test (e2e_ship_image, scripts/image.sh) change what a
# snapshot holds; `start` and the teardown test never run beside it (both quiet locks), `stop` may.
others() {
  case "$1" in
    *" /var/lib/containers/storage/"*) echo "a mount of buildah's store: the image's build" ;;
    *" /tmp/leasehold-image-ro."*) echo "scripts/image.sh's read-only bind mount of the image's root" ;;
  esac
}

# diff_snapshots BEFORE AFTER: 0 when the two are the same but for lines `others` explains (shown
# with the reason); any other line fails, whether or not it names the node's things. No BEFORE
# fails too: a comparison with nothing proves nothing.
diff_snapshots() {
  [[ -f "$1" ]] || { echo "teardown diff: no snapshot from before the node ($1)"; return 1; }
  [[ -f "$2" ]] || { echo "teardown diff: no snapshot from after the node ($2)"; return 1; }
  local line why left=() known=()
  while IFS= read -r line; do
    why=$(others "$line")
    if [[ -n "$why" ]]; then known+=("$line    ($why)"); else left+=("$line"); fi
  done < <(diff "$1" "$2" | grep -E '^[<>]' || true)
  ((${#known[@]} == 0)) || { echo "teardown diff: other tests' changes:"; printf '%s\n' "${known[@]}"; }
  ((${#left[@]} == 0)) || { echo "teardown diff: LEFT BEHIND (< before only, > after only):"; printf '%s\n' "${left[@]}"; return 1; }
  echo "teardown diff: clean"
}

case "$cmd" in
  start)
    t=$SECONDS
    bash "$here/setup.sh"
    bin=$(nice -n 5 bash "$here/build.sh" | tail -1)
    echo "node binaries ready in $((SECONDS - t))s: $bin"
    bash "$here/node.sh" reclaim
    rm -f "$dir/before.snapshot"
    bash "$here/node.sh" snapshot "$dir/before.snapshot" "$dir"
    t=$SECONDS
    (cd "$repo" && python3 -m e2e.node.images "$dir/images")
    echo "images ready in $((SECONDS - t))s"
    t=$SECONDS
    bash "$here/node.sh" up "$dir"
    echo "node up in $((SECONDS - t))s"
    ;;
  stop)
    t=$SECONDS
    bash "$here/node.sh" down "$dir"
    bash "$here/node.sh" snapshot "$dir/after.snapshot" "$dir"
    echo "node down in $((SECONDS - t))s"
    diff_snapshots "$dir/before.snapshot" "$dir/after.snapshot"
    ;;
  diff) diff_snapshots "$dir/before.snapshot" "$dir/after.snapshot" ;;
  *) echo "usage: $0 start|stop|diff DIR" >&2; exit 2 ;;
esac
