#!/usr/bin/env bash
# The node's teardown after the launcher is killed with SIGKILL at three points (node.sh's
# LEASEHOLD_NODE_DIE_AT): right after the namespaces are made (mountns), with containerd running
# and the images imported (containerd), and with the node Ready and pods running (ready). Each
# time `node.sh down` must leave the host exactly as the snapshot before (fixture.sh diff).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir=$1
mkdir -p "$dir"; dir="$(cd "$dir" && pwd)"
bash "$here/setup.sh"
nice -n 5 bash "$here/build.sh" >/dev/null
(cd "$repo" && python3 -m e2e.node.images "$dir/images" --no-leasehold)
fail=0
for stage in mountns containerd ready; do
  bash "$here/node.sh" reclaim
  rm -f "$dir/before.snapshot"
  bash "$here/node.sh" snapshot "$dir/before.snapshot" "$dir"
  t=$SECONDS rc=0
  LEASEHOLD_NODE_DIE_AT=$stage bash "$here/node.sh" up "$dir" || rc=$?
  [[ $rc == 137 ]] || { echo "up did not die at $stage (exit $rc)"; fail=1; }
  if [[ $stage == ready ]]; then
    kc() { bash "$here/node.sh" kubectl "$dir" "$@"; }
    kc apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: pauses, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: pauses}}
  template:
    metadata: {labels: {app: pauses}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - {name: p, image: "leasehold.local/lhapp:1", imagePullPolicy: Never, args: [gated]}
YAML
    kc wait --for=condition=Available deployment/pauses --timeout=120s
    kc get pods -o wide
  fi
  echo "== SIGKILL at $stage after $((SECONDS - t))s; down"
  t=$SECONDS
  bash "$here/node.sh" down "$dir"
  bash "$here/node.sh" snapshot "$dir/after.snapshot" "$dir"
  echo "down took $((SECONDS - t))s"
  bash "$here/fixture.sh" diff "$dir" || fail=1
done
exit $fail
